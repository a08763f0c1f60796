"""Benchmark: the parser's single-root tree decoding (``xling.finetune.mst.decode_mst``: each word tried
as ROOT's only child in order of an upper bound on its tree's score, stopping when no bound reaches
the best tree found) against the definition it replaces (every word tried), same matrices, same
process, alternating blocks.

The matrices are what an early parser gives: log-softmax arc scores over 10-50 words, with heads
drawn towards ROOT in a third of them (an untrained parser's many ROOT children make the one-child
search run). Every tree is checked equal between the two before any time counts.

    python bench/bench_mst.py [--blocks 5] [--trees 200]

Prints each version's CPU milliseconds a tree per block and the ratio exhaustive / ours (min, median,
max over the blocks after a warm-up block; above 1: ours is faster).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from xling.finetune.mst import _chu_liu_edmonds, decode_mst, tree_score


def every_root(scores: np.ndarray) -> np.ndarray:
    """The definition: the unconstrained tree if it has one ROOT child, else the first best tree of
    every word tried as ROOT's only child."""
    s = np.asarray(scores, dtype=np.float64).copy()
    s[0, :] = -np.inf
    np.fill_diagonal(s, -np.inf)
    heads = _chu_liu_edmonds(s)
    if int(np.sum(heads[1:] == 0)) == 1:
        return heads
    best, best_score = None, -np.inf
    for r in range(1, len(s)):
        constrained = s.copy()
        constrained[1:, 0] = -np.inf
        constrained[r, 0] = s[r, 0]
        cand = _chu_liu_edmonds(constrained)
        if tree_score(s, cand) > best_score:
            best, best_score = cand, tree_score(s, cand)
    assert best is not None
    return best


def matrices(trees: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for k in range(trees):
        n = int(rng.integers(10, 51))
        temp = rng.choice([0.3, 1.0, 3.0])
        a = rng.normal(size=(n + 1, n + 1)) * temp
        if k % 3 == 0:
            a[:, 0] += 2 * temp
        a -= np.log(np.exp(a).sum(1, keepdims=True))
        out.append(a.astype(np.float32))
    return out


def cpu_ms(fn, mats: list[np.ndarray]) -> float:
    start = time.process_time()
    for m in mats:
        fn(m)
    return 1000 * (time.process_time() - start) / len(mats)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--trees", type=int, default=200)
    args = ap.parse_args(argv)
    ratios = []
    for block in range(args.blocks + 1):  # block 0 warms up
        mats = matrices(args.trees, block)
        for m in mats:
            if not np.array_equal(decode_mst(m), every_root(m)):
                raise SystemExit(f"block {block}: a tree differs from the definition's")
        ours, ref = cpu_ms(decode_mst, mats), cpu_ms(every_root, mats)
        print(f"block {block}{' (warm-up)' if block == 0 else ''}: ours {ours:.2f} ms a tree, every root "
              f"{ref:.2f} ms, ratio {ref / ours:.1f}")
        if block:
            ratios.append(ref / ours)
    print(f"ratio every root / ours: min {min(ratios):.1f}, median {statistics.median(ratios):.1f}, "
          f"max {max(ratios):.1f} over {len(ratios)} blocks of {args.trees} trees")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
