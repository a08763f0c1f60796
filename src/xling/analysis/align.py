"""Orthogonal alignment of two representation spaces and its evaluation (paper Section 5.1).

Conventions: every array is (n examples x d features), rows are examples. A map W is applied as
``X @ W``. The recipe of the paper: ``iterative_normalize`` both sides, learn ``W = procrustes(X, Y)``
on the supervision pairs, then ``translate(X_test @ W, Y_all)`` with CSLS (words) or
``sentence_retrieval_p1`` (Tatoeba sentences).
"""

from __future__ import annotations

from typing import Literal

import faiss
import numpy as np


def _matrix(M: np.ndarray, name: str, fn: str) -> np.ndarray:
    M = np.asarray(M)
    if M.ndim != 2 or M.shape[0] == 0 or M.shape[1] == 0:
        raise ValueError(f"{fn}: {name} must be a non-empty 2-D (n examples x d features) array, got shape {M.shape}")
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{fn}: {name} contains NaN or inf")
    return M


def _same_dim(A: np.ndarray, B: np.ndarray, names: str, fn: str) -> None:
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"{fn}: {names} must have the same feature dimension d, got {A.shape[1]} and {B.shape[1]}")


def _unit_rows(M: np.ndarray, name: str, fn: str, dtype=np.float64) -> np.ndarray:
    """Copy of M with rows scaled to length 1; a zero row has no direction, so it is an error."""
    M = np.array(M, dtype=dtype)
    norms = np.linalg.norm(M, axis=1, keepdims=True)
    zero = np.flatnonzero(norms[:, 0] == 0)
    if zero.size:
        raise ValueError(f"{fn}: {name} has {zero.size} zero row(s) (first: row {zero[0]}); cosine is undefined")
    M /= norms
    return M


# ---------------------------------------------------------------------------------------------
# Normalisation and the map


def iterative_normalize(X: np.ndarray, n_iter: int = 5) -> np.ndarray:
    """Iterative normalisation (Zhang et al. 2019), as the paper applies before Procrustes.

    Repeats ``n_iter`` times {scale every row to unit length; subtract the column means}, then ends
    with one more unit-length step. Order: Zhang et al. alternate length-normalisation and centring
    starting with the former, and the iteration converges to a fixed point that is both unit-length
    and zero-mean. Ending on the unit step guarantees exactly unit rows (what cosine and Procrustes
    see); the column means are then only approximately zero, closer as ``n_iter`` grows.
    ``n_iter=0`` is plain length normalisation. Returns a float64 copy.
    """
    fn = "iterative_normalize"
    X = _matrix(X, "X", fn)
    if n_iter < 0:
        raise ValueError(f"{fn}: n_iter must be >= 0, got {n_iter}")
    Z = np.array(X, dtype=np.float64)
    for _ in range(n_iter):
        Z = _unit_rows(Z, "X", fn)
        Z -= Z.mean(axis=0, keepdims=True)
    return _unit_rows(Z, "X", fn)


def fit_iterative_normalization(X: np.ndarray, n_iter: int = 5) -> np.ndarray:
    """The column means ``iterative_normalize`` subtracts at each of its ``n_iter`` steps, as an
    ``(n_iter x d)`` array: with ``apply_iterative_normalization`` the same transformation reaches
    vectors that were not in ``X`` (a model's hidden states at test time)."""
    fn = "fit_iterative_normalization"
    X = _matrix(X, "X", fn)
    if n_iter < 0:
        raise ValueError(f"{fn}: n_iter must be >= 0, got {n_iter}")
    Z, means = np.array(X, dtype=np.float64), []
    for _ in range(n_iter):
        Z = _unit_rows(Z, "X", fn)
        means.append(Z.mean(axis=0))
        Z -= means[-1]
    return np.array(means, dtype=np.float64).reshape(n_iter, X.shape[1])


