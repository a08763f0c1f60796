"""The compute ledger of a run: what its jobs cost, from the TSV files of Snakemake's ``benchmark:``
directives, per rule and per Table 1 cell, beside the hours the budget planned for pretraining
(xling.cluster.budget at the planning rate).

GPU-hours are a job's wall-clock time times the GPUs it was given (its rule family's ``gpus``);
CPU-hours are the CPU time Snakemake measured for the job's processes.

The benchmark files are read beside the jobs' declared outputs rather than declared as inputs
themselves: Snakemake treats a benchmark file as an output of its job, so a run whose
``benchmarks/`` folder is missing (results copied from a cluster) would retrain every model to
write them again.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from xling.cluster.benchmarks import Cost, read_benchmark
from xling.io import atomic_write


@dataclass(frozen=True)
class JobCost:
    rule: str
    setting: str | None  # Table 1 row, "mono" for a monolingual model, None for other jobs
    pair: str | None  # language pair, or the monolingual model
    gpus: int
    wall_s: float
    cpu_s: float
    max_rss_mb: float

    @property
    def gpu_h(self) -> float:
        return self.gpus * self.wall_s / 3600


def read_costs(entries: Sequence[Mapping]) -> tuple[list[JobCost], list[str]]:
    """The cost of every job in ``entries`` (rule, setting, pair, gpus, benchmark: its TSV file)
    whose benchmark file exists, and the benchmark files that do not (jobs run without one, e.g.
    results copied from elsewhere)."""
    out, missing = [], []
    for e in entries:
        path = Path(e["benchmark"])
        if not path.is_file():
            missing.append(str(path))
            continue
        b = read_benchmark(path)
        out.append(JobCost(e["rule"], e.get("setting"), e.get("pair"), int(e.get("gpus", 0)), b["s"], b["cpu_time"],
                           b["max_rss"]))
    return out, missing


class Total(Cost):
    def add_job(self, c: JobCost) -> None:
        self.add(c.wall_s, c.cpu_s, c.max_rss_mb, c.gpus)


def per_rule(costs: Iterable[JobCost]) -> dict[str, Total]:
    """Rule -> its jobs' totals, in the order rules first appear."""
    out: dict[str, Total] = {}
    for c in costs:
        out.setdefault(c.rule, Total()).add_job(c)
    return out


@dataclass
class CellCost:
    setting: str
    pair: str
    pretrain: Total
    finetune: Total
    planned_pretrain_h: float | None


# fine-tuning jobs: one grid cell each, or all the cells of a batch size (xling.finetune.run_grid)
FINETUNE_RULES = ("finetune", "finetune_grid")


def per_cell(costs: Iterable[JobCost], planned: Mapping[str, float]) -> list[CellCost]:
    """One row per pretrained model (``setting/pair``, ``mono/model``): its pretraining job and, for
    Table 1's cells, its fine-tuning jobs; ``planned``: the budget's pretraining hours by model."""
    cells: dict[tuple[str, str], CellCost] = {}
    for c in costs:
        if c.setting is None or c.pair is None or c.rule not in ("pretrain", "pretrain_mono", *FINETUNE_RULES):
            continue
        key = (c.setting, c.pair)
        if key not in cells:
            cells[key] = CellCost(c.setting, c.pair, Total(), Total(), planned.get(f"{c.setting}/{c.pair}"))
        (cells[key].finetune if c.rule in FINETUNE_RULES else cells[key].pretrain).add_job(c)
    return list(cells.values())


def _hours(h: float) -> str:
    """Hours readable at both scales: a cluster's thousands and a laptop's minutes."""
    if h >= 100:
        return f"{h:,.0f}"
    return f"{h:.2f}" if h >= 1 or h == 0 else f"{h:.3g}"


def _h(seconds: float) -> str:
    return _hours(seconds / 3600)


