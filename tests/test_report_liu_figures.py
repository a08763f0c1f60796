"""Liu et al.'s retrieval figure and CSV: the MLM layer best on average, chance per language."""

import csv

import pytest

from xling.report.liu_figures import panel_values, retrieval_figure, retrieval_rows, write_retrieval_csv


def result(model, size, fr, ru):
    return {"model": model, "size": size, "languages": {
        "fr": {"mrr": fr, "pairs": 10, "candidates": 2, "identical_pairs": 3},
        "ru": {"mrr": ru, "pairs": 8, "candidates": 1, "identical_pairs": 0}}}


def test_rows_take_the_layer_best_on_average_and_keep_the_last():
    rows = retrieval_rows([result("mlm_full", 100, [0.1, 0.5, 0.2], [0.3, 0.2, 0.4]),
                           result("glove", 100, [0.6], [0.1])])
    mlm = {r["language"]: r for r in rows if r["model"] == "mlm_full"}
    # layer means 0.2, 0.35, 0.3: layer 1, although ru alone is best at layer 2
    assert mlm["fr"]["layer"] == 1 and mlm["fr"]["mrr"] == 0.5 and mlm["ru"]["mrr"] == 0.2
    assert mlm["ru"]["mrr_last_layer"] == 0.4
    assert mlm["fr"]["chance"] == 0.75 and mlm["ru"]["chance"] == 1.0 and mlm["fr"]["identical_pairs"] == 3
    glove = [r for r in rows if r["model"] == "glove"]
    assert [r["layer"] for r in glove] == [None, None] and glove[0]["mrr"] == 0.6


def test_csv_and_figure_are_written(tmp_path):
    rows = retrieval_rows([result("mlm_full", n, [0.1, 0.5], [0.3, 0.2]) for n in (100, 500)]
                          + [result("word2vec", n, [0.2], [0.1]) for n in (100, 500)])
    write_retrieval_csv(rows, tmp_path / "r.csv")
    read = list(csv.DictReader(open(tmp_path / "r.csv")))
    assert len(read) == 8 and read[0]["size"] == "100" and read[-1]["layer"] == ""
    retrieval_figure(rows, {"mlm_full": "MLM"}, tmp_path / "r.png", tmp_path / "r.pdf", title="t")
    assert (tmp_path / "r.png").stat().st_size > 1000 and (tmp_path / "r.pdf").stat().st_size > 1000
    with pytest.raises(ValueError, match="at least one result"):
        retrieval_figure([], {}, tmp_path / "x.png", tmp_path / "x.pdf")
    with pytest.raises(ValueError, match="without 'size'"):
        retrieval_rows([{"model": "x", "languages": {}}])


def test_mbert_as_released_joins_every_size(tmp_path):
    """m-BERT's retrieval (size None, the paper's "Google BERT") is a row of its own in the CSV and
    a bar in the panel of every data size."""
    ours = [result("mlm_full", n, [0.1, 0.5], [0.3, 0.2]) for n in (100, 500)]
    mbert = result("mbert", None, [0.2, 0.9, 0.4], [0.1, 0.7, 0.3])
    rows = retrieval_rows(ours + [mbert])
    bert = {r["language"]: r for r in rows if r["model"] == "mbert"}
    assert set(bert) == {"fr", "ru"} and bert["fr"]["size"] is None and bert["fr"]["layer"] == 1
    assert bert["fr"]["mrr"] == 0.9 and bert["ru"]["mrr_last_layer"] == 0.3
    write_retrieval_csv(rows, tmp_path / "r.csv")
    read = [r for r in csv.DictReader(open(tmp_path / "r.csv")) if r["model"] == "mbert"]
    assert [r["size"] for r in read] == ["", ""]
    panels = panel_values(rows)
    assert {size for size, _, _ in panels} == {100, 500}
    assert all(panels[(size, "mbert", "fr")] == 0.9 and panels[(size, "mbert", "ru")] == 0.7 for size in (100, 500))
    assert panels[(500, "mlm_full", "fr")] == 0.5
    alone = panel_values([r for r in rows if r["model"] == "mbert"])
    assert set(alone) == {(None, "mbert", "fr"), (None, "mbert", "ru")}
    retrieval_figure(rows, {"mbert": "m-BERT"}, tmp_path / "r.png", tmp_path / "r.pdf")
    assert (tmp_path / "r.png").stat().st_size > 1000
