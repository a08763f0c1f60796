"""GloVe's input: a vocabulary and the distance-weighted word-word co-occurrence matrix.

Counts as Stanford's ``cooccur.c`` (Pennington et al. 2014) does, so that Liu et al. 2020's GloVe
baseline (Section 3.2) sees the statistics the reference tool would: within each line, every word is
paired with each of its ``window`` left neighbours, a pair at distance d adding 1/d to
``X[left, right]`` (and, when ``symmetric``, also to ``X[right, left]``: the right context). Windows
never cross a line break. A word paired with itself gets both additions in the same cell, as in
``cooccur.c``.

Lines are lists of tokens (the corpus one sentence per line, split on spaces; subword pieces such as
``wor@@`` are words like any other).
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

import numpy as np
from scipy import sparse

# Tokens per batch of the vectorised counting: a few million (row, col, weight) triples at a time
_CHUNK_TOKENS = 200_000


def build_vocab(lines: Iterable[list[str]], min_count: int, max_size: int | None = None) -> dict[str, int]:
    """``{word: index}`` of the words seen at least ``min_count`` times, index 0 the most frequent.

    Ties in frequency are ordered by the word itself, so the indices do not depend on the order in
    which words first appear. ``max_size`` keeps the most frequent words only.
    """
    if min_count < 1:
        raise ValueError(f"build_vocab: min_count must be >= 1, got {min_count}")
    if max_size is not None and max_size < 1:
        raise ValueError(f"build_vocab: max_size must be >= 1 or None, got {max_size}")
    counts: Counter[str] = Counter()
    for line in lines:
        counts.update(line)
    kept = sorted((w for w, n in counts.items() if n >= min_count), key=lambda w: (-counts[w], w))
    if max_size is not None:
        kept = kept[:max_size]
    if not kept:
        raise ValueError(
            f"build_vocab: no word occurs at least min_count={min_count} times "
            f"(the corpus has {sum(counts.values())} tokens): the vocabulary would be empty"
        )
    return {w: i for i, w in enumerate(kept)}


def _check_vocab(vocab: dict[str, int]) -> int:
    if not vocab:
        raise ValueError("cooccurrence: the vocabulary is empty")
    if sorted(vocab.values()) != list(range(len(vocab))):
        raise ValueError(f"cooccurrence: vocabulary indices must be 0..{len(vocab) - 1}, each used once")
    return len(vocab)


def _count_chunk(ids: list[np.ndarray], window: int, symmetric: bool, V: int) -> sparse.csr_matrix:
    """The co-occurrences of a batch of lines (each an array of vocabulary indices)."""
    tokens = np.concatenate(ids)
    line = np.repeat(np.arange(len(ids)), [len(a) for a in ids])
    rows, cols, vals = [], [], []
    for d in range(1, window + 1):
        same = line[:-d] == line[d:]  # both ends on the same line
        left, right = tokens[:-d][same], tokens[d:][same]
        rows.append(left)
        cols.append(right)
        vals.append(np.full(left.size, 1.0 / d))
        if symmetric:
            rows.append(right)
            cols.append(left)
            vals.append(vals[-1])
    r, c, v = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
    return sparse.coo_matrix((v, (r, c)), shape=(V, V), dtype=np.float64).tocsr()  # tocsr sums duplicates


def cooccurrence(
    lines: Iterable[list[str]], vocab: dict[str, int], window: int, symmetric: bool = True
) -> sparse.coo_matrix:
    """The (V x V) float64 matrix X of distance-weighted co-occurrence counts (see the module docstring).

    Out-of-vocabulary tokens are dropped before windowing, as ``cooccur.c`` does (its "skip
    out-of-vocabulary words" happens before the word enters the window history): they take no window
    slot, so the in-vocabulary words on either side of one are at distance 1 from each other.
    """
    V = _check_vocab(vocab)
    if window < 1:
        raise ValueError(f"cooccurrence: window must be >= 1, got {window}")
    # Partial sums are merged like a binary counter (a new one is folded in while it is at least half
    # the size of the one below it), so the total work is O(n log n) rather than O(n^2) in the chunks.
    stack: list[sparse.csr_matrix] = []
    batch: list[np.ndarray] = []
    n_tokens = 0

    def flush() -> None:
        stack.append(_count_chunk(batch, window, symmetric, V))
        batch.clear()
        while len(stack) >= 2 and stack[-1].nnz * 2 >= stack[-2].nnz:
            top = stack.pop()
            stack[-1] = stack[-1] + top

    for toks in lines:
        ids = np.fromiter((vocab[t] for t in toks if t in vocab), dtype=np.int64)
        if ids.size < 2:
            continue
        batch.append(ids)
        n_tokens += ids.size
        if n_tokens >= _CHUNK_TOKENS:
            flush()
            n_tokens = 0
    if batch:
        flush()
    total = sparse.csr_matrix((V, V), dtype=np.float64)
    for part in stack:
        total = total + part
    return total.tocoo()
