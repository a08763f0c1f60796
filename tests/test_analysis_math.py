"""Section 5 maths against its definitions: iterative normalisation, Procrustes, cosine k-NN, CSLS,
precision@1, sentence retrieval and linear CKA."""

from __future__ import annotations

import numpy as np
import pytest

from xling.analysis.align import (
    cosine_knn,
    csls_scores,
    iterative_normalize,
    precision_at_1,
    procrustes,
    sentence_retrieval_p1,
    translate,
)
from xling.analysis.cka import linear_cka


def _orthogonal(rng: np.random.Generator, d: int) -> np.ndarray:
    """Haar-random orthogonal matrix (QR of a Gaussian with the sign of R's diagonal fixed)."""
    Q, R = np.linalg.qr(rng.normal(size=(d, d)))
    return Q * np.sign(np.diag(R))


def _cos_matrix(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    A = A / np.linalg.norm(A, axis=1, keepdims=True)
    B = B / np.linalg.norm(B, axis=1, keepdims=True)
    return A @ B.T


# ------------------------------------------------------------------ iterative normalisation


def test_iterative_normalize_unit_rows_and_centred_columns():
    rng = np.random.default_rng(0)
    # Off-centre data with very different row norms: both properties are far from true at start.
    X = (rng.normal(size=(300, 16)) + 3 * rng.normal(size=16)) * rng.uniform(0.2, 5, size=(300, 1))
    X32 = X.astype(np.float32)
    drift = []
    for n_iter in (0, 1, 3, 10, 30):
        Z = iterative_normalize(X32, n_iter)
        assert Z.dtype == np.float64 and Z.shape == X.shape
        # The final unit-length step guarantees exactly unit rows whatever n_iter is ...
        np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1.0, atol=1e-12)
        drift.append(np.abs(Z.mean(axis=0)).max())
    # ... while the column means only approach 0 as the iteration converges.
    assert drift[0] > 0.1
    assert all(a > b for a, b in zip(drift[:3], drift[1:4]))
    assert drift[-1] < 1e-10


def test_iterative_normalize_copies_and_matches_definition():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 5)) + 1.0
    before = X.copy()
    Z = iterative_normalize(X, 2)
    np.testing.assert_array_equal(X, before)
    ref = X.copy()
    for _ in range(2):
        ref = ref / np.linalg.norm(ref, axis=1, keepdims=True)
        ref = ref - ref.mean(axis=0)
    ref = ref / np.linalg.norm(ref, axis=1, keepdims=True)
    np.testing.assert_allclose(Z, ref, atol=1e-12)


def test_iterative_normalize_rejects_zero_rows_and_bad_input():
    X = np.ones((4, 3))
    X[2] = 0
    with pytest.raises(ValueError, match="zero row"):
        iterative_normalize(X)
    # Identical rows become zero after centring: also no direction left.
    with pytest.raises(ValueError, match="zero row"):
        iterative_normalize(np.ones((4, 3)))
    with pytest.raises(ValueError, match="2-D"):
        iterative_normalize(np.ones(3))
    with pytest.raises(ValueError, match="n_iter"):
        iterative_normalize(np.eye(3), -1)


# ------------------------------------------------------------------ Procrustes


def test_procrustes_recovers_rotation_and_is_orthogonal():
    rng = np.random.default_rng(2)
    n, d = 200, 12
    X = rng.normal(size=(n, d))
    Q = _orthogonal(rng, d)
    W = procrustes(X, X @ Q)
    np.testing.assert_allclose(W, Q, atol=1e-10)
    W_noisy = procrustes(X, X @ Q + 0.01 * rng.normal(size=(n, d)))
    np.testing.assert_allclose(W_noisy.T @ W_noisy, np.eye(d), atol=1e-10)
    assert np.abs(W_noisy - Q).max() < 0.05


def test_procrustes_is_optimal_and_matches_paper_convention():
    rng = np.random.default_rng(3)
    n, d = 50, 6
    X, Y = rng.normal(size=(n, d)), rng.normal(size=(n, d))  # unrelated: a non-trivial optimum
    W = procrustes(X, Y)
    best = np.linalg.norm(X @ W - Y)
    for _ in range(500):
        R = _orthogonal(rng, d)
        assert np.linalg.norm(X @ R - Y) >= best - 1e-9
    # Small perturbations of W that stay orthogonal (exp of a skew matrix ~ I + S) do not help.
    for _ in range(50):
        S = 1e-3 * rng.normal(size=(d, d))
        R = W @ _orthogonal_from_skew(S - S.T)
        assert np.linalg.norm(X @ R - Y) >= best - 1e-9
    # Paper: column vectors, W* = U V^T with U S V^T = SVD(Y' X'^T), X' = X^T; W* x' = (x W)^T.
    U, _, Vt = np.linalg.svd(Y.T @ X)
    np.testing.assert_allclose(U @ Vt, W.T, atol=1e-10)


