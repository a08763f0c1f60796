"""What a run's jobs cost, from the TSV files of Snakemake's ``benchmark:`` directives (the
tokenisation, BPE, pretraining and fine-tuning rules write them to ``benchmarks/<run>/<stage>/...``):
per stage, the jobs, their wall-clock and CPU hours, and the largest peak memory.

    python -m xling.cluster.benchmarks benchmarks/demo
"""

from __future__ import annotations

import argparse
import csv
from dataclasses import dataclass
from pathlib import Path

from xling.errors import InputError

COLUMNS = ("s", "max_rss", "cpu_time")  # of the columns Snakemake writes, the ones summed here


@dataclass
class Cost:
    """What a group of jobs cost: their count, summed wall-clock, CPU and GPU time, and the largest
    peak memory among them."""

    jobs: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    gpu_h: float = 0.0
    max_rss_mb: float = 0.0

    def add(self, wall_s: float, cpu_s: float, max_rss_mb: float, gpus: int = 0) -> None:
        self.jobs += 1
        self.wall_s += wall_s
        self.cpu_s += cpu_s
        self.gpu_h += gpus * wall_s / 3600
        self.max_rss_mb = max(self.max_rss_mb, max_rss_mb)


@dataclass
class StageCost(Cost):
    stage: str = ""


def _number(value: str) -> float:
    """Snakemake writes NA where it could not measure (e.g. a job too short to sample)."""
    return 0.0 if value in ("", "NA", "-") else float(value)


def read_benchmark(path: Path) -> dict[str, float]:
    """The (first) measured run of one job: seconds, peak resident memory (MB), CPU seconds."""
    path = Path(path)
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    if not rows or any(c not in rows[0] for c in COLUMNS):
        raise InputError(path, 1, f"a Snakemake benchmark table with columns {', '.join(COLUMNS)}")
    try:
        return {c: _number(rows[0][c]) for c in COLUMNS}
    except ValueError as err:
        raise InputError(path, 2, "numbers in the benchmark columns", str(err)) from None


def summarise(root: Path) -> list[StageCost]:
    """One row per stage (the first folder under ``root``), in name order."""
    root = Path(root)
    stages: dict[str, StageCost] = {}
    for path in sorted(root.rglob("*.tsv")):
        stage = path.relative_to(root).parts[0]
        b = read_benchmark(path)
        stages.setdefault(stage, StageCost(stage=stage)).add(b["s"], b["cpu_time"], b["max_rss"])
    return [stages[k] for k in sorted(stages)]


def markdown(rows: list[StageCost]) -> str:
    lines = ["| stage | jobs | wall-clock h (sum) | CPU h (sum) | peak memory (MB, largest job) |",
             "|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.stage} | {r.jobs} | {r.wall_s / 3600:.2f} | {r.cpu_s / 3600:.2f} | {r.max_rss_mb:,.0f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, help="a run's benchmark folder, e.g. benchmarks/demo")
    args = ap.parse_args(argv)
    print(markdown(summarise(args.root)), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
