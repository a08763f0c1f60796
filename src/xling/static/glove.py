"""GloVe (Pennington et al. 2014), Liu et al. 2020's count-based baseline, in torch.

Why our own: no maintained GloVe package installs on the cluster. ``glovpy`` git-clones Stanford's C
code when imported, which an offline compute node cannot do; ``glove-py`` fails to build; ``mittens``
needs the dense V x V matrix, which a 100k-word vocabulary makes tens of GB.

The model follows Stanford's ``glove.c`` where the paper leaves freedom:
- objective ``J = sum over nonzero X_ij of f(X_ij) (w_i . w~_j + b_i + b~_j - log X_ij)^2`` with
  ``f(x) = (x / x_max)^alpha`` below ``x_max`` and 1 from there on (``glove_loss``);
- ``glove.c``'s AdaGrad: every parameter's squared-gradient sum starts at 1 (so the first step is
  ``lr`` times the gradient), the step is ``lr * g / sqrt(sum)``, and the sum then grows by
  ``(lr * g)^2``, with g the gradient of ``J / 2`` (the cost ``glove.c`` differentiates);
- every parameter, biases included, starts uniform in ``[-0.5, 0.5) / (dim + 1)`` (``glove.c``
  divides by the vector size plus the bias);
- the output vector of word i is ``w_i + w~_i`` (``glove.c``'s default ``-model 2``).
Where it differs: ``glove.c`` updates after every nonzero from several threads at once (Hogwild);
here each epoch visits the nonzeros in a seeded random order in minibatches, one update per batch
from the batch's summed gradient, so a run is reproducible bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from scipy import sparse

from xling.static.checks import check_counts


def glove_weight(values: torch.Tensor, x_max: float = 100.0, alpha: float = 0.75) -> torch.Tensor:
    """GloVe's f: ``(x / x_max)^alpha`` for ``x < x_max``, else 1."""
    return torch.where(values < x_max, (values / x_max) ** alpha, torch.ones_like(values))


def glove_loss(
    W: torch.Tensor,
    Wc: torch.Tensor,
    b: torch.Tensor,
    bc: torch.Tensor,
    rows: torch.Tensor,
    cols: torch.Tensor,
    values: torch.Tensor,
    x_max: float = 100.0,
    alpha: float = 0.75,
) -> torch.Tensor:
    """``sum_k f(values_k) (W[rows_k] . Wc[cols_k] + b[rows_k] + bc[cols_k] - log values_k)^2``.

    ``W``/``Wc`` are the (V x d) word and context vectors, ``b``/``bc`` their (V,) biases, and
    (``rows``, ``cols``, ``values``) the nonzeros of X. Differentiable in all four parameters.
    """
    diff = (W[rows] * Wc[cols]).sum(dim=1) + b[rows] + bc[cols] - torch.log(values)
    return (glove_weight(values, x_max, alpha) * diff * diff).sum()


@dataclass
class GloveFit:
    """A trained GloVe model: word vectors ``W``, context vectors ``Wc`` (V x d), their biases, and the
    objective summed over each epoch's batches (each batch's loss before its update, as ``glove.c``
    reports its cost)."""

    W: np.ndarray
    Wc: np.ndarray
    b: np.ndarray
    bc: np.ndarray
    epoch_losses: list[float] = field(default_factory=list)

    def vectors(self) -> np.ndarray:
        """The word vectors GloVe outputs by default: ``W + Wc``."""
        return self.W + self.Wc