def _orthogonal_from_skew(A: np.ndarray) -> np.ndarray:
    # Cayley transform: orthogonal for any skew-symmetric A.
    eye = np.eye(len(A))
    return np.linalg.solve(eye + A, eye - A)


def test_procrustes_shape_errors():
    with pytest.raises(ValueError, match="same n and d"):
        procrustes(np.ones((5, 3)), np.ones((4, 3)))
    with pytest.raises(ValueError, match="same n and d"):
        procrustes(np.ones((5, 3)), np.ones((5, 4)))


# ------------------------------------------------------------------ k-NN, CSLS, translation


def test_cosine_knn_matches_brute_force():
    rng = np.random.default_rng(4)
    Q, K = rng.normal(size=(30, 8)), rng.normal(size=(40, 8)) * rng.uniform(0.1, 10, size=(40, 1))
    sims, idx = cosine_knn(Q, K, 5)
    C = _cos_matrix(Q, K)
    ref_idx = np.argsort(-C, axis=1)[:, :5]
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_allclose(sims, np.take_along_axis(C, ref_idx, axis=1), atol=1e-5)
    with pytest.raises(ValueError, match="k must be"):
        cosine_knn(Q, K, 41)
    with pytest.raises(ValueError, match="same feature dimension"):
        cosine_knn(Q, K[:, :7], 1)
    with pytest.raises(ValueError, match="zero row"):
        cosine_knn(np.zeros((1, 8)), K, 1)


def test_csls_scores_equal_brute_force_double_loop():
    rng = np.random.default_rng(5)
    Xm, Y, k = rng.normal(size=(13, 6)), rng.normal(size=(17, 6)), 4

    def cos(a, b):
        return a @ b / (np.linalg.norm(a) * np.linalg.norm(b))

    def r(v, pool):
        return np.mean(sorted((cos(v, p) for p in pool), reverse=True)[:k])

    ref = np.empty((13, 17))
    for i, x in enumerate(Xm):
        for j, y in enumerate(Y):
            ref[i, j] = 2 * cos(x, y) - r(x, Y) - r(y, Xm)
    np.testing.assert_allclose(csls_scores(Xm, Y, k), ref, atol=1e-5)


def test_translate_nn_and_csls_are_argmaxes_in_any_block_size():
    rng = np.random.default_rng(6)
    Xm, Y = rng.normal(size=(57, 10)), rng.normal(size=(80, 10))
    nn = np.argmax(_cos_matrix(Xm, Y), axis=1)
    cs = np.argmax(csls_scores(Xm, Y, 10), axis=1)
    assert not np.array_equal(nn, cs)  # the two criteria differ here, so the test tells them apart
    for block in (1, 7, 4096):
        np.testing.assert_array_equal(translate(Xm, Y, "nn", block_size=block), nn)
        np.testing.assert_array_equal(translate(Xm, Y, "csls", k=10, block_size=block), cs)
    with pytest.raises(ValueError, match="method"):
        translate(Xm, Y, "cosine")


def test_csls_fixes_a_hub():
    # Sources x_i = c + e_i/2 and their translations y_i = c/2 + e_i share a common direction c;
    # the hub h = c is nearer every source (cos 0.89) than its own translation (cos 0.8), so NN maps
    # everything to the hub. The hub is also near all sources, so CSLS's r_X(h) penalty removes it.
    rng = np.random.default_rng(7)
    n, d = 50, 64
    c = np.zeros(d)
    c[0] = 1.0
    E = rng.normal(size=(n, d))
    E[:, 0] = 0
    E /= np.linalg.norm(E, axis=1, keepdims=True)
    X = c + 0.5 * E
    Y = np.vstack([0.5 * c + E, c])
    hub = n
    assert np.all(translate(X, Y, "nn") == hub)
    pred = translate(X, Y, "csls", k=10)
    np.testing.assert_array_equal(pred, np.arange(n))
    gold = [{i} for i in range(n)]
    assert precision_at_1(translate(X, Y, "nn"), gold) == 0.0
    assert precision_at_1(pred, gold) == 100.0


def test_precision_at_1_with_several_gold_translations():
    pred = np.array([3, 0, 7, 2])
    gold = [{1, 3}, {5}, {7}, {0, 1}]
    expected = 100.0 * sum(p in g for p, g in zip(pred, gold)) / len(gold)
    assert precision_at_1(pred, gold) == pytest.approx(expected)
    assert precision_at_1(pred, [{int(p)} | {99} for p in pred]) == 100.0
    with pytest.raises(ValueError, match="4 predictions but 3 gold"):
        precision_at_1(pred, gold[:3])
    with pytest.raises(ValueError, match="empty"):
        precision_at_1(pred[:0], [])
    with pytest.raises(ValueError, match="gold translation"):
        precision_at_1(pred[:1], [set()])


