"""Liu et al.'s Table 2 on our models: the paper's rows read at the same distance from the top,
the best BLEU-1 over shifted runs only, m-BERT's published value beside ours."""

import pytest

from xling.report.liu_translation import (
    figure7_8,
    paper_table2,
    paper_table3,
    table2_rows,
    token_set_rows,
    write_table2,
)


def scores(src, tgt, layers, best_at):
    out = [{"src": src, "tgt": tgt, "layer": layers, "alpha": 0.0, "convert_rate": 0.0, "bleu1": 50.0}]
    for layer in range(1, layers + 1):
        for alpha in (1.0, 2.0, 3.0):
            out.append({"src": src, "tgt": tgt, "layer": layer, "alpha": alpha,
                        "convert_rate": layer / 10 + alpha / 100,
                        "bleu1": 30.0 if (layer, alpha) == best_at else float(layer)})
    return out


def test_paper_table2_is_read():
    paper = paper_table2()
    assert paper[("best BLEU-1", "en-zh")] == 23.21 and paper[("convert rate (layer=10 alpha=3)", "el-en")] == 0.997


def test_rows_of_an_eight_layer_model():
    res = {"model": "mlm_full", "size": 100,
           "scores": scores("en", "fr", 8, best_at=(3, 2.0)) + scores("en", "ru", 8, (8, 1.0))}
    rows = {(r["direction"], r["row"]): r for r in table2_rows([res], layers=8)}
    top = rows[("en-fr", "BLEU-1 (layer=11 alpha=3)")]
    assert top["our_layer"] == 7 and top["ours"] == 7.0 and top["paper"] == 12.18  # 8 - (12 - 11)
    cr = rows[("en-fr", "convert rate (layer=10 alpha=2)")]
    assert cr["our_layer"] == 6 and cr["ours"] == pytest.approx(0.62) and cr["paper"] == 0.757
    # the unshifted run (BLEU-1 50) is not a candidate for "best"
    assert rows[("en-fr", "best BLEU-1")]["ours"] == 30.0 and rows[("en-fr", "best layer")]["ours"] == 3
    assert rows[("en-fr", "best alpha")]["ours"] == 2.0 and rows[("en-fr", "BLEU-1 without shift")]["ours"] == 50.0
    assert rows[("en-ru", "best BLEU-1")]["paper"] is None  # not a direction of the paper


def test_table_and_figure_files(tmp_path):
    res = {"model": "mlm_full", "size": 100,
           "scores": scores("en", "fr", 4, (2, 3.0)) + scores("fr", "en", 4, (1, 1.0))}
    rows = table2_rows([res], layers=4)
    write_table2(rows, {"mlm_full": "MLM"}, tmp_path / "t.md", tmp_path / "t.csv", note="testbed")
    md = (tmp_path / "t.md").read_text()
    assert "## MLM, 100 sentences per language" in md and "| en-fr | fr-en |" in md and "(12.18)" in md
    figure7_8(res, "en-fr", tmp_path / "f.png", tmp_path / "f.pdf")
    assert (tmp_path / "f.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="no scores for en-de"):
        figure7_8(res, "en-de", tmp_path / "g.png", tmp_path / "g.pdf")


def test_mbert_is_read_at_its_own_layers_beside_our_models(tmp_path):
    """m-BERT's result (size None, 12 layers) is read at layers 11 and 10 in the same table as an
    8-layer model of ours, read at 7 and 6."""
    ours = {"model": "mlm_full", "size": 100, "layers": 8, "scores": scores("en", "fr", 8, (3, 2.0))}
    mbert = {"model": "mbert", "size": None, "layers": 12, "scores": scores("en", "fr", 12, (11, 3.0))}
    rows = table2_rows([ours, mbert], layers=8)
    top = {r["model"]: r for r in rows if r["row"] == "BLEU-1 (layer=11 alpha=3)"}
    assert top["mlm_full"]["our_layer"] == 7 and top["mbert"]["our_layer"] == 11 and top["mbert"]["ours"] == 30.0
    assert {r["size"] for r in rows if r["model"] == "mbert"} == {None}
    write_table2(rows, {"mlm_full": "MLM", "mbert": "m-BERT"}, tmp_path / "t.md", tmp_path / "t.csv")
    md = (tmp_path / "t.md").read_text()
    assert "## MLM, 100 sentences per language" in md and "## m-BERT, as released" in md


def test_token_sets_are_printed_beside_table3(tmp_path):
    """The sizes of the sets a result's convert rates used, |V_lang| and |V_en ∩ V_lang|, each
    beside the paper's Table 3 (en's overlap is its own size)."""
    assert paper_table3()[("|V_lang|", "en")] == 9140 and paper_table3()[("|V_en ∩ V_lang|", "de")] == 3230
    runs = scores("en", "de", 4, (2, 3.0)) + scores("en", "ru", 4, (1, 1.0)) + scores("de", "en", 4, (1, 1.0))
    res = {"model": "mlm_full", "size": 100, "layers": 4, "token_sets": "evaluated", "scores": runs,
           "vocab_sizes": {"en": 500, "de": 450, "ru": 300}, "vocab_overlap": {"en-de": 120, "de-en": 120, "en-ru": 7}}
    sets = {(r["row"], r["direction"]): r for r in token_set_rows([res])}
    assert len(sets) == 2 * 3
    assert sets[("|V_lang|", "de")]["ours"] == 450 and sets[("|V_lang|", "de")]["paper"] == 9212
    assert sets[("|V_en ∩ V_lang|", "de")]["ours"] == 120 and sets[("|V_en ∩ V_lang|", "de")]["paper"] == 3230
    assert sets[("|V_en ∩ V_lang|", "en")]["ours"] == 500 and sets[("|V_en ∩ V_lang|", "ru")]["paper"] is None
    write_table2(table2_rows([res], layers=4), {"mlm_full": "MLM"}, tmp_path / "t.md", tmp_path / "t.csv",
                 token_sets=list(sets.values()))
    md = (tmp_path / "t.md").read_text()
    assert "Token sets (Table 3): the evaluated parallel rows' pieces" in md
    assert r"| \|V_lang\| | 500 (9140) | 450 (9212) | 300 |" in md
    assert r"| \|V_en ∩ V_lang\| | 500 (9140) | 120 (3230) | 7 |" in md
    assert "mlm_full,100,de,|V_lang|,,450,9212" in (tmp_path / "t.csv").read_text()
    assert token_set_rows([{k: v for k, v in res.items() if not k.startswith("vocab")}]) == []
