"""Benchmark: the fixed cost of a job that loads a pretrained model (every fine-tuning, analysis
and export job) -- a fresh Python process that loads a checkpoint and encodes one sentence --
with the fairseq-free loader against the same process importing fairseq first (what loading
cost when the loader went through fairseq). Alternating runs in one command.

    python bench/bench_job_startup.py [--runs 5]

Prints the median wall time of each and the ratio with/without fairseq."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.tiny_checkpoint import write_tiny_checkpoint

JOB = """
import torch
from xling.model.checkpoint import load_encoder
enc = load_encoder({ckpt!r}, {dict_path!r})
with torch.no_grad():
    enc.encode(torch.tensor([[0, 5, 6, 2]]), "en")
"""


def timed(code: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ckpt, _, dict_path = write_tiny_checkpoint(Path(tmp), {"en": ["the cat sat", "a dog ran"] * 5})
        job = JOB.format(ckpt=str(ckpt), dict_path=str(dict_path))
        plain, with_fairseq = [], []
        for _ in range(args.runs):
            plain.append(timed(job))
            with_fairseq.append(timed("import fairseq.data, fairseq.models\n" + job))
    a, b = statistics.median(plain), statistics.median(with_fairseq)
    print(f"load + encode, no fairseq:   {a:.2f} s (median of {args.runs})")
    print(f"load + encode, with fairseq: {b:.2f} s")
    print(f"ratio with/without: {b / a:.2f}  (saved per job: {b - a:.2f} s)")


if __name__ == "__main__":
    main()
