"""Table 1 on an extra test set (R/report/table1_<name>.{md,csv}) from hand-written result.json
files: the same selection on English dev, mean and interval over the replicates and Δ against
Default as Table 1, computed by hand here from the record's tgt_extra (or, for the source
language's set, src_extra with a column per pair); Table 1 itself does not change."""

from __future__ import annotations

import csv
import json
import math
import runpy
from pathlib import Path
from types import SimpleNamespace

import pytest
from scipy import stats

from xling.errors import InputError
from xling.report import build_extra_table, build_report

SETTINGS = ["default", "no_anchors"]
LABELS = {"default": "Default", "no_anchors": "No anchors"}
PAIRS = ["en-fr", "en-ru"]
TABLE = dict(settings=SETTINGS, labels=LABELS, pairs=PAIRS, tasks=["parsing"], top_k=2)

# (setting, pair, fine-tuning seed): cells (en_dev, tgt_test, tgt_extra.pud, src_extra.pud)
CELLS = {
    ("default", "en-fr", 1): [(80, 70, 60, 90), (82, 72, 50, 91), (79, 90, 99, 10)],  # best 2 by dev: pud 55
    ("default", "en-fr", 2): [(81, 71, 64, 92), (78, 70, 10, 11), (83, 69, 62, 94)],  # 63
    ("default", "en-ru", 1): [(70, 60, 40, 80), (75, 64, 44, 82)],  # 42
    ("default", "en-ru", 2): [(70, 61, 46, 84), (72, 63, 48, 86)],  # 47
    ("no_anchors", "en-fr", 1): [(81, 69, 30, 70), (78, 50, 20, 72)],  # 25
    ("no_anchors", "en-fr", 2): [(80, 68, 34, 74), (79, 52, 26, 76)],  # 30
    ("no_anchors", "en-ru", 1): [(70, 62.5, 35, 78)],  # 35 (one cell)
    ("no_anchors", "en-ru", 2): [(71, 60, 41, 79)],  # 41
}
# by hand: the mean over the two replicates (fine-tuning seeds) of the best-2-by-dev means
PUD = {("default", "fr"): (55, 63), ("default", "ru"): (42, 47), ("no_anchors", "fr"): (25, 30),
       ("no_anchors", "ru"): (35, 41)}
EN_PUD = {("default", "en-fr"): (90.5, 93), ("default", "en-ru"): (81, 85), ("no_anchors", "en-fr"): (71, 75),
          ("no_anchors", "en-ru"): (78, 79)}


def write_results(root: Path, extra: bool = True) -> list[Path]:
    paths = []
    for (setting, pair, fseed), cells in CELLS.items():
        for i, (dev, test, pud, en_pud) in enumerate(cells):
            p = root / setting / pair / "seed1" / "parsing" / f"bs{i}_lr1e-05" / f"seed{fseed}" / "result.json"
            p.parent.mkdir(parents=True, exist_ok=True)
            rec = {"en_dev": dev, "tgt_test": test, "task": "parsing"}
            if extra:
                rec.update(tgt_extra={"pud": pud}, src_extra={"pud": en_pud})
            p.write_text(json.dumps(rec), encoding="utf-8")
            paths.append(p)
    return paths


def t_half_width(xs) -> float:
    """Student's t 95% half-width of the mean, by its definition."""
    n = len(xs)
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)


def welch_half_width(a, b) -> float:
    va, vb = (sum((x - sum(g) / len(g)) ** 2 for x in g) / (len(g) - 1) / len(g) for g in (a, b))
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return stats.t.ppf(0.975, df) * math.sqrt(va + vb)


def mean(xs) -> float:
    return sum(xs) / len(xs)