def apply_iterative_normalization(X: np.ndarray, means: np.ndarray) -> np.ndarray:
    """``iterative_normalize`` with the column means fitted on other data: per step, unit rows then
    minus that step's mean; finally unit rows. ``apply(X, fit(X, n)) == iterative_normalize(X, n)``."""
    fn = "apply_iterative_normalization"
    X = _matrix(X, "X", fn)
    means = np.asarray(means, dtype=np.float64)
    if means.ndim != 2 or (len(means) and means.shape[1] != X.shape[1]):
        raise ValueError(f"{fn}: means must be (steps x {X.shape[1]}), got shape {means.shape}")
    Z = np.array(X, dtype=np.float64)
    for mu in means:
        Z = _unit_rows(Z, "X", fn) - mu
    return _unit_rows(Z, "X", fn)


def procrustes(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Orthogonal d x d W minimising ||X W - Y||_F, i.e. row x_i is mapped onto row y_i by x_i W.

    Closed form (Schönemann 1966): with U S V^T = SVD(X^T Y), W = U V^T, because
    ||XW - Y||^2 = const - 2 tr(W^T X^T Y) and tr(W^T U S V^T) is largest at W = U V^T.
    The paper writes the same with column vectors, W* = argmin ||W X' - Y'|| = U' V'^T with
    U' S V'^T = SVD(Y' X'^T); for X' = X^T, Y' = Y^T that SVD is of (X^T Y)^T = V S U^T, so
    W* = V U^T = W^T and W* X' = (X W)^T: the same map.
    """
    fn = "procrustes"
    X, Y = _matrix(X, "X", fn), _matrix(Y, "Y", fn)
    if X.shape != Y.shape:
        raise ValueError(f"{fn}: X and Y must both be (n pairs x d), same n and d, got {X.shape} and {Y.shape}")
    U, _, Vt = np.linalg.svd(X.astype(np.float64).T @ Y.astype(np.float64))
    return U @ Vt


# ---------------------------------------------------------------------------------------------
# Nearest neighbours and CSLS


def cosine_knn(queries: np.ndarray, keys: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k rows of ``keys`` with the highest cosine to each row of ``queries``.

    Exact search (faiss IndexFlatIP) on L2-normalised float32 copies. Returns ``(sims, idx)``,
    both (n_queries x k), sorted by decreasing cosine; sims are float64.
    """
    fn = "cosine_knn"
    queries, keys = _matrix(queries, "queries", fn), _matrix(keys, "keys", fn)
    _same_dim(queries, keys, "queries and keys", fn)
    if not 1 <= k <= keys.shape[0]:
        raise ValueError(f"{fn}: k must be in [1, number of keys = {keys.shape[0]}], got {k}")
    q = np.ascontiguousarray(_unit_rows(queries, "queries", fn, np.float32))
    kk = np.ascontiguousarray(_unit_rows(keys, "keys", fn, np.float32))
    index = faiss.IndexFlatIP(kk.shape[1])
    index.add(kk)
    sims, idx = index.search(q, k)
    return sims.astype(np.float64), idx.astype(np.int64)


def _mean_knn_cos(queries: np.ndarray, keys: np.ndarray, k: int) -> np.ndarray:
    """r(q) = mean cosine of q to its k nearest keys (the hubness penalty of CSLS)."""
    return cosine_knn(queries, keys, k)[0].mean(axis=1)


def _checked_pair(Xm: np.ndarray, Y: np.ndarray, fn: str) -> tuple[np.ndarray, np.ndarray]:
    Xm, Y = _matrix(Xm, "Xm", fn), _matrix(Y, "Y", fn)
    _same_dim(Xm, Y, "Xm and Y", fn)
    # float32 like faiss: the same precision for the cosine term and the neighbourhood terms.
    return _unit_rows(Xm, "Xm", fn, np.float32), _unit_rows(Y, "Y", fn, np.float32)


def _csls_block(Xn: np.ndarray, Yn: np.ndarray, r_y: np.ndarray, r_x: np.ndarray) -> np.ndarray:
    """CSLS(x, y) = 2 cos(x, y) - r_Y(x) - r_X(y) for a block of (unit) source rows, in float32
    (a 200k-word target vocabulary makes each row of the block 0.8 MB)."""
    return 2.0 * (Xn @ Yn.T) - r_y[:, None].astype(np.float32) - r_x[None, :].astype(np.float32)


def csls_scores(Xm: np.ndarray, Y: np.ndarray, k: int = 10) -> np.ndarray:
    """Full (n_x x n_y) CSLS matrix (Conneau et al. 2017) between mapped sources and targets.

    CSLS(x, y) = 2 cos(x, y) - r_Y(x) - r_X(y), where r_Y(x) is the mean cosine of x to its k
    nearest rows of Y and r_X(y) the mean cosine of y to its k nearest rows of Xm. Subtracting
    r_X(y) penalises hubs, targets that are near everything. Memory O(n_x n_y): use ``translate``
    for large vocabularies.
    """
    Xn, Yn = _checked_pair(Xm, Y, "csls_scores")
    return _csls_block(Xn, Yn, _mean_knn_cos(Xn, Yn, k), _mean_knn_cos(Yn, Xn, k)).astype(np.float64)


def translate(
    Xm: np.ndarray,
    Y: np.ndarray,
    method: Literal["csls", "nn"] = "csls",
    k: int = 10,
    block_size: int = 512,
    sources: np.ndarray | None = None,
) -> np.ndarray:
    """Index of the best target row of ``Y`` for every (mapped) source row of ``Xm``.

    ``nn``: highest cosine; ``csls``: highest CSLS score with neighbourhood size k. Scores are
    computed ``block_size`` source rows at a time, so memory stays O(block_size x n_y). Ties go to
    the lowest target index. ``sources``: the mapped source rows a target's hubness r_X(y) is
    measured against, when not the queries themselves (MUSE: the whole mapped source vocabulary).
    """
    fn = "translate"
    if method not in ("csls", "nn"):
        raise ValueError(f"{fn}: method must be 'csls' or 'nn', got {method!r}")
    if block_size < 1:
        raise ValueError(f"{fn}: block_size must be >= 1, got {block_size}")
    Xn, Yn = _checked_pair(Xm, Y, fn)
    if method == "csls":
        pool = Xn if sources is None else _checked_pair(sources, Y, fn)[0]
        r_y, r_x = _mean_knn_cos(Xn, Yn, k), _mean_knn_cos(Yn, pool, k)
    out = np.empty(Xn.shape[0], dtype=np.int64)
    for start in range(0, Xn.shape[0], block_size):
        block = Xn[start : start + block_size]
        if method == "csls":
            scores = _csls_block(block, Yn, r_y[start : start + block_size], r_x)
        else:
            scores = block @ Yn.T
        out[start : start + block_size] = scores.argmax(axis=1)
    return out


# ---------------------------------------------------------------------------------------------
# Evaluation


def precision_at_1(pred: np.ndarray, gold: list[set[int]]) -> float:
    """Percentage of sources whose predicted target index is one of their gold translations.

    MUSE dictionaries list several translations per source word, hence a set per source.
    """
    pred = np.asarray(pred)
    if pred.ndim != 1:
        raise ValueError(f"precision_at_1: pred must be a 1-D array of target indices, got shape {pred.shape}")
    if len(pred) != len(gold):
        raise ValueError(f"precision_at_1: {len(pred)} predictions but {len(gold)} gold sets")
    if len(gold) == 0:
        raise ValueError("precision_at_1 of an empty set is undefined")
    if any(len(g) == 0 for g in gold):
        raise ValueError("precision_at_1: every source needs at least one gold translation (got an empty set)")
    hits = sum(int(p) in g for p, g in zip(pred.tolist(), gold))
    return 100.0 * hits / len(gold)


def sentence_retrieval_hits(src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
    """Tatoeba protocol, per sentence: whether row i's cosine nearest neighbour among the rows of
    ``tgt`` is row i (row i of src and row i of tgt are translations); a bool per row."""
    fn = "sentence_retrieval_hits"
    src, tgt = _matrix(src, "src", fn), _matrix(tgt, "tgt", fn)
    if src.shape != tgt.shape:
        raise ValueError(f"{fn}: src and tgt must be parallel (n x d) arrays of the same shape, "
                         f"got {src.shape} and {tgt.shape}")
    pred = translate(src, tgt, method="nn")
    return pred == np.arange(len(pred))


def sentence_retrieval_p1(src: np.ndarray, tgt: np.ndarray) -> float:
    """Tatoeba protocol: percentage of rows whose translation is their nearest neighbour
    (:func:`sentence_retrieval_hits`)."""
    return 100.0 * float(np.mean(sentence_retrieval_hits(src, tgt)))
