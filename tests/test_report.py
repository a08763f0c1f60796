"""Report on a directory of hand-written result.json files: expected numbers computed by hand."""

from __future__ import annotations

import csv
import json

import pytest

from xling.errors import InputError
from xling.report import build_report
from xling.report.aggregate import Aggregate, build_table1, top_k_mean
from xling.report.render import fmt_delta, interval_note, published_table1

SETTINGS = ["default", "no_anchors", "sep_l1_6"]
LABELS = {"default": "Default", "no_anchors": "No anchors", "sep_l1_6": "Sep L1-6"}
PAIRS = ["en-fr", "en-ru"]
TASKS = ["xnli", "ner"]

# (setting, pair, task): [(en_dev, tgt_test), ...]
CELLS = {
    ("default", "en-fr", "xnli"): [(80, 70), (82, 72), (79, 90)],  # best two by dev: 72, 70 -> 71.0
    ("default", "en-ru", "xnli"): [(70, 60), (75, 64), (72, 62)],  # 64, 62 -> 63.0; Default avg 67.0
    ("no_anchors", "en-fr", "xnli"): [(81, 69), (78, 50)],  # 59.5
    ("no_anchors", "en-ru", "xnli"): [(70, 62.5)],  # one cell only -> 62.5; avg 61.0 -> delta -6.0
    ("sep_l1_6", "en-fr", "xnli"): [(60, 33.3), (61, 35.1)],  # 34.2; ru missing -> delta missing
    ("default", "en-fr", "ner"): [(90, 55.5), (91, 56.5)],  # 56.0
    ("default", "en-ru", "ner"): [(90, 40)],  # 40.0
}


@pytest.fixture()
def finetune_dir(tmp_path):
    root = tmp_path / "finetune"
    for (setting, pair, task), cells in CELLS.items():
        for i, (dev, test) in enumerate(cells):
            p = root / setting / pair / "seed1" / task / f"bs{i}_lr1e-05" / "seed1" / "result.json"
            p.parent.mkdir(parents=True)
            p.write_text(json.dumps({"en_dev": dev, "tgt_test": test, "task": task}), encoding="utf-8")
    return root


def test_top_k_mean_definition():
    assert top_k_mean([(1, 10), (3, 30), (2, 20)], 2) == pytest.approx(25)
    assert top_k_mean([(1, 10)], 2) == pytest.approx(10)
    assert top_k_mean([], 2) is None