def test_the_extra_table_by_hand(tmp_path):
    paths = write_results(tmp_path / "finetune")
    md, out_csv = tmp_path / "report" / "table1_pud.md", tmp_path / "report" / "table1_pud.csv"
    build_extra_table(paths, md, out_csv, "Table 1 on the pud test set", "tgt_extra.pud", "PUD, fr and ru.",
                      note="(real languages)", **TABLE)
    rows = {r["setting"]: r for r in csv.DictReader(out_csv.open(encoding="utf-8"))}
    for (setting, lang), reps in PUD.items():
        r = rows[setting]
        assert float(r[f"parsing_{lang}"]) == pytest.approx(mean(reps))
        hw = t_half_width(reps)
        assert (float(r[f"parsing_{lang}_low"]), float(r[f"parsing_{lang}_high"])) == pytest.approx(
            (mean(reps) - hw, mean(reps) + hw), abs=1e-4)
    # Δ: the row's average over fr and ru minus Default's; Welch over the rows' replicates
    row = {s: [mean([PUD[(s, "fr")][k], PUD[(s, "ru")][k]]) for k in range(2)] for s in SETTINGS}
    delta = mean(row["no_anchors"]) - mean(row["default"])
    assert delta == pytest.approx(-19.0)
    assert float(rows["no_anchors"]["parsing_delta"]) == pytest.approx(delta)
    hw = welch_half_width(row["no_anchors"], row["default"])
    assert float(rows["no_anchors"]["parsing_delta_high"]) == pytest.approx(delta + hw, abs=1e-4)
    assert float(rows["default"]["parsing_delta"]) == 0.0 and rows["default"]["parsing_delta_low"] == ""
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# Table 1 on the pud test set\n\nPUD, fr and ru.\n\n(real languages) Zero-shot transfer")
    assert "| Model | Parsing (LAS) fr | Parsing (LAS) ru | Parsing (LAS) Δ |" in text
    assert (f"| No anchors | 27.5 ± {t_half_width(PUD[('no_anchors', 'fr')]):.1f} | "
            f"38.0 ± {t_half_width(PUD[('no_anchors', 'ru')]):.1f} | -19.0 ± {hw:.1f} |") in text


def test_the_source_language_table_has_a_column_per_pair(tmp_path):
    paths = write_results(tmp_path / "finetune")
    md, out_csv = tmp_path / "table1_pud_en.md", tmp_path / "table1_pud_en.csv"
    build_extra_table(paths, md, out_csv, "Table 1 on the pud test set of en", "src_extra.pud", "en PUD.",
                      columns=PAIRS, **TABLE)
    rows = {r["setting"]: r for r in csv.DictReader(out_csv.open(encoding="utf-8"))}
    for (setting, pair), reps in EN_PUD.items():
        assert float(rows[setting][f"parsing_{pair}"]) == pytest.approx(mean(reps))
    assert "| Model | Parsing (LAS) en-fr | Parsing (LAS) en-ru | Parsing (LAS) Δ |" in md.read_text(encoding="utf-8")


def test_table1_is_the_same_with_or_without_extra_scores(tmp_path):
    """The records' extra keys change nothing of Table 1 (byte for byte), and the extra table is not
    Table 1 under another name."""
    outs = {}
    for extra in (False, True):
        root = tmp_path / str(extra)
        build_report(write_results(root / "finetune", extra), root / "report", **TABLE)
        outs[extra] = {p.name: p.read_bytes() for p in (root / "report").iterdir() if p.suffix in (".md", ".csv")}
    assert outs[False] == outs[True]
    table1 = {r["setting"]: r for r in csv.DictReader((tmp_path / "True" / "report" / "table1.csv").open())}
    assert float(table1["default"]["parsing_fr"]) == pytest.approx(mean([71, 70]))  # tgt_test's, not PUD's 59


def test_a_record_without_the_set_is_named(tmp_path):
    paths = write_results(tmp_path / "finetune")
    bad = paths[3]
    bad.write_text(json.dumps({"en_dev": 1, "tgt_test": 2}), encoding="utf-8")
    with pytest.raises(InputError, match=rf"{bad.name}.*a number in 'tgt_extra.pud'"):
        build_extra_table(paths, tmp_path / "t.md", tmp_path / "t.csv", "t", "tgt_extra.pud", "", **TABLE)
    assert not (tmp_path / "t.md").exists()


def test_the_workflow_script(tmp_path):
    """workflow/scripts/table1_extra.py with the objects Snakemake injects."""
    from snakemake.iocontainers import Namedlist

    paths = write_results(tmp_path / "finetune")
    out = tmp_path / "report"
    table = {**TABLE, "baseline": "default", "source": "en", "note": "", "unavailable": {}, "columns": None,
             "score": "tgt_extra.pud", "title": "Table 1 on the pud test set", "about": "PUD."}
    sm = SimpleNamespace(
        input=Namedlist(fromdict={"results": [str(p) for p in paths]}),
        output=Namedlist(fromdict={"md": str(out / "table1_pud.md"), "csv": str(out / "table1_pud.csv")}),
        params=Namedlist(fromdict={"table": table}), log=[str(tmp_path / "t.log")], rule="table1_extra_pud",
    )
    script = Path(__file__).resolve().parents[1] / "workflow" / "scripts" / "table1_extra.py"
    runpy.run_path(str(script), init_globals={"snakemake": sm}, run_name="__snakemake__")
    rows = {r["setting"]: r for r in csv.DictReader((out / "table1_pud.csv").open(encoding="utf-8"))}
    assert float(rows["default"]["parsing_fr"]) == pytest.approx(mean(PUD[("default", "fr")]))
