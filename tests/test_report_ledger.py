"""The compute ledger: per-rule and per-model costs from benchmark files, GPU-hours as wall-clock
x GPUs, the budget's planned hours beside the measured ones, jobs without a benchmark file named."""

from __future__ import annotations

import csv
import json
import runpy
from pathlib import Path
from types import SimpleNamespace

import pytest

from xling.errors import InputError
from xling.report.ledger import per_cell, per_rule, read_costs, write_ledger

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
SCRIPTS = Path(__file__).resolve().parents[1] / "workflow" / "scripts"


def bench(path: Path, s: float, rss: float, cpu: float) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{s}\t0:00:00\t{rss}\t1\t1\t1\t0\t0\t0\t{cpu}\n")
    return str(path)


@pytest.fixture
def entries(tmp_path):
    b = tmp_path / "benchmarks"
    return [
        {"rule": "pretrain", "setting": "default", "pair": "en-fr", "gpus": 8,
         "benchmark": bench(b / "pretrain/default/en-fr.tsv", 7200, 30_000, 50_000)},
        {"rule": "pretrain", "setting": "sep_emb", "pair": "en-fr", "gpus": 8,
         "benchmark": bench(b / "pretrain/sep_emb/en-fr.tsv", 3600, 20_000, 20_000)},
        {"rule": "pretrain_mono", "setting": "mono", "pair": "en", "gpus": 8,
         "benchmark": bench(b / "pretrain/mono/en.tsv", 1800, 10_000, 9_000)},
        {"rule": "finetune", "setting": "default", "pair": "en-fr", "gpus": 1,
         "benchmark": bench(b / "finetune/default/en-fr/xnli/a.tsv", 900, 4_000, 1_000)},
        {"rule": "finetune", "setting": "default", "pair": "en-fr", "gpus": 1,
         "benchmark": bench(b / "finetune/default/en-fr/xnli/b.tsv", 2700, 5_000, 2_000)},
        {"rule": "bpe", "setting": None, "pair": None, "gpus": 0,
         "benchmark": bench(b / "bpe/default/en-fr.tsv", 600, 2_000, 600)},
        # a job whose benchmark file is absent (results copied from elsewhere)
        {"rule": "finetune", "setting": "sep_emb", "pair": "en-fr", "gpus": 1,
         "benchmark": str(b / "finetune/sep_emb/en-fr/xnli/a.tsv")},
    ]


def test_per_rule_totals_and_gpu_hours(entries):
    costs, missing = read_costs(entries)
    assert missing == [entries[-1]["benchmark"]]
    rules = per_rule(costs)
    assert list(rules) == ["pretrain", "pretrain_mono", "finetune", "bpe"]
    p = rules["pretrain"]
    assert (p.jobs, p.wall_s, p.cpu_s, p.max_rss_mb) == (2, 10_800, 70_000, 30_000)
    assert p.gpu_h == pytest.approx(8 * 3.0)  # 2 h + 1 h on 8 GPUs
    assert rules["finetune"].gpu_h == pytest.approx(1.0) and rules["bpe"].gpu_h == 0


def test_per_model_rows_put_fine_tuning_with_its_model_and_planned_hours_beside(entries):
    costs, _ = read_costs(entries)
    cells = {(c.setting, c.pair): c for c in per_cell(costs, {"default/en-fr": 1.6, "mono/en": 0.5})}
    assert set(cells) == {("default", "en-fr"), ("sep_emb", "en-fr"), ("mono", "en")}  # bpe is no model's
    d = cells[("default", "en-fr")]
    assert (d.pretrain.jobs, d.finetune.jobs, d.finetune.wall_s, d.planned_pretrain_h) == (1, 2, 3600, 1.6)
    assert cells[("sep_emb", "en-fr")].planned_pretrain_h is None


def test_a_grid_job_counts_as_its_models_fine_tuning(entries, tmp_path):
    """A finetune_grid job (all the cells of a batch size at once) is its model's fine-tuning too."""
    grid = {"rule": "finetune_grid", "setting": "sep_emb", "pair": "en-fr", "gpus": 1,
            "benchmark": bench(tmp_path / "b/finetune/sep_emb/en-fr/xnli/grid_bs4.tsv", 1800, 2_000, 3_000)}
    costs, _ = read_costs([*entries, grid])
    cells = {(c.setting, c.pair): c for c in per_cell(costs, {})}
    assert (cells[("sep_emb", "en-fr")].finetune.jobs, cells[("sep_emb", "en-fr")].finetune.wall_s) == (1, 1800)
    assert per_rule(costs)["finetune_grid"].gpu_h == pytest.approx(0.5)


def test_written_ledger(entries, tmp_path):
    md, out_csv = tmp_path / "report/compute.md", tmp_path / "report/compute.csv"
    res = write_ledger(entries, {"default/en-fr": 1.6}, "V100: the paper's own rate", {"default": "Default"}, md,
                       out_csv, note="Synthetic testbed")
    assert res == {"jobs": 6, "not_measured": 1, "wall_h": 4.667, "gpu_h": 8 * 3.5 + 1.0}  # 16,800 s
    text = md.read_text()
    assert "| pretrain | 2 | 3.00 | 19.44 | 24.00 | 30,000 |" in text
    # measured 2 h against 1.6 planned; 8 GPUs x 2 h + 1 GPU x 1 h of fine-tuning
    assert "| Default | en-fr | 2.00 | 1.60 | 1.25 | 2 | 1.00 | 17.00 |" in text
    assert "Not measured (1 jobs without a benchmark file)" in text and "V100: the paper's own rate" in text
    rows = list(csv.DictReader(out_csv.open()))
    assert [(r["setting"], r["pair"]) for r in rows] == [("default", "en-fr"), ("sep_emb", "en-fr"), ("mono", "en")]
    assert float(rows[0]["gpu_h"]) == pytest.approx(17.0) and rows[1]["planned_pretrain_h"] == ""


def test_a_malformed_benchmark_file_names_itself(entries, tmp_path):
    Path(entries[0]["benchmark"]).write_text("a\tb\n1\t2\n")
    with pytest.raises(InputError, match=r"en-fr\.tsv:1.*max_rss"):
        read_costs(entries)


def test_workflow_script(entries, tmp_path):
    out = SimpleNamespace(ledger_md=str(tmp_path / "c.md"), ledger_csv=str(tmp_path / "c.csv"))
    sm = SimpleNamespace(input=[], output=out, log=[str(tmp_path / "ledger.log")], wildcards={},
                         rule="compute_ledger",
                         params=SimpleNamespace(entries=entries, planned={}, planning_basis="CPU", labels={}, note=""))
    runpy.run_path(str(SCRIPTS / "report_ledger.py"), init_globals={"snakemake": sm}, run_name="__main__")
    summary = json.loads((tmp_path / "ledger.log").read_text().splitlines()[-1])
    assert summary["rule"] == "compute_ledger" and summary["jobs"] == 6 and summary["not_measured"] == 1
    assert Path(out.ledger_md).is_file() and Path(out.ledger_csv).is_file()


def test_hours_read_well_at_both_scales():
    from xling.report.ledger import _hours

    assert [_hours(h) for h in (21_619.4, 72.0, 1.5, 0.0198, 0)] == ["21,619", "72.00", "1.50", "0.0198", "0.00"]
