"""The XNLI / Table 4 report of the study's models: rows beside m-BERT's published values, the
shift's gain as test with it minus test without, the table and the figure written."""

from xling.report.liu_xnli import paper_table4, write_table4, xnli_figure, xnli_rows


def result(model, size, fr_test, fr_mds, alpha):
    return {"model": model, "size": size, "languages": {
        "en": {"dev": 70.0, "test": 71.0, "alpha": 0.0, "mds_dev": 70.0, "mds_test": 71.0},
        "fr": {"dev": 50.0, "test": fr_test, "alpha": alpha, "mds_dev": 52.0, "mds_test": fr_mds}}}


def test_rows_set_ours_beside_the_published_table(tmp_path):
    paper = paper_table4()
    assert paper["shifting weight"]["zh"] == 2.0 and paper["finetune last 6 layers"]["fr"] == 72.95
    rows = xnli_rows([result("mlm_full", 2500, 48.0, 49.5, 0.7), result("mlm_w20", 2500, 45.0, 45.0, 0.0)])
    fr = next(r for r in rows if r["model"] == "mlm_full" and r["language"] == "fr")
    assert fr["mds_gain"] == 1.5 and fr["paper_mds"] == 72.42 and fr["paper_alpha"] == 0.7
    md, csv_path = tmp_path / "t4.md", tmp_path / "t4.csv"
    write_table4(rows, {"mlm_full": "MLM", "mlm_w20": "MLM, 20-token windows"}, md, csv_path, note="demo")
    text = md.read_text()
    assert "## MLM, 2,500 sentences per language" in text and "## MLM, 20-token windows" in text
    # the shift's gain beside m-BERT's (72.42 - 72.95 = -0.53 for fr)
    assert "| MDS gain | +0.00 | +1.50 (-0.53) |" in text
    assert csv_path.read_text().splitlines()[0].startswith("model,size,language,dev,test,alpha")
    xnli_figure(rows, {}, tmp_path / "x.png", tmp_path / "x.pdf", title="demo")
    assert (tmp_path / "x.png").stat().st_size > 0 and (tmp_path / "x.pdf").stat().st_size > 0


def test_the_all_layers_row_appears_when_every_language_has_it(tmp_path):
    with_all = result("mlm_full", 2500, 48.0, 49.5, 0.7)
    with_all["languages"]["en"]["all_layers_test"], with_all["languages"]["fr"]["all_layers_test"] = 72.0, 44.0
    rows = xnli_rows([with_all])
    assert next(r for r in rows if r["language"] == "fr")["paper_all"] == 70.42
    write_table4(rows, {}, tmp_path / "a.md", tmp_path / "a.csv")
    assert "| all layers fine-tuned | 72.00 (80.86) | 44.00 (70.42) |" in (tmp_path / "a.md").read_text()
    write_table4(xnli_rows([result("mlm_full", 2500, 48.0, 49.5, 0.7)]), {}, tmp_path / "b.md", tmp_path / "b.csv")
    assert "all layers" not in (tmp_path / "b.md").read_text().split("## ", 1)[1]


def test_a_static_model_has_its_accuracy_row_only(tmp_path):
    static = {"model": "glove", "size": 2500, "languages": {"en": {"dev": 60.0, "test": 61.0},
                                                           "fr": {"dev": 40.0, "test": 41.5}}}
    rows = xnli_rows([result("mlm_full", 2500, 48.0, 49.5, 0.7), static])
    glove = [r for r in rows if r["model"] == "glove"]
    assert all(r["mds_test"] is None and r["mds_gain"] is None for r in glove)
    write_table4(rows, {"glove": "GloVe"}, tmp_path / "t.md", tmp_path / "t.csv")
    section = (tmp_path / "t.md").read_text().split("## GloVe, 2,500 sentences per language", 1)[1]
    assert "| BiLSTM-max on the fixed vectors | 61.00 | 41.50 |" in section and "MDS" not in section
    xnli_figure(rows, {}, tmp_path / "x.png", tmp_path / "x.pdf")  # bars of both kinds


def test_mbert_rows_are_in_the_table_not_the_figure(tmp_path):
    mbert = result("mbert", None, 70.0, 71.0, 1.0)
    rows = xnli_rows([result("mlm_full", 2500, 48.0, 49.5, 0.7), mbert])
    assert {r["size"] for r in rows if r["model"] == "mbert"} == {None}
    write_table4(rows, {"mbert": "m-BERT"}, tmp_path / "t.md", tmp_path / "t.csv")
    assert "## m-BERT, as released" in (tmp_path / "t.md").read_text()
    xnli_figure(rows, {}, tmp_path / "x.png", tmp_path / "x.pdf")
    assert (tmp_path / "x.png").stat().st_size > 0