def test_sentence_retrieval_identical_rotated_and_random():
    rng = np.random.default_rng(8)
    n, d = 200, 32
    src = rng.normal(size=(n, d))
    Q = _orthogonal(rng, d)
    assert sentence_retrieval_p1(src, src) == 100.0
    assert sentence_retrieval_p1(src @ Q, src @ Q * 3.0) == 100.0  # cosine ignores rotation and scale
    # A rotated copy with noise is retrieved once Procrustes undoes the rotation.
    tgt = src @ Q + 0.1 * rng.normal(size=(n, d))
    assert sentence_retrieval_p1(src @ procrustes(src, tgt), tgt) == 100.0
    assert sentence_retrieval_p1(src, tgt) < 10.0
    # Independent sets: about chance, 1/n = 0.5%.
    assert sentence_retrieval_p1(src, rng.normal(size=(n, d))) < 5.0
    with pytest.raises(ValueError, match="same shape"):
        sentence_retrieval_p1(src, src[:-1])


# ------------------------------------------------------------------ linear CKA


def _cka_hsic(X: np.ndarray, Y: np.ndarray) -> float:
    """tr(K H L H) / sqrt(tr(K H K H) tr(L H L H)) with linear Gram matrices K, L."""
    n = len(X)
    H = np.eye(n) - np.ones((n, n)) / n
    K, L = X @ X.T, Y @ Y.T
    return np.trace(K @ H @ L @ H) / np.sqrt(np.trace(K @ H @ K @ H) * np.trace(L @ H @ L @ H))


def test_linear_cka_equals_hsic_form_and_is_symmetric():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(40, 7)) + 2.0  # off-centre: centring matters
    Y = X @ rng.normal(size=(7, 11)) + rng.normal(size=(40, 11)) - 1.0  # different d
    value = linear_cka(X, Y)
    assert 0.0 < value < 1.0
    assert value == pytest.approx(_cka_hsic(X, Y), abs=1e-12)
    assert linear_cka(Y, X) == pytest.approx(value, abs=1e-12)


def test_linear_cka_invariances():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(60, 8))
    Q = _orthogonal(rng, 8)
    assert linear_cka(X, X @ Q * 4.2) == pytest.approx(1.0, abs=1e-12)
    assert linear_cka(X, X + 5.0) == pytest.approx(1.0, abs=1e-12)  # translation: centring removes it
    Y = rng.normal(size=(60, 5))
    assert linear_cka(X @ Q * 0.3, Y) == pytest.approx(linear_cka(X, Y), abs=1e-12)
    # Not invariant to a general invertible linear map (anisotropic scaling after a rotation).
    A = Q @ np.diag(np.geomspace(0.05, 20, 8))
    assert abs(np.linalg.det(A)) > 0
    assert linear_cka(X, X @ A) < 0.9


def test_linear_cka_errors():
    with pytest.raises(ValueError, match="same number of rows"):
        linear_cka(np.ones((5, 3)), np.ones((4, 3)))
    with pytest.raises(ValueError, match="zero variance"):
        linear_cka(np.ones((5, 3)), np.random.default_rng(0).normal(size=(5, 2)))


def test_bootstrap_cka_resamples_rows_and_covers_the_estimate():
    from xling.analysis.cka import bootstrap_cka, bootstrap_indices, percentile_interval

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 8))
    Y = X @ rng.normal(size=(8, 6)) + 2.0 * rng.normal(size=(300, 6))
    idx = bootstrap_indices(300, 50, seed=3)
    assert idx.shape == (50, 300) and (idx == bootstrap_indices(300, 50, seed=3)).all()
    draws = bootstrap_cka(X, Y, idx)
    assert draws[7] == pytest.approx(linear_cka(X[idx[7]], Y[idx[7]]))  # each draw: CKA of resampled rows
    lo, hi = percentile_interval(draws)
    assert lo < linear_cka(X, Y) < hi and hi - lo < 0.2
    assert percentile_interval(np.arange(101.0)) == pytest.approx((2.5, 97.5))


def test_cka_bootstrap_is_biased_upward_and_its_interval_is_centred_on_the_estimate():
    """Resampled rows repeat, and repeated rows agree with themselves: at 2,000 rows of 64
    unrelated features the draws sit ~0.03 above the estimate, so the plain percentile interval
    misses it; the centred one keeps the spread around the estimate."""
    from xling.analysis.cka import bootstrap_cka, bootstrap_indices, centred_interval, percentile_interval

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(2000, 64)), rng.normal(size=(2000, 64))
    est = linear_cka(X, Y)
    draws = bootstrap_cka(X, Y, bootstrap_indices(2000, 100, seed=1))
    lo, hi = percentile_interval(draws)
    assert est < lo  # the plain interval lies wholly above the estimate
    clo, chi = centred_interval(est, draws)
    assert clo < est < chi and chi - clo == pytest.approx(hi - lo)
    assert (clo + chi) / 2 == pytest.approx(est + (lo + hi) / 2 - draws.mean())
