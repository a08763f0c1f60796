"""Benchmark: applying BPE codes to a text file, subword-nmt's own ``process_lines`` (reference)
vs ``xling.bpe.apply.apply_file`` (ordered parallel chunks with a progress line), same workers.

Both run in this process on the same synthetic file with the same codes; the outputs must be
identical (checked). Prints wall times and the ratio ours / reference (below 1: ours is faster).

Usage: python bench/bench_bpe_apply.py [--lines 200000] [--workers 2] [--merges 8000]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from subword_nmt.apply_bpe import BPE
from subword_nmt.learn_bpe import learn_bpe

from xling.bpe.apply import apply_file
from xling.bpe.manifest import SEPARATOR


def synthetic_text(path: Path, lines: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 12)))
             for _ in range(50_000)]
    weights = [1 / (i + 1) for i in range(len(vocab))]  # Zipf-like, as real text
    with open(path, "w", encoding="utf-8") as fh:
        for _ in range(lines):
            fh.write(" ".join(rng.choices(vocab, weights, k=rng.randint(5, 40))) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--merges", type=int, default=8000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src, codes = tmp / "text.txt", tmp / "codes"
        synthetic_text(src, args.lines)
        with open(src, encoding="utf-8") as fin, open(codes, "w", encoding="utf-8") as fout:
            learn_bpe(fin, fout, args.merges)
        with open(codes, encoding="utf-8") as fh:
            bpe = BPE(fh, separator=SEPARATOR)

        t0 = time.perf_counter()
        with open(tmp / "ref.bpe", "w", encoding="utf-8") as out:
            bpe.process_lines(str(src), out, num_workers=args.workers)
        ref_s = time.perf_counter() - t0

        with open(codes, encoding="utf-8") as fh:
            bpe = BPE(fh, separator=SEPARATOR)  # a cold cache, as the reference had
        t0 = time.perf_counter()
        apply_file(bpe, src, tmp / "ours.bpe", workers=args.workers)
        ours_s = time.perf_counter() - t0

        same = (tmp / "ref.bpe").read_bytes() == (tmp / "ours.bpe").read_bytes()
    print(f"lines={args.lines} workers={args.workers} merges={args.merges}")
    print(f"reference (subword-nmt process_lines): {ref_s:.2f} s")
    print(f"ours (apply_file):                     {ours_s:.2f} s")
    print(f"ratio ours/reference: {ours_s / ref_s:.2f}   identical output: {same}")
    if not same:
        raise SystemExit("outputs differ")


if __name__ == "__main__":
    main()