def _nonzeros(X: sparse.spmatrix | sparse.sparray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    if not sparse.issparse(X):
        raise ValueError(f"GloVe: X must be a scipy sparse matrix, got {type(X).__name__}")
    if X.shape[0] != X.shape[1] or X.shape[0] == 0:
        raise ValueError(f"GloVe: X must be a non-empty square (V x V) matrix, got shape {X.shape}")
    X = sparse.coo_matrix(X, dtype=np.float64, copy=True)
    X.sum_duplicates()  # a coo matrix may list a cell twice; X_ij is their sum
    X.eliminate_zeros()
    if X.nnz == 0:
        raise ValueError("GloVe: X has no nonzero entries (is the corpus empty, or the vocabulary disjoint from it?)")
    if not np.all(np.isfinite(X.data)) or X.data.min() < 0:
        raise ValueError("GloVe: co-occurrence counts must be finite and non-negative")
    return X.row.astype(np.int64), X.col.astype(np.int64), X.data, X.shape[0]


def fit_glove(
    X: sparse.spmatrix | sparse.sparray,
    dim: int,
    *,
    epochs: int = 25,
    lr: float = 0.05,
    x_max: float = 100.0,
    alpha: float = 0.75,
    batch_size: int = 4096,
    seed: int = 1,
    threads: int = 1,
) -> GloveFit:
    """Train GloVe on the co-occurrence matrix ``X`` (V x V) and return all its parameters.

    Defaults are ``glove.c``'s (25 epochs as its demo, lr 0.05, x_max 100, alpha 0.75); ``threads``
    sets torch's intra-op threads for this call only. ``epochs=0`` returns the initialisation.
    Same arguments and seed, same result.
    """
    check_counts("GloVe", dim=(dim, 1), epochs=(epochs, 0), batch_size=(batch_size, 1), threads=(threads, 1))
    for name, value in (("lr", lr), ("x_max", x_max)):
        if not value > 0:
            raise ValueError(f"GloVe: {name} must be > 0, got {value!r}")
    if not alpha >= 0:
        raise ValueError(f"GloVe: alpha must be >= 0, got {alpha!r}")
    r_np, c_np, x_np, V = _nonzeros(X)

    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        gen = torch.Generator().manual_seed(seed)
        dtype = torch.float32  # 768-d vectors for a 120k-word vocabulary: float64 would double 1.5 GB
        scale = dim + 1

        def init(*shape: int) -> torch.Tensor:
            return (torch.rand(*shape, generator=gen, dtype=dtype) - 0.5) / scale

        params = [init(V, dim), init(V, dim), init(V), init(V)]  # W, Wc, b, bc
        gradsq = [torch.ones_like(p) for p in params]
        rows, cols = torch.from_numpy(r_np), torch.from_numpy(c_np)
        values = torch.from_numpy(x_np).to(dtype)
        losses: list[float] = []
        for _ in range(epochs):
            order = torch.randperm(len(values), generator=gen)
            total = 0.0
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                total += _step(params, gradsq, rows[idx], cols[idx], values[idx], lr, x_max, alpha)
            losses.append(total)
        W, Wc, b, bc = (p.numpy() for p in params)
        return GloveFit(W, Wc, b, bc, losses)
    finally:
        torch.set_num_threads(previous_threads)


def _step(
    params: list[torch.Tensor],
    gradsq: list[torch.Tensor],
    rows: torch.Tensor,
    cols: torch.Tensor,
    values: torch.Tensor,
    lr: float,
    x_max: float,
    alpha: float,
) -> float:
    """One AdaGrad update on a batch of nonzeros; returns the batch's loss before the update."""
    # Gradients of the rows the batch touches only: a dense (V x d) gradient per batch would cost
    # more than the batch itself.
    urows, rows = torch.unique(rows, return_inverse=True)
    ucols, cols = torch.unique(cols, return_inverse=True)
    which = (urows, ucols, urows, ucols)
    local = [p.index_select(0, i).requires_grad_() for p, i in zip(params, which)]
    w, wc, b, bc = local
    loss = glove_loss(w, wc, b, bc, rows, cols, values, x_max, alpha)
    (0.5 * loss).backward()  # glove.c steps on the gradient of J / 2
    with torch.no_grad():
        for p, g2, i, q in zip(params, gradsq, which, local):
            assert q.grad is not None  # backward() gave every leaf its gradient
            step = q.grad.mul_(lr)
            acc = g2.index_select(0, i)
            p.index_copy_(0, i, q.detach().addcdiv_(step, acc.sqrt(), value=-1))  # old sum, then add
            g2.index_copy_(0, i, acc.addcmul_(step, step))
    return float(loss.detach())


def train_glove(X: sparse.spmatrix | sparse.sparray, dim: int, **settings) -> np.ndarray:
    """GloVe word vectors ``W + Wc`` (V x ``dim``, float32), row i for vocabulary index i of ``X``;
    ``settings`` as :func:`fit_glove` takes them."""
    return fit_glove(X, dim, **settings).vectors()
