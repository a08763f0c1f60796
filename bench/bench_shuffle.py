"""Benchmark: the seeded line shuffle before the corpus split (XLM's ``shuf``), ours
(``xling.preprocess.shuffle.shuffle_lines``: keyed external sort in buckets of ``--bucket-mb``)
vs the plain in-memory reference (read every line, ``random.shuffle``, write; what ``shuf`` does).

Both run in this process on the same synthetic file, alternating, one warm-up round each left out;
prints wall time (min / median / max over ``--blocks`` rounds), the ratio ours / reference of the
medians, and each one's peak traced Python memory (one extra round under tracemalloc). Both outputs
must hold the same lines (checked).

Usage: python bench/bench_shuffle.py [--lines 1000000] [--bucket-mb 16] [--blocks 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from xling.preprocess.shuffle import n_buckets, shuffle_lines


def synthetic_text(path: Path, lines: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 12)))
             for _ in range(20_000)]
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(lines):
            fh.write(f"{i} " + " ".join(rng.choices(vocab, k=rng.randint(5, 40))) + "\n")


def reference(src: Path, dst: Path, seed: int) -> None:
    with open(src, "rb") as fh:
        lines = fh.read().split(b"\n")
    lines.pop()
    random.Random(seed).shuffle(lines)
    with open(dst, "wb") as fo:
        fo.writelines(line + b"\n" for line in lines)


def ours(src: Path, dst: Path, seed: int, bucket_bytes: int) -> None:
    with open(src, encoding="utf-8", newline="\n") as fh, open(dst, "wb") as fo:
        shuffle_lines((line.rstrip("\n") for line in fh), fo, seed, src.stat().st_size, dst.parent, bucket_bytes)


def peak_mb(fn) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2 ** 20
    finally:
        tracemalloc.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--bucket-mb", type=int, default=16)
    ap.add_argument("--blocks", type=int, default=5)
    args = ap.parse_args()
    bucket_bytes = args.bucket_mb << 20
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = tmp / "text.txt"
        synthetic_text(src, args.lines)
        size = src.stat().st_size
        run_ref = lambda: reference(src, tmp / "ref.txt", 1)  # noqa: E731
        run_ours = lambda: ours(src, tmp / "ours.txt", 1, bucket_bytes)  # noqa: E731
        run_ref(), run_ours()  # warm-up: page cache, imports
        times = {"reference": [], "ours": []}
        for _ in range(args.blocks):
            for name, fn in (("reference", run_ref), ("ours", run_ours)):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
        same = sorted((tmp / "ref.txt").read_bytes().split(b"\n")) == sorted(
            (tmp / "ours.txt").read_bytes().split(b"\n"))
        peaks = {"reference": peak_mb(run_ref), "ours": peak_mb(run_ours)}
    print(f"lines={args.lines} text={size / 2 ** 20:.0f} MB buckets={n_buckets(size, bucket_bytes)} "
          f"({args.bucket_mb} MB each) blocks={args.blocks}")
    for name, ts in times.items():
        print(f"{name:9s}: min {min(ts):.2f} s  median {statistics.median(ts):.2f} s  max {max(ts):.2f} s  "
              f"peak traced memory {peaks[name]:.0f} MB")
    ratio = statistics.median(times["ours"]) / statistics.median(times["reference"])
    print(f"ratio ours/reference (median time): {ratio:.2f}   peak memory: {peaks['ours'] / peaks['reference']:.2f}"
          f"   same lines: {same}")
    if not same:
        raise SystemExit("outputs differ")


if __name__ == "__main__":
    main()