def markdown(rules: Mapping[str, Total], cells: Sequence[CellCost], labels: Mapping[str, str],
             planning_basis: str, note: str = "", missing: Sequence[str] = ()) -> str:
    out = ["# Compute ledger", ""]
    if note:
        out += [note, ""]
    out += ["What the run's jobs cost, from Snakemake's benchmark files. GPU-hours: wall-clock time x "
            "the job's GPUs."]
    if missing:
        out += ["", f"Not measured ({len(missing)} jobs without a benchmark file), e.g. {missing[0]}."]
    out += ["", "## Per rule", "",
            "| Rule | Jobs | Wall-clock h (sum) | CPU h | GPU h | Peak memory (MB, largest job) |",
            "|---|---:|---:|---:|---:|---:|"]
    for rule, t in rules.items():
        out.append(f"| {rule} | {t.jobs} | {_h(t.wall_s)} | {_h(t.cpu_s)} | {_hours(t.gpu_h)} | {t.max_rss_mb:,.0f} |")
    out += ["", "## Per model", "",
            f"Planned: the pretraining hours the budget derives from the config ({planning_basis}), "
            "without the runtime margin.", "",
            "| Setting | Pair | Pretraining h | Planned h | Measured / planned | Fine-tuning jobs | "
            "Fine-tuning h | GPU h (all) |",
            "|---|---|---:|---:|---:|---:|---:|---:|"]
    for c in cells:
        planned = _hours(c.planned_pretrain_h) if c.planned_pretrain_h else "—"
        ratio = (f"{c.pretrain.wall_s / 3600 / c.planned_pretrain_h:.2f}"
                 if c.planned_pretrain_h and c.pretrain.jobs else "—")
        label = labels.get(c.setting, c.setting)
        out.append(f"| {label} | {c.pair} | {_h(c.pretrain.wall_s)} | {planned} | {ratio} | {c.finetune.jobs} | "
                   f"{_h(c.finetune.wall_s)} | {_hours(c.pretrain.gpu_h + c.finetune.gpu_h)} |")
    return "\n".join(out) + "\n"


CSV_FIELDS = ("setting", "pair", "pretrain_h", "planned_pretrain_h", "finetune_jobs", "finetune_h", "gpu_h",
              "pretrain_cpu_h", "finetune_cpu_h", "pretrain_max_rss_mb")


def cells_csv(cells: Sequence[CellCost]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for c in cells:
        w.writerow({"setting": c.setting, "pair": c.pair, "pretrain_h": f"{c.pretrain.wall_s / 3600:.4f}",
                    "planned_pretrain_h": "" if c.planned_pretrain_h is None else f"{c.planned_pretrain_h:.4f}",
                    "finetune_jobs": c.finetune.jobs, "finetune_h": f"{c.finetune.wall_s / 3600:.4f}",
                    "gpu_h": f"{c.pretrain.gpu_h + c.finetune.gpu_h:.4f}",
                    "pretrain_cpu_h": f"{c.pretrain.cpu_s / 3600:.4f}",
                    "finetune_cpu_h": f"{c.finetune.cpu_s / 3600:.4f}",
                    "pretrain_max_rss_mb": f"{c.pretrain.max_rss_mb:.0f}"})
    return buf.getvalue()


def write_ledger(entries: Sequence[Mapping], planned: Mapping[str, float], planning_basis: str,
                 labels: Mapping[str, str], out_md: Path, out_csv: Path, note: str = "") -> dict:
    """Read the jobs' benchmark files and write the ledger (Markdown and the per-model CSV), each
    atomically."""
    costs, missing = read_costs(entries)
    rules, cells = per_rule(costs), per_cell(costs, planned)
    with atomic_write(out_md) as fh:
        fh.write(markdown(rules, cells, labels, planning_basis, note, missing))
    with atomic_write(out_csv) as fh:
        fh.write(cells_csv(cells))
    return {"jobs": len(costs), "not_measured": len(missing), "wall_h": round(sum(c.wall_s for c in costs) / 3600, 3),
            "gpu_h": round(sum(c.gpu_h for c in costs), 3)}
