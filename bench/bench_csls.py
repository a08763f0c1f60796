"""Benchmark: CSLS word translation + P@1 as Figure 4 runs it (``xling.analysis.words.align_words``:
faiss k-NN for the hubness terms, scores in blocks of 512 queries) against a naive dense version
(the full source x target cosine matrix in numpy, then CSLS and argmax), same data, same process.

Part 1, at a size the dense version can hold: both run, their predictions must agree (checked),
and the ratio ours / dense of wall time and of peak memory is printed (below 1: ours is better).
Part 2, at the paper's size (200k words x 768 per side, 1.5k test words) unless ``--skip-full``:
ours alone, wall time and peak memory (the dense matrix would be 200k x 200k float32 = 160 GB).

Each measurement runs in a process of its own (this script, ``--one``); peak memory is that
process's resident high-water mark growth (ru_maxrss) over the run, after the data is made.

Usage: python bench/bench_csls.py [--n 20000] [--full-n 200000] [--dim 768] [--skip-full]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np

from xling.analysis.align import iterative_normalize, procrustes
from xling.analysis.words import align_words


def planted(n: int, dim: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two spaces related by a rotation plus noise (at 768 dimensions P@1 stays near 100: the point
    is the cost, and that both versions predict the same)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, dim)).astype(np.float32)
    q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    Y = (X @ q + 0.9 * rng.normal(size=(n, dim))).astype(np.float32)
    return X, Y


def dense_p1(X: np.ndarray, Y: np.ndarray, train, test, norm_steps: int, k: int) -> float:
    """The definition with every cosine in memory: CSLS(x, y) = 2cos - r_Y(x) - r_X(y)."""
    Xn, Yn = iterative_normalize(X, norm_steps), iterative_normalize(Y, norm_steps)
    si, ti = (np.array(c) for c in zip(*train))
    M = (Xn @ procrustes(Xn[si], Yn[ti])).astype(np.float32)
    Yn = Yn.astype(np.float32)
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    Yn /= np.linalg.norm(Yn, axis=1, keepdims=True)
    cos = M @ Yn.T  # n x n
    r_y = np.partition(cos, -k, axis=1)[:, -k:].mean(1)
    r_x = np.partition(cos, -k, axis=0)[-k:].mean(0)
    gold = {}
    for s, t in test:
        gold.setdefault(s, set()).add(t)
    sources = sorted(gold)
    pred = (2 * cos[sources] - r_y[sources, None] - r_x[None, :]).argmax(1)
    return 100.0 * np.mean([p in gold[s] for p, s in zip(pred, sources)])


def run_one(which: str, n: int, dim: int, n_test: int) -> dict:
    """One measurement, in a process of its own so that its peak memory is its own."""
    k, steps = 10, 5
    X, Y = planted(n, dim, seed=0)
    train = [(i, i) for i in range(min(5000, n - n_test))]
    test = [(i, i) for i in range(n - n_test, n)]
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    if which == "dense":
        p = dense_p1(X, Y, train, test, steps, k)
    else:
        p = align_words(X, Y, train, test, steps, k)["p_at_1"]
    return {"p_at_1": p, "wall_s": time.perf_counter() - t0,
            "peak_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024}


def spawn(which: str, n: int, dim: int, n_test: int) -> dict:
    cmd = [sys.executable, __file__, "--one", which, "--n", str(n), "--dim", str(dim), "--test", str(n_test)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20_000, help="words per side for the comparison with the dense version")
    ap.add_argument("--full-n", type=int, default=200_000)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--test", type=int, default=1500)
    ap.add_argument("--skip-full", action="store_true")
    ap.add_argument("--one", choices=["ours", "dense"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.n, args.dim, args.test)))
        return
    dense, ours = spawn("dense", args.n, args.dim, args.test), spawn("ours", args.n, args.dim, args.test)
    if abs(ours["p_at_1"] - dense["p_at_1"]) > 100.0 / args.test + 1e-9:  # at most one tie broken otherwise
        raise SystemExit(f"P@1 differs: ours {ours['p_at_1']:.2f}, dense {dense['p_at_1']:.2f}")
    print(f"n={args.n} dim={args.dim} test={args.test}: P@1 ours {ours['p_at_1']:.2f}, dense {dense['p_at_1']:.2f}")
    print(f"  wall   ours {ours['wall_s']:.2f} s, dense {dense['wall_s']:.2f} s, "
          f"ratio ours/dense {ours['wall_s'] / dense['wall_s']:.2f}")
    print(f"  memory ours +{ours['peak_mb']:.0f} MB, dense +{dense['peak_mb']:.0f} MB, "
          f"ratio ours/dense {ours['peak_mb'] / max(dense['peak_mb'], 1):.2f}")
    if not args.skip_full:
        full = spawn("ours", args.full_n, args.dim, args.test)
        print(f"n={args.full_n} dim={args.dim}: ours P@1 {full['p_at_1']:.2f} in {full['wall_s']:.1f} s, "
              f"peak +{full['peak_mb']:.0f} MB (a dense cosine matrix alone: {args.full_n ** 2 * 4 / 1e9:.0f} GB)")


if __name__ == "__main__":
    main()
