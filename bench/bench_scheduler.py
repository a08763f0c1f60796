"""Benchmark: CPU time of the Snakemake process itself while jobs run, with the local profile's
``max-jobs-per-timespan`` against Snakemake's default (100/1s), in the same command.

The workflow is generated in a temporary directory: ``--jobs`` independent jobs that each sleep
``--sleep`` seconds, run on 2 cores, so that most of them are ready and waiting for a core, as
the fine-tuning and pretraining jobs of ``make demo-full`` are. Snakemake's scheduling loop wakes
once per rate-limit timespan whether or not a job finished and re-reads every ready job's params
and resources; a job that finishes wakes it anyway. The jobs here are cheaper to re-read than the
pipeline's (whose params are computed from the config), so the saving is smaller than in a real run.

    python bench/bench_scheduler.py                 # 200 jobs of 1 s

Prints Snakemake's user + system CPU seconds and the wall time for each setting (its jobs'
processes excluded from the CPU) and the CPU ratio (default / profile; > 1 means the profile's
setting saves scheduler CPU). The wall time shows the price: a job's end is not always seen by the
iteration it wakes, and then the next start waits for the timer.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import yaml

REPO = Path(__file__).resolve().parents[1]

SNAKEFILE = """
rule all:
    input: expand("out/{{i}}.txt", i=range({jobs}))

rule job:
    output: "out/{{i}}.txt"
    params: config=lambda w: {{"job": int(w.i), "seed": int(w.i) % 3}}
    shell: "sleep {sleep}; touch {{output}}"
"""


def snakemake_cpu(workdir: Path, timespan: str | None) -> tuple[float, float]:
    """(CPU seconds of the snakemake process alone, wall seconds) of one run from scratch."""
    for d in ("out", ".snakemake"):
        subprocess.run(["rm", "-rf", str(workdir / d)], check=True)
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "--scheduler", "greedy", "--quiet", "all"]
    if timespan:
        cmd += ["--max-jobs-per-timespan", timespan]
    start = time.time()
    proc = psutil.Popen(cmd, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cpu = 0.0
    while proc.poll() is None:
        try:
            t = proc.cpu_times()  # this process only: its children (the jobs) are not counted
            cpu = t.user + t.system
        except psutil.NoSuchProcess:
            break
        time.sleep(0.5)
    if proc.returncode != 0:
        raise SystemExit(f"snakemake failed in {workdir} ({' '.join(cmd)})")
    return cpu, time.time() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=200, help="independent jobs, two at a time")
    ap.add_argument("--sleep", type=float, default=1.0, help="seconds each job runs")
    ap.add_argument("--timespan", help="compare this setting (e.g. 1000/3s) instead of the profile's")
    args = ap.parse_args(argv)
    profile = yaml.safe_load((REPO / "profiles" / "local" / "config.yaml").read_text())
    ours = args.timespan or str(profile.get("max-jobs-per-timespan") or "100/1s")
    with tempfile.TemporaryDirectory(prefix="bench-scheduler-") as tmp:
        workdir = Path(tmp)
        (workdir / "Snakefile").write_text(SNAKEFILE.format(jobs=args.jobs, sleep=args.sleep))
        results = {}
        for label, timespan in (("default 100/1s", None), (f"profile {ours}", ours)):
            cpu, wall = snakemake_cpu(workdir, timespan)
            results[label] = cpu
            print(f"{label:>22}: snakemake CPU {cpu:6.2f} s over {wall:5.1f} s wall")
    base, prof = results.values()
    print(f"ratio default/profile = {base / max(prof, 1e-9):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
