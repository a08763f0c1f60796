"""Figures 6 and 7 and their Markdown tables, from hand-made analysis results."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest

from xling.report.analysis_figures import (
    analysis_tables_md,
    check_figure7,
    cka_grid,
    cka_retrieval_correlation,
    figure6,
    figure7,
    layer_average,
    pearson,
)

LAYERS = list(range(9))  # L0 (embeddings) .. L8
RNG = np.random.default_rng(0)


def _fig6(pair: str, source: str) -> dict:
    return {"pair": pair, "source": source, "target": "en", "layers": LAYERS,
            "p_at_1": [float(v) for v in RNG.uniform(0, 100, len(LAYERS))], "n_train": 5000, "n_test": 1500}


def _fig7(pair: str, bilingual: bool = True) -> dict:
    def vals():
        return [float(v) for v in RNG.uniform(0, 1, len(LAYERS))]
    return {"pair": pair, "layers": LAYERS,
            "cka": {"monolingual": vals(), "bilingual": vals() if bilingual else None, "random": vals()},
            "n": 1000}


@pytest.fixture()
def fig6():
    # deliberately out of paper order: rendering must put en-fr before en-zh
    return [_fig6("en-zh", "zh"), _fig6("en-fr", "fr")]


@pytest.fixture()
def fig7():
    return [_fig7("en-ru"), _fig7("en-en_prime"), _fig7("en-zh", bilingual=False)]


def _rows(md: str, section: str | None = None) -> dict[str, list[str]]:
    """First-column label -> cells, for the table following ``section`` (or the first table)."""
    text = md if section is None else md[md.index(section):]
    table = re.search(r"((?:^\|.*\|\n)+)", text, re.M).group(1).splitlines()
    out = {}
    for line in table[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        out[cells[0]] = cells[1:]
    out["_head"] = [c.strip() for c in table[0].strip("|").split("|")][1:]
    return out


def _check_files(png, pdf):
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pdf.read_bytes()[:5] == b"%PDF-"
    assert len(png.read_bytes()) > 1000 and len(pdf.read_bytes()) > 1000


def test_figures_written_and_reproducible(fig6, fig7, tmp_path):
    paths = {n: tmp_path / "out" / n for n in ("f6.png", "f6.pdf", "f7.png", "f7.pdf")}
    figure6(fig6, paths["f6.png"], paths["f6.pdf"], title="(synthetic testbed)")
    figure7(fig7, paths["f7.png"], paths["f7.pdf"], title="(synthetic testbed)")
    _check_files(paths["f6.png"], paths["f6.pdf"])
    _check_files(paths["f7.png"], paths["f7.pdf"])  # bilingual null for en-zh renders
    before = {n: p.read_bytes() for n, p in paths.items()}
    figure6(fig6, paths["f6.png"], paths["f6.pdf"], title="(synthetic testbed)")
    figure7(fig7, paths["f7.png"], paths["f7.pdf"], title="(synthetic testbed)")
    assert {n: p.read_bytes() for n, p in paths.items()} == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(paths)  # no temp files left


def test_figure7_values_change_the_image(fig7, tmp_path):
    figure7(fig7, tmp_path / "a.png", tmp_path / "a.pdf")
    other = copy.deepcopy(fig7)
    other[0]["cka"]["monolingual"][3] = 1.0 - other[0]["cka"]["monolingual"][3]
    figure7(other, tmp_path / "b.png", tmp_path / "b.pdf")
    assert (tmp_path / "a.png").read_bytes() != (tmp_path / "b.png").read_bytes()


def test_figure7_single_kind_and_missing_layer(tmp_path):
    r = _fig7("en-fr", bilingual=False)
    r["cka"]["random"] = None
    r["cka"]["monolingual"][2] = None
    figure7([r], tmp_path / "f.png", tmp_path / "f.pdf")
    _check_files(tmp_path / "f.png", tmp_path / "f.pdf")
    md = analysis_tables_md([], [r])
    assert "**Bilingual**" not in md and "**Random**" not in md
    rows = _rows(md, "**Monolingual**")
    assert rows["L2"] == ["–"] and rows["Average"] == ["–"]  # a partial mean would mislead
    assert rows["L3"] == [f"{r['cka']['monolingual'][3]:.2f}"]


def test_figure6_missing_layer_rendered(fig6, tmp_path):
    fig6[0]["p_at_1"][4] = None
    figure6(fig6, tmp_path / "f.png", tmp_path / "f.pdf")
    _check_files(tmp_path / "f.png", tmp_path / "f.pdf")
    rows = _rows(analysis_tables_md(fig6, []))
    assert rows["L4"][1] == "–"  # en-zh is the second column in paper order


def test_p_at_1_table(fig6):
    md = analysis_tables_md(fig6, [])
    rows = _rows(md)
    assert rows["_head"] == ["en-fr (fr→en)", "en-zh (zh→en)"]  # paper order, not input order
    by_pair = {r["pair"]: r for r in fig6}
    for layer in LAYERS:
        assert rows[f"L{layer}"] == [f"{by_pair[p]['p_at_1'][layer]:.1f}" for p in ("en-fr", "en-zh")]
    assert "5000 train / 1500 test" in md


def test_cka_tables(fig7):
    md = analysis_tables_md([], fig7)
    by_pair = {r["pair"]: r for r in fig7}
    order = ["en-en_prime", "en-ru", "en-zh"]
    for kind in ("monolingual", "bilingual", "random"):
        rows = _rows(md, f"**{kind.capitalize()}**")
        assert rows["_head"] == ["en-en′", "en-ru", "en-zh"]
        for p, col in zip(order, range(3)):
            vals = by_pair[p]["cka"][kind]
            if vals is None:
                assert all(rows[f"L{layer}"][col] == "–" for layer in LAYERS)
                assert rows["Average"][col] == "–"
                continue
            for layer in LAYERS:
                assert rows[f"L{layer}"][col] == f"{vals[layer]:.2f}"
            assert rows["Average"][col] == f"{np.mean(vals):.2f}"
    assert list(_rows(md, "**Monolingual**"))[:-1] == [f"L{x}" for x in LAYERS] + ["Average"]


def test_cka_length_controlled_and_drift_tables(fig7):
    """Beside the paper's CKA: the length-controlled averages of each kind, and how far each trained
    model moved from its start; results from before either have neither table."""
    before = analysis_tables_md([], fig7)
    assert "Length-controlled" not in before and "initial weights" not in before
    for r in fig7:
        r["length_controlled"] = {"cka": {k: None if v is None else [x / 2 for x in v] for k, v in r["cka"].items()}}
        r["drift"] = {"monolingual": [0.05, 0.075], "bilingual": [0.1, 0.1] if r["cka"]["bilingual"] else None,
                      "random": [None, None]}
    md = analysis_tables_md([], fig7)
    rows = _rows(md, "**Length-controlled CKA**")
    ru = next(r for r in fig7 if r["pair"] == "en-ru")
    col = rows["_head"].index("en-ru")
    assert rows["Random, paper's CKA"][col] == f"{np.mean(ru['cka']['random']):.2f}"
    assert rows["Random, length-controlled"][col] == f"{np.mean(ru['cka']['random']) / 2:.2f}"
    drift = _rows(md, "**Distance from the initial weights**")
    assert drift["Monolingual source"] == ["5.0%"] * 3 and drift["Monolingual target"] == ["7.5%"] * 3
    assert drift["Bilingual model"][drift["_head"].index("en-zh")] == "–"


def test_both_sections_together(fig6, fig7):
    md = analysis_tables_md(fig6, fig7)
    assert md.index("P@1") < md.index("**Monolingual**")
    with pytest.raises(ValueError, match="neither"):
        analysis_tables_md([], [])


def test_pearson_definition():
    xs, ys = [1.0, 2.0, 3.0, 5.0], [2.0, 1.0, 4.0, 3.0]
    mx, my = np.mean(xs), np.mean(ys)
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    expected = cov / np.sqrt(sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))
    assert pearson(xs, ys) == pytest.approx(expected)
    assert pearson(xs, [2 * x + 1 for x in xs]) == pytest.approx(1.0)
    assert pearson(xs, [-x for x in xs]) == pytest.approx(-1.0)
    assert pearson([1, 1, 1], [1, 2, 3]) is None and pearson([1, 2], [3, 4]) is None


def test_cka_retrieval_correlation_per_pair():
    """Computed on the monolingual CKA and the aligned P@1 of the same layers; pairs without both
    results (en-en' has no retrieval) and layers missing on one side are left out."""
    cka = [0.9, 0.8, 0.7, 0.65, 0.6, 0.55, 0.5, 0.45, 0.4]
    fr6 = {**_fig6("en-fr", "fr"), "p_at_1": [100 * c - 20 for c in cka]}
    zh6 = {**_fig6("en-zh", "zh"), "p_at_1": [50.0, None] + [10 * c for c in reversed(cka[2:])]}
    fr7, zh7 = _fig7("en-fr"), _fig7("en-zh")
    fr7["cka"]["monolingual"] = cka
    zh7["cka"]["monolingual"] = cka
    rows = cka_retrieval_correlation([zh6, fr6], [fr7, zh7, _fig7("en-en_prime")])
    assert [(p, n) for p, _, n in rows] == [("en-fr", 9), ("en-zh", 8)]
    assert rows[0][1] == pytest.approx(1.0)
    assert rows[1][1] == pytest.approx(pearson([cka[0]] + cka[2:], [50.0] + [10 * c for c in reversed(cka[2:])]))
    md = analysis_tables_md([fr6, zh6], [fr7, zh7])
    assert "over 0.9 for every pair" in md and _rows(md, "Pearson")["r"][0] == "1.00"


def test_layer_average_and_grid():
    vals = [float(v) for v in RNG.uniform(0, 1, 9)]
    assert layer_average(vals) == pytest.approx(sum(vals) / 9)
    assert layer_average([0.5, None]) is None and layer_average(None) is None
    results = check_figure7([_fig7("en-fr"), _fig7("en-de", bilingual=False)])
    grid = cka_grid(results, "bilingual")
    assert len(grid) == len(LAYERS) + 1 and all(len(row) == 2 for row in grid)
    assert [r["pair"] for r in results] == ["en-fr", "en-de"]
    bil = results[0]["cka"]["bilingual"]
    assert [row[0] for row in grid] == [*bil, pytest.approx(np.mean(bil))]
    assert all(row[1] is None for row in grid)


@pytest.mark.parametrize("mutate, pattern", [
    (lambda r: r.pop("n_test"), r"'en-fr'.*n_test"),
    (lambda r: r.pop("pair"), r"missing key.*pair"),
    (lambda r: r["p_at_1"].pop(), r"'en-fr'.*p_at_1.*\(9\).*length 8"),
    (lambda r: r.__setitem__("p_at_1", r["p_at_1"] + [1.0]), r"'en-fr'.*p_at_1.*length 10"),
    (lambda r: r["p_at_1"].__setitem__(0, "n/a"), r"'en-fr'.*p_at_1.*non-numeric"),
    (lambda r: r["p_at_1"].__setitem__(0, 101.0), r"'en-fr'.*p_at_1.*outside"),
    (lambda r: r.__setitem__("layers", [0, 2, 1, 3, 4, 5, 6, 7, 8]), r"'en-fr'.*layers"),
    (lambda r: r.__setitem__("n_train", -1), r"'en-fr'.*n_train"),
])
def test_figure6_validation(mutate, pattern, tmp_path):
    r = _fig6("en-fr", "fr")
    mutate(r)
    with pytest.raises(ValueError, match=pattern):
        figure6([r], tmp_path / "f.png", tmp_path / "f.pdf")
    with pytest.raises(ValueError, match=pattern):
        analysis_tables_md([r], [])
    assert not list(tmp_path.iterdir())  # nothing written on bad input


@pytest.mark.parametrize("mutate, pattern", [
    (lambda r: r.pop("n"), r"'en-de'.*\bn\b"),
    (lambda r: r.pop("cka"), r"'en-de'.*cka"),
    (lambda r: r["cka"].pop("random"), r"'en-de'.*cka.*missing \['random'\]"),
    (lambda r: r["cka"].__setitem__("bilingal", None), r"'en-de'.*cka.*unknown \['bilingal'\]"),
    (lambda r: r["cka"]["bilingual"].pop(), r"'en-de'.*cka\.bilingual.*length 8"),
    (lambda r: r["cka"].__setitem__("monolingual", 0.5), r"'en-de'.*cka\.monolingual.*float"),
    (lambda r: r["cka"]["random"].__setitem__(1, float("nan")), r"'en-de'.*cka\.random"),
])
def test_figure7_validation(mutate, pattern, tmp_path):
    r = _fig7("en-de")
    mutate(r)
    with pytest.raises(ValueError, match=pattern):
        figure7([r], tmp_path / "f.png", tmp_path / "f.pdf")
    with pytest.raises(ValueError, match=pattern):
        analysis_tables_md([], [r])
    assert not list(tmp_path.iterdir())


def test_figure7_pairs_must_share_layers_and_be_unique(tmp_path):
    short = _fig7("en-ru")
    short["layers"] = LAYERS[:4]
    short["cka"] = {k: v[:4] for k, v in short["cka"].items()}
    with pytest.raises(ValueError, match="'en-ru'.*layers"):
        figure7([_fig7("en-fr"), short], tmp_path / "f.png", tmp_path / "f.pdf")
    with pytest.raises(ValueError, match="'en-fr'.*more than once"):
        analysis_tables_md([], [_fig7("en-fr"), _fig7("en-fr")])
    with pytest.raises(ValueError, match="at least one"):
        figure6([], tmp_path / "f.png", tmp_path / "f.pdf")
