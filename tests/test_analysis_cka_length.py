"""The length-controlled CKA beside Figure 7's: mean-pooled states of two encoders that share
nothing still score a high linear CKA on parallel sentences, through the mean positional embedding
(a function of the sentence length) and the correlated lengths of translations; the variant that
removes each side's length signal first is near 0 there and keeps what the sides really share."""

import numpy as np
import pytest

from xling.analysis.cka import length_controlled_cka, length_residuals, linear_cka

N, DIM, VOCAB, MAX_LEN = 2000, 64, 400, 48


def pooled(rng, lengths, tokens=None, tok_table=None, pos_table=None):
    """Mean over each sentence's positions of token + positional embedding (an untrained encoder's L0)."""
    tok_table = rng.normal(0, DIM ** -0.5, (VOCAB, DIM)) if tok_table is None else tok_table
    pos_table = rng.normal(0, DIM ** -0.5, (MAX_LEN, DIM)) if pos_table is None else pos_table
    out = np.empty((len(lengths), DIM))
    for i, n in enumerate(lengths):
        ids = rng.integers(0, VOCAB, n) if tokens is None else tokens[i]
        out[i] = (tok_table[ids] + pos_table[:n]).mean(0)
    return out


def parallel_lengths(rng):
    src = rng.integers(4, 30, N)
    tgt = np.clip(np.rint(src * 1.15 + rng.normal(0, 1.5, N)), 2, MAX_LEN).astype(int)
    return src, tgt


def test_cka_length_signal_alone_scores_high_on_the_papers_measure_and_near_zero_controlled():
    """Two random tables, no shared token: the paper's CKA is the length floor (~0.4), the
    controlled one near 0 (the bias of linear CKA of independent n x d features is about d / n)."""
    rng = np.random.default_rng(0)
    len_x, len_y = parallel_lengths(rng)
    X, Y = pooled(rng, len_x), pooled(rng, len_y)
    assert linear_cka(X, Y) > 0.25
    assert length_controlled_cka(X, Y, len_x, len_y) < 0.06
    # the floor is the lengths' correlation: shuffled lengths take it away on the paper's measure too
    shuffled = rng.permutation(len_y)
    assert linear_cka(X, pooled(rng, shuffled)) < 0.06


def test_cka_length_controlled_keeps_what_the_two_sides_share():
    """A target side that is an orthogonal map of the source's token states (shared content) stays
    similar once the lengths are taken out."""
    rng = np.random.default_rng(1)
    len_x, len_y = parallel_lengths(rng)
    tokens = [rng.integers(0, VOCAB, n) for n in len_x]
    table = rng.normal(0, DIM ** -0.5, (VOCAB, DIM))
    q, _ = np.linalg.qr(rng.normal(size=(DIM, DIM)))
    X = pooled(rng, len_x, tokens, table)
    Y = pooled(rng, len_x, tokens, table @ q) + rng.normal(0, 0.01, (N, DIM))
    assert length_controlled_cka(X, Y, len_x, len_y) > 0.6


def test_cka_length_residuals_are_the_least_squares_residuals_on_length_indicators():
    rng = np.random.default_rng(2)
    lengths = rng.integers(3, 9, 60)
    M = rng.normal(size=(60, 5)) + lengths[:, None] * 0.3
    groups = np.unique(lengths)
    design = (lengths[:, None] == groups[None, :]).astype(float)
    coef, *_ = np.linalg.lstsq(design, M, rcond=None)
    np.testing.assert_allclose(length_residuals(M, lengths), M - design @ coef, atol=1e-12)
    for g in groups:  # every length group is centred
        np.testing.assert_allclose(length_residuals(M, lengths)[lengths == g].mean(0), 0, atol=1e-12)


def test_cka_length_residuals_check_their_shapes():
    with pytest.raises(ValueError, match="n lengths"):
        length_residuals(np.zeros((4, 2)), np.arange(3))