def test_report_tables(finetune_dir, tmp_path):
    out = tmp_path / "report"
    build_report(finetune_dir, out, SETTINGS, LABELS, PAIRS, TASKS, top_k=2, note="(synthetic testbed)")
    md = (out / "table1.md").read_text(encoding="utf-8")
    assert "| Default | 71.0 | 63.0 | 0.0 | 56.0 | 40.0 | 0.0 |" in md
    assert "| No anchors | 59.5 | 62.5 | -6.0 | – | – | – |" in md
    assert "| Sep L1-6 | 34.2 | – | – | – | – | – |" in md
    assert md.index("| Default") < md.index("| No anchors") < md.index("| Sep L1-6")  # config order
    assert "synthetic testbed" in md

    rows = list(csv.DictReader((out / "table1.csv").open(encoding="utf-8")))
    assert [r["model"] for r in rows] == ["Default", "No anchors", "Sep L1-6"]
    assert float(rows[1]["xnli_delta"]) == pytest.approx(-6.0)
    assert rows[2]["xnli_ru"] == "" and rows[2]["xnli_delta"] == ""

    tex = (out / "table1.tex").read_text(encoding="utf-8")
    assert r"Default & 71.0 & 63.0 & 0.0 & 56.0 & 40.0 & 0.0 \\" in tex
    assert r"\begin{tabular}" in tex and r"\end{tabular}" in tex

    pub = published_table1()
    comp = {(r["setting"], r["task"], r["column"]): r
            for r in csv.DictReader((out / "table1_vs_paper.csv").open(encoding="utf-8"))}
    r = comp[("default", "xnli", "fr")]
    assert float(r["published"]) == pytest.approx(pub["Default"]["xnli_fr"])
    assert float(r["difference"]) == pytest.approx(71.0 - pub["Default"]["xnli_fr"])
    r = comp[("no_anchors", "xnli", "delta")]
    assert float(r["difference"]) == pytest.approx(-6.0 - pub["No anchors"]["xnli_delta"])
    assert comp[("sep_l1_6", "xnli", "ru")]["reproduced"] == ""  # missing stays missing
    assert comp[("sep_l1_6", "xnli", "ru")]["difference"] == ""
    vs_md = (out / "table1_vs_paper.md").read_text(encoding="utf-8")
    assert f"| Default | 71.0 / {pub['Default']['xnli_fr']:.1f} ({71.0 - pub['Default']['xnli_fr']:+.1f})" in vs_md

    for name in ("figure3.png", "figure3.pdf"):
        data = (out / name).read_bytes()
        assert len(data) > 1000
    assert (out / "figure3.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "figure3.pdf").read_bytes()[:5] == b"%PDF-"

    # Regenerating gives identical files.
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    build_report(finetune_dir, out, SETTINGS, LABELS, PAIRS, TASKS, top_k=2, note="(synthetic testbed)")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_top_1_changes_the_selection(finetune_dir, tmp_path):
    build_report(finetune_dir, tmp_path, SETTINGS, LABELS, PAIRS, TASKS, top_k=1)
    md = (tmp_path / "table1.md").read_text(encoding="utf-8")
    # default xnli: best-dev cells only: fr 72, ru 64
    assert "| Default | 72.0 | 64.0 | 0.0 |" in md


def test_delta_format():
    assert fmt_delta(1.84) == "+1.8" and fmt_delta(-22.6) == "-22.6" and fmt_delta(-0.02) == "0.0"
    assert fmt_delta(None) == "–"


def test_published_copy_matches_reference():
    pub = published_table1()
    assert len(pub) == 10 and pub["Sep Emb + L1-6"]["ner_zh"] == pytest.approx(1.0)


def test_bad_result_names_file(finetune_dir, tmp_path):
    bad = finetune_dir / "default" / "en-fr" / "seed1" / "xnli" / "bs9" / "seed1" / "result.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"en_dev": "n/a", "tgt_test": 1}', encoding="utf-8")
    with pytest.raises(InputError, match="result.json.*en_dev"):
        build_report(finetune_dir, tmp_path / "r", SETTINGS, LABELS, PAIRS, TASKS)


def test_report_workflow_script(finetune_dir, tmp_path):
    """workflow/scripts/report.py with the objects Snakemake injects."""
    import runpy
    from pathlib import Path
    from types import SimpleNamespace

    from snakemake.iocontainers import Namedlist

    out = tmp_path / "report"
    names = ["table1_md", "table1_csv", "table1_tex", "vs_md", "vs_csv", "fig_png", "fig_pdf", "fig_csv"]
    files = ["table1.md", "table1.csv", "table1.tex", "table1_vs_paper.md", "table1_vs_paper.csv",
             "figure3.png", "figure3.pdf", "figure3.csv"]
    sm = SimpleNamespace(
        input=Namedlist(fromdict={"results": [str(p) for p in sorted(finetune_dir.glob("*/*/*/*/*/*/result.json"))]}),
        output=Namedlist(fromdict={n: str(out / f) for n, f in zip(names, files)}),
        params=Namedlist(fromdict={"settings": SETTINGS, "labels": LABELS, "pairs": PAIRS, "tasks": TASKS,
                                   "top_k": 2, "baseline": "default", "source": "en", "note": "",
                                   "unavailable": {"ner": {}}}),
        log=[str(tmp_path / "report.log")], rule="report",
    )
    script = Path(__file__).resolve().parents[1] / "workflow" / "scripts" / "report.py"
    runpy.run_path(str(script), init_globals={"snakemake": sm}, run_name="__snakemake__")
    assert sorted(p.name for p in out.iterdir()) == sorted(files)
    assert "| Default | 71.0 | 63.0 | 0.0 |" in (out / "table1.md").read_text(encoding="utf-8")
    n_cells = sum(len(v) for v in CELLS.values())
    assert f'"cells": {n_cells}' in (tmp_path / "report.log").read_text()  # the job's summary line


def test_a_column_without_its_licensed_corpus_says_what_it_needs(finetune_dir, tmp_path):
    """en-ru NER was not run (no licensed data): its cells say so with the instructions, and NER's
    Delta averages the languages that ran (fr only: No anchors has no fr NER result -> missing)."""
    out = tmp_path / "report"
    why = "needs licensed data: put train.txt and test.txt in licensed/levow"
    table = build_report(finetune_dir, out, SETTINGS, LABELS, PAIRS, TASKS, top_k=2,
                         unavailable={"ner": {"ru": why}})["table"]
    md = (out / "table1.md").read_text(encoding="utf-8")
    assert "| NER (F1) fr | NER (F1) ru | NER (F1) Δ (fr) |" in md
    assert "| Default | 71.0 | 63.0 | 0.0 | 56.0 | needs licensed data* | 0.0 |" in md
    assert f"\\* NER (F1) ru: {why}" in md
    assert table.deltas[("default", "ner")] == 0.0 and table.delta_targets("ner") == ["fr"]
    tex = (out / "table1.tex").read_text(encoding="utf-8")
    assert "n/a" in tex and "NER (F1) ru not run" in tex
    vs = (out / "table1_vs_paper.md").read_text(encoding="utf-8")
    assert "needs licensed data*" in vs and "Δ reproduced over fr only" in vs
    # XNLI is untouched: both languages count
    assert table.delta_targets("xnli") == ["fr", "ru"]
    assert (out / "figure3.png").stat().st_size > 0


def test_a_part_of_table1_is_the_whole_table_restricted_and_beside_the_paper(finetune_dir, tmp_path):
    """One row, one pair: the same cells as the whole table; Δ only where the part has the baseline
    row (a row without Default leaves it to the whole table)."""
    from xling.report import build_part

    build_report(finetune_dir, tmp_path / "all", SETTINGS, LABELS, PAIRS, TASKS, top_k=2)
    whole = {r["model"]: r for r in csv.DictReader((tmp_path / "all" / "table1.csv").open(encoding="utf-8"))}
    results = sorted(finetune_dir.rglob("result.json"))
    no_anchors = [p for p in results if "/no_anchors/" in p.as_posix()]
    build_part(no_anchors, tmp_path / "row.md", tmp_path / "row.csv", "Table 1, row No anchors",
               settings=["no_anchors"], labels=LABELS, pairs=PAIRS, tasks=TASKS, top_k=2)
    md = (tmp_path / "row.md").read_text(encoding="utf-8")
    assert md.startswith("# Table 1, row No anchors\n") and "| No anchors | 59.5 | 62.5 | – |" in md
    rows = {(r["task"], r["column"]): r for r in csv.DictReader((tmp_path / "row.csv").open(encoding="utf-8"))}
    assert {r["setting"] for r in rows.values()} == {"no_anchors"}
    assert float(rows[("xnli", "fr")]["reproduced"]) == pytest.approx(float(whole["No anchors"]["xnli_fr"]))
    assert float(rows[("xnli", "fr")]["published"]) == pytest.approx(published_table1()["No anchors"]["xnli_fr"])
    assert rows[("xnli", "delta")]["reproduced"] == ""  # no Default row in the part
    # one pair's columns: every row of that pair, Δ over that pair only
    build_part(results, tmp_path / "pair.md", tmp_path / "pair.csv", "Table 1, en-fr", settings=SETTINGS,
               labels=LABELS, pairs=["en-fr"], tasks=TASKS, top_k=2)
    pair = {(r["setting"], r["task"], r["column"]): r
            for r in csv.DictReader((tmp_path / "pair.csv").open(encoding="utf-8"))}
    assert {c for _, _, c in pair} == {"fr", "delta"}
    assert float(pair[("no_anchors", "xnli", "delta")]["reproduced"]) == pytest.approx(59.5 - 71.0)


def _counts_table(reps: dict[tuple[str, str], int]):
    """A one-task Table 1 whose (setting, pair) cells have the given numbers of replicates."""
    agg = {(s, p, "parsing"): Aggregate(50.0 + n, n, tuple(50.0 + n + i for i in range(n)))
           for (s, p), n in reps.items()}
    pairs = sorted({p for _, p in reps})
    return build_table1(agg, SETTINGS, LABELS, pairs, ["parsing"])


def test_the_footnote_says_each_rows_or_columns_replicates():
    """The ± footnote names the number of replicates each cell's interval stands on: one number when
    all agree; else by row (demo-full: 15 No anchors seeds, 5 of the others), by column (the real
    study: 5 seeds on en-fr, 2 on en-de), or by cell; a cell with one replicate has no ± to count."""
    same = _counts_table({("default", "en-fr"): 3, ("no_anchors", "en-fr"): 3, ("sep_l1_6", "en-fr"): 1})
    assert "95% interval over 3 replicates (Student's t" in interval_note(same)

    rows = _counts_table({("default", "en-fr"): 5, ("no_anchors", "en-fr"): 15, ("sep_l1_6", "en-fr"): 5,
                          ("default", "en-de"): 5, ("no_anchors", "en-de"): 15})
    assert ("95% interval over the replicates, 15 for No anchors; 5 for Default and Sep L1-6 (Student's t"
            in interval_note(rows))

    cols = _counts_table({(s, "en-fr"): 5 for s in SETTINGS} | {(s, "en-de"): 2 for s in SETTINGS})
    assert ("over the replicates, 5 for Parsing (LAS) fr; 2 for Parsing (LAS) de (Student's t"
            in interval_note(cols))

    cells = _counts_table({("default", "en-fr"): 5, ("default", "en-de"): 2, ("no_anchors", "en-fr"): 2,
                           ("no_anchors", "en-de"): 3})
    assert ("over the replicates, 5 for Default (Parsing (LAS) fr); 3 for No anchors (Parsing (LAS) de); "
            "2 for Default (Parsing (LAS) de) and No anchors (Parsing (LAS) fr) (Student's t") in interval_note(cells)
