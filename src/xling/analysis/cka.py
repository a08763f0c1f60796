"""Linear centred kernel alignment (Kornblith et al. 2019), the similarity of paper Section 5.2."""

from __future__ import annotations

import numpy as np


def _centred(M: np.ndarray, name: str) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2:
        raise ValueError(f"linear_cka: {name} must be a 2-D (n examples x d features) array, got shape {M.shape}")
    if not np.all(np.isfinite(M)):
        raise ValueError(f"linear_cka: {name} contains NaN or inf")
    return M - M.mean(axis=0, keepdims=True)


def linear_cka(X: np.ndarray, Y: np.ndarray) -> float:
    """CKA(X, Y) = ||Y^T X||_F^2 / (||X^T X||_F ||Y^T Y||_F) on column-centred X and Y.

    The paper prints the formula without centring; it is the linear CKA of Kornblith et al. only
    for centred features (it then equals the normalised HSIC of the Gram matrices X X^T, Y Y^T),
    so the columns are mean-centred here. Rows of X and Y are the same n examples; the feature
    dimensions may differ. Invariant to orthogonal maps and isotropic scaling of either side, not to
    general invertible linear maps. Returns a value in [0, 1].
    """
    Xc, Yc = _centred(X, "X"), _centred(Y, "Y")
    if Xc.shape[0] != Yc.shape[0]:
        raise ValueError(f"linear_cka: X and Y must have the same number of rows (examples), "
                         f"got {Xc.shape[0]} and {Yc.shape[0]}")
    if Xc.shape[0] < 2:
        raise ValueError(f"linear_cka: need at least 2 examples, got {Xc.shape[0]}")
    # Scale each side first: CKA is scale-invariant and this keeps the 4th powers in range.
    nx, ny = np.linalg.norm(Xc), np.linalg.norm(Yc)
    if nx == 0 or ny == 0:
        raise ValueError("linear_cka: X or Y is constant across examples (zero variance after centring); "
                         "CKA is undefined")
    Xc, Yc = Xc / nx, Yc / ny
    cross = np.linalg.norm(Yc.T @ Xc) ** 2
    return float(cross / (np.linalg.norm(Xc.T @ Xc) * np.linalg.norm(Yc.T @ Yc)))


def length_residuals(M: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``M`` with each row's length-group mean removed: the residuals of regressing the features on
    the sentence length as a categorical variable (one indicator per length). A mean-pooled state
    holds the mean of the positional embeddings over the sentence, a function of its length alone;
    two encoders that share nothing still agree on parallel sentences through it, because parallel
    sentences have correlated lengths. After this, no function of the length is left in ``M``."""
    M = np.asarray(M, dtype=np.float64)
    lengths = np.asarray(lengths)
    if M.ndim != 2 or lengths.shape != (M.shape[0],):
        raise ValueError(f"length_residuals: expected an (n x d) array and n lengths, "
                         f"got {M.shape} and {lengths.shape}")
    groups, index = np.unique(lengths, return_inverse=True)
    sums = np.zeros((len(groups), M.shape[1]))
    np.add.at(sums, index, M)
    counts = np.bincount(index, minlength=len(groups))[:, None]
    return M - (sums / counts)[index]


def length_controlled_cka(X: np.ndarray, Y: np.ndarray, len_x: np.ndarray, len_y: np.ndarray) -> float:
    """Linear CKA of the two sides' length residuals (:func:`length_residuals`, each side on its own
    subword counts): what the representations share beyond what their lengths give away. Not the
    paper's measure (Figure 7 is :func:`linear_cka` of the pooled states); a robustness check beside it."""
    return linear_cka(length_residuals(X, len_x), length_residuals(Y, len_y))


def bootstrap_indices(n: int, resamples: int, seed: int) -> np.ndarray:
    """``resamples`` x ``n`` row indices drawn with replacement (the same draws for every kind and
    layer of a pair, so that differences between kinds are paired)."""
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def bootstrap_cka(X: np.ndarray, Y: np.ndarray, indices: np.ndarray, device: str = "cpu") -> np.ndarray:
    """linear_cka(X[i], Y[i]) for each row ``i`` of ``indices``: the sampling distribution of CKA
    over the sentences (what another draw of parallel sentences would give; not the variation
    between training seeds).

    A resample is a vector of counts c: the centred cross-products are X^T diag(c) Y - n m_x m_y^T
    (m = the count-weighted means), so no resampled copy of X or Y is made, and the three products
    run in float64 on ``device`` (a GPU at paper scale: 10k x 768 takes ~1 s a draw on a CPU)."""
    import torch

    X, Y = _centred(X, "X"), _centred(Y, "Y")
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"bootstrap_cka: X and Y must have the same number of rows, got {X.shape[0]} and {Y.shape[0]}")
    n = X.shape[0]
    # CKA is scale-invariant: unit Frobenius norms keep the 4th powers in range
    tx = torch.as_tensor(X / np.linalg.norm(X), device=device)
    ty = torch.as_tensor(Y / np.linalg.norm(Y), device=device)
    out = np.empty(len(indices))
    for k, idx in enumerate(indices):
        c = torch.as_tensor(np.bincount(idx, minlength=n), dtype=tx.dtype, device=device)
        mx, my = (c @ tx) / n, (c @ ty) / n
        cx, cy = tx * c[:, None], ty * c[:, None]
        cxy = tx.T @ cy - n * torch.outer(mx, my)
        cxx = tx.T @ cx - n * torch.outer(mx, mx)
        cyy = ty.T @ cy - n * torch.outer(my, my)
        out[k] = float(torch.linalg.norm(cxy) ** 2 / (torch.linalg.norm(cxx) * torch.linalg.norm(cyy)))
    return out


def centred_interval(estimate: float, draws: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The bootstrap's spread around ``estimate``: the percentile interval of ``draws`` moved by
    ``estimate - mean(draws)``. Linear CKA is biased upward under resampling with replacement (a
    resample's repeated rows agree with themselves: +0.03 at n = 2,000 rows of d = 64 features,
    more at the paper's 768, against a spread of ~0.005), so the plain percentile interval can lie
    wholly above the estimate. Re-centred, it says what another draw of as many sentences would
    give around it (the estimator's own bias, about d / n for unrelated sides, is not removed)."""
    draws = np.asarray(draws, dtype=np.float64)
    lo, hi = percentile_interval(draws, level)
    shift = float(estimate) - float(draws.mean())
    return lo + shift, hi + shift


def percentile_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The bootstrap percentile interval."""
    lo, hi = np.percentile(np.asarray(values, dtype=np.float64), [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)
