"""Benchmark: the wall time of planning the workflow (``snakemake -n all liu2020``: parsing the
Snakefile and the config, validating it, building the DAG) with this checkout against a reference
checkout of the workflow (another commit, as a git worktree), the demo and the paper config, in
the same command.

Each run is a fresh ``snakemake`` process in an empty working directory (nothing built, so every
job is planned), as a dry run or a SLURM job's re-parse of the workflow starts. One untimed run
of each checkout and config first (the file cache), then ``--blocks`` rounds that time every
checkout once per config, alternating which goes first.

    git worktree add /tmp/xling-ref <commit>
    python bench/bench_dry_run.py --reference /tmp/xling-ref     # 5 rounds

Prints min / median / max seconds per checkout and config, and the ratio of the medians (this
checkout over the reference; < 1 means faster planning).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIGS = {"demo": ["config/demo.yaml"], "paper": []}


def dry_run(checkout: Path, config: str, workdir: Path) -> float:
    """Seconds of one ``snakemake -n`` of ``checkout``'s workflow in ``workdir``."""
    configs = [str(checkout / c) for c in CONFIGS[config]]
    cmd = [sys.executable, "-m", "snakemake", "all", "liu2020", "-n", "-q", "--cores", "2", "--nolock",
           "-s", str(checkout / "Snakefile"), "--directory", str(workdir),
           *(["--configfile", *configs] if configs else [])]
    # each checkout's scripts/_setup.py puts its own src/ first on the path
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{checkout} ({config}): snakemake -n failed:\n{proc.stderr[-3000:]}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, required=True, help="the other checkout (a git worktree)")
    ap.add_argument("--blocks", type=int, default=5)
    args = ap.parse_args(argv)
    checkouts = {"reference": args.reference.resolve(), "this": REPO}
    times: dict[tuple[str, str], list[float]] = {(c, k): [] for c in CONFIGS for k in checkouts}
    with tempfile.TemporaryDirectory(prefix="bench_dry_run_") as tmp:
        workdir = Path(tmp)
        for config in CONFIGS:  # warm-up: the file cache, Python's compiled modules
            for path in checkouts.values():
                dry_run(path, config, workdir)
        for r in range(args.blocks):
            for config in CONFIGS:
                order = list(checkouts.items()) if r % 2 == 0 else list(checkouts.items())[::-1]
                for name, path in order:
                    times[(config, name)].append(dry_run(path, config, workdir))
    for config in CONFIGS:
        med = {}
        for name in checkouts:
            ts = times[(config, name)]
            med[name] = statistics.median(ts)
            print(f"{config:5s} {name:9s} min {min(ts):6.2f} s  median {med[name]:6.2f} s  max {max(ts):6.2f} s")
        print(f"{config:5s} this / reference = {med['this'] / med['reference']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
