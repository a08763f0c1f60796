"""Word retrieval of Liu et al. 2020 (Section 3.1.1): the mean reciprocal rank of a bilingual
dictionary's translations under cosine similarity, in a space shared by both languages.

For dictionary pairs (x_i, y_i) with vectors u_i, v_j, the query u_i ranks the dictionary's target
words y_1..y_n by cos(u_i, v_j); MRR = mean_i 1 / rank(y_i). Unlike Wu et al.'s Figure 4
(``xling.analysis.words``: Procrustes, then CSLS over a whole vocabulary), nothing is learnt: a joint
model's space is taken as it is, and the candidates are the dictionary's own target words.

The vectors are static (word2vec, GloVe: ``xling.static``) or contextual, a word's hidden states
averaged over its occurrences ("we simply average embeddings in all contexts":
``xling.analysis.words.contextual_word_vectors``).
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np


def _unit(M: np.ndarray, name: str) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2:
        raise ValueError(f"word retrieval: {name} must be a [rows, dim] matrix, got shape {M.shape}")
    norms = np.linalg.norm(M, axis=1, keepdims=True)
    # a zero vector (a word never seen in context) has cosine 0 with everything
    return M / np.where(norms > 0, norms, 1.0)


def reciprocal_ranks(queries: np.ndarray, candidates: np.ndarray, gold: Sequence[int], block: int = 1024) -> np.ndarray:
    """1 / rank of candidate ``gold[i]`` for query row i, ranking ``candidates`` by cosine.

    Ties take the mean of the ranks they span (fractional ranking): a collapsed space, where every
    candidate is equally similar, then scores what a random order would, not a perfect 1."""
    Q, C = _unit(queries, "queries"), _unit(candidates, "candidates")
    gold_idx = np.asarray(gold, dtype=np.int64)
    if Q.shape[1] != C.shape[1]:
        raise ValueError(f"word retrieval: queries have {Q.shape[1]} dimensions, candidates {C.shape[1]}")
    if gold_idx.shape != (len(Q),):
        raise ValueError(f"word retrieval: {len(Q)} queries need {len(Q)} gold indices, got shape {gold_idx.shape}")
    if len(gold_idx) and (gold_idx.min() < 0 or gold_idx.max() >= len(C)):
        raise ValueError(f"word retrieval: gold indices must be in 0..{len(C) - 1}")
    out = np.empty(len(Q))
    for start in range(0, len(Q), block):
        sims = Q[start:start + block] @ C.T
        g = gold_idx[start:start + block]
        own = sims[np.arange(len(g)), g][:, None]
        higher = (sims > own).sum(axis=1)
        tied = (sims == own).sum(axis=1) - 1  # not counting the gold candidate itself
        out[start:start + block] = 1.0 / (1.0 + higher + tied / 2.0)
    return out


def mean_reciprocal_rank(queries: np.ndarray, candidates: np.ndarray, gold: Sequence[int]) -> float:
    """Liu et al.'s equation 2 (see :func:`reciprocal_ranks`)."""
    if len(gold) == 0:
        raise ValueError("word retrieval: no dictionary pair has vectors for both words")
    return float(reciprocal_ranks(queries, candidates, gold).mean())


def dictionary_retrieval(pairs: Iterable[tuple[str, str]], src: tuple[Sequence[str], np.ndarray],
                         tgt: tuple[Sequence[str], np.ndarray]) -> dict:
    """MRR of a dictionary whose words have vectors in ``src`` / ``tgt`` (``(words, [words, dim])``).

    Pairs with a word lacking a vector are left out and counted; repeated pairs count once. The
    candidates are the distinct target words of the kept pairs, so a source word with two
    translations is two queries, each ranking the other translation as a distractor, as the
    paper's formula does."""
    si = {w: i for i, w in enumerate(src[0])}
    ti = {w: i for i, w in enumerate(tgt[0])}
    kept, missing, seen = [], 0, set()
    for s, t in pairs:
        if (s, t) in seen:
            continue
        seen.add((s, t))
        if s in si and t in ti:
            kept.append((s, t))
        else:
            missing += 1
    targets = list(dict.fromkeys(t for _, t in kept))
    col = {t: j for j, t in enumerate(targets)}
    src_vecs, tgt_vecs = np.asarray(src[1]), np.asarray(tgt[1])
    queries = src_vecs[[si[s] for s, _ in kept]] if kept else np.zeros((0, src_vecs.shape[1]))
    candidates = tgt_vecs[[ti[t] for t in targets]] if kept else np.zeros((0, tgt_vecs.shape[1]))
    mrr = mean_reciprocal_rank(queries, candidates, [col[t] for _, t in kept])
    # pairs spelled alike on both sides: a shared vocabulary retrieves them without any learning
    identical = sum(s == t for s, t in kept)
    return {"mrr": mrr, "pairs": len(kept), "candidates": len(targets), "missing_pairs": missing,
            "identical_pairs": identical}


def chance_mrr(candidates: int) -> float:
    """Expected MRR of a random ranking of ``candidates``: H_n / n."""
    if candidates < 1:
        raise ValueError(f"chance_mrr: needs at least one candidate, got {candidates}")
    return float(sum(1.0 / k for k in range(1, candidates + 1)) / candidates)
