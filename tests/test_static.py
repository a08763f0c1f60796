"""Liu et al. 2020's static baselines (xling.static): GloVe's counts and objective against their
definitions, GloVe and word2vec on corpora whose answer is known."""

import importlib
import os
import random
import subprocess
import sys

import numpy as np
import pytest
import torch
from scipy import sparse

from xling.static import build_vocab, cooccurrence, fit_glove, glove_loss, glove_weight, train_glove, train_word2vec

# the package re-exports the function cooccurrence under its module's name: reach the module itself
cooc_module = importlib.import_module("xling.static.cooccurrence")

# ---------------------------------------------------------------------------------------------
# Counting


def test_build_vocab_orders_by_frequency_then_word():
    lines = [["b", "a", "c", "a"], ["c", "b", "d"], ["e"]]
    assert build_vocab(lines, min_count=1) == {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4}
    assert build_vocab(lines, min_count=2) == {"a": 0, "b": 1, "c": 2}
    assert build_vocab(lines, min_count=1, max_size=2) == {"a": 0, "b": 1}


def test_cooccurrence_by_hand():
    vocab = {"a": 0, "b": 1, "c": 2}
    # "x" is out of vocabulary and dropped before windowing, so line 1 counts as "a b c a"
    lines = [["a", "b", "x", "c", "a"], ["c", "c", "b"]]
    # Left word -> right word, weight 1/distance, window 2 (the two a's of line 1, 3 apart, are not
    # paired; nor are words of different lines):
    #   line 1: d=1 (a,b) (b,c) (c,a); d=2 (a,c)/2 (b,a)/2      line 2: d=1 (c,c) (c,b); d=2 (c,b)/2
    left_right = np.array(
        [
            # a    b    c
            [0.0, 1.0, 0.5],  # a
            [0.5, 0.0, 1.0],  # b
            [1.0, 1.5, 1.0],  # c
        ]
    )
    asym = cooccurrence(lines, vocab, window=2, symmetric=False)
    assert isinstance(asym, sparse.coo_matrix) and asym.dtype == np.float64 and asym.shape == (3, 3)
    np.testing.assert_allclose(asym.toarray(), left_right)
    # symmetric adds the right context too; c c counts twice in the same cell, as in cooccur.c
    sym = cooccurrence(lines, vocab, window=2).toarray()
    np.testing.assert_allclose(sym, left_right + left_right.T)
    assert sym[2, 2] == 2.0 and sym[1, 2] == 2.5
    # a window of 1 keeps only neighbours
    np.testing.assert_allclose(
        cooccurrence(lines, vocab, window=1, symmetric=False).toarray(), [[0, 1, 0], [0, 0, 1], [1, 1, 1]]
    )


def test_cooccurrence_chunks_sum_to_the_whole(monkeypatch):
    rng = random.Random(0)
    words = [f"w{i}" for i in range(12)]
    lines = [[rng.choice(words) for _ in range(rng.randint(0, 9))] for _ in range(300)]
    vocab = build_vocab(lines, min_count=1, max_size=10)  # two words out of vocabulary
    whole = cooccurrence(lines, vocab, window=3).toarray()
    monkeypatch.setattr(cooc_module, "_CHUNK_TOKENS", 7)  # many partial sums, merged in the stack
    np.testing.assert_allclose(cooccurrence(lines, vocab, window=3).toarray(), whole)
    # and the whole against a plain double loop over each line's in-vocabulary words
    ref = np.zeros_like(whole)
    for line in lines:
        ids = [vocab[t] for t in line if t in vocab]
        for j, right in enumerate(ids):
            for k in range(max(0, j - 3), j):
                ref[ids[k], right] += 1.0 / (j - k)
                ref[right, ids[k]] += 1.0 / (j - k)
    np.testing.assert_allclose(whole, ref)


# ---------------------------------------------------------------------------------------------
# GloVe's objective


def test_glove_weight():
    x = torch.tensor([25.0, 99.0, 100.0, 400.0], dtype=torch.float64)
    np.testing.assert_allclose(glove_weight(x, x_max=100.0, alpha=0.5), [0.5, 0.99**0.5, 1.0, 1.0])
    np.testing.assert_allclose(glove_weight(x, x_max=50.0, alpha=0.75), [0.5**0.75, 1.0, 1.0, 1.0])


def test_glove_loss_matches_the_formula():
    rng = np.random.default_rng(3)
    V, d, n = 6, 4, 15
    W, Wc = rng.normal(size=(V, d)), rng.normal(size=(V, d))
    b, bc = rng.normal(size=V), rng.normal(size=V)
    rows, cols = rng.integers(0, V, n), rng.integers(0, V, n)
    values = np.exp(rng.uniform(-1, 6, n))  # some above x_max = 100
    assert (values >= 100).any() and (values < 100).any()
    expected = 0.0
    for i, j, x in zip(rows, cols, values):
        f = (x / 100.0) ** 0.75 if x < 100.0 else 1.0
        expected += f * (W[i] @ Wc[j] + b[i] + bc[j] - np.log(x)) ** 2
    t = torch.from_numpy
    got = glove_loss(t(W), t(Wc), t(b), t(bc), t(rows), t(cols), t(values), x_max=100.0, alpha=0.75)
    assert got.item() == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# GloVe training


def _full_loss(fit, X):
    t = torch.from_numpy
    params = [t(a).double() for a in (fit.W, fit.Wc, fit.b, fit.bc)]
    return glove_loss(*params, t(X.row).long(), t(X.col).long(), t(X.data)).item()


def test_glove_fits_a_planted_matrix():
    rng = np.random.default_rng(0)
    V, rank = 30, 3
    log_x = 0.7 * rng.normal(size=(V, rank)) @ rng.normal(size=(rank, V)) + 2.0  # log X in about [-2, 6]
    X = sparse.coo_matrix(np.exp(log_x))
    start = fit_glove(X, 8, epochs=0)
    fit = fit_glove(X, 8, epochs=100, batch_size=64)
    assert _full_loss(fit, X) < 0.05 * _full_loss(start, X)
    assert fit.epoch_losses[-1] < fit.epoch_losses[0]
    predicted = fit.W @ fit.Wc.T + fit.b[:, None] + fit.bc[None, :]
    assert np.corrcoef(predicted.ravel(), log_x.ravel())[0, 1] > 0.95
    np.testing.assert_array_equal(fit.vectors(), fit.W + fit.Wc)


def _topic_corpus(n_lines=2000):
    """cat and dog occur in the same contexts (words a0..a9); car in others (b0..b9)."""
    rng = random.Random(0)
    lines = []
    for _ in range(n_lines):
        if rng.random() < 0.5:
            line, target = [f"a{rng.randrange(10)}" for _ in range(6)], rng.choice(["cat", "dog"])
        else:
            line, target = [f"b{rng.randrange(10)}" for _ in range(6)], "car"
        line.insert(rng.randrange(7), target)
        lines.append(line)
    return lines


def _cos(u, v):
    return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))


@pytest.fixture(scope="module")
def topic_counts():
    lines = _topic_corpus()
    vocab = build_vocab(lines, min_count=1)
    return lines, vocab, cooccurrence(lines, vocab, window=5)


def test_glove_words_in_identical_contexts_are_close(topic_counts):
    _, vocab, X = topic_counts
    vec = train_glove(X, 10, epochs=30, batch_size=64)
    assert vec.shape == (len(vocab), 10) and vec.dtype == np.float32
    cat, dog, car = (vec[vocab[w]] for w in ("cat", "dog", "car"))
    assert _cos(cat, dog) > 0.9
    assert _cos(cat, dog) > _cos(cat, car) + 0.3


def test_glove_seed_decides_the_result(topic_counts):
    X = topic_counts[2]
    before = torch.get_num_threads()
    a = train_glove(X, 6, epochs=2, batch_size=32, seed=5, threads=2)
    assert torch.get_num_threads() == before  # the thread count is the call's own
    np.testing.assert_array_equal(a, train_glove(X, 6, epochs=2, batch_size=32, seed=5, threads=2))
    assert not np.allclose(a, train_glove(X, 6, epochs=2, batch_size=32, seed=6, threads=2))


def test_glove_sums_duplicate_entries():
    X = sparse.coo_matrix(([1.0, 2.0, 3.0], ([0, 0, 1], [1, 1, 0])), shape=(2, 2))
    summed = sparse.coo_matrix(([3.0, 3.0], ([0, 1], [1, 0])), shape=(2, 2))
    np.testing.assert_array_equal(train_glove(X, 3, epochs=3), train_glove(summed, 3, epochs=3))


# ---------------------------------------------------------------------------------------------
# word2vec


@pytest.fixture(scope="module")
def topic_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("w2v") / "corpus.txt"
    path.write_text("".join(" ".join(line) + "\n" for line in _topic_corpus()), encoding="utf-8")
    return path


W2V = dict(window=5, min_count=1, epochs=5, seed=3, workers=1)


def test_word2vec_words_in_identical_contexts_are_close(topic_file):
    words, vec = train_word2vec(topic_file, 16, **W2V)
    assert vec.shape == (len(words), 16) == (23, 16) and vec.dtype == np.float32
    assert len(set(words)) == len(words)
    cat, dog, car = (vec[words.index(w)] for w in ("cat", "dog", "car"))
    assert _cos(cat, dog) > _cos(cat, car) + 0.3
    # most frequent first: car is in half the lines, cat and dog in a quarter each
    assert words[0] == "car"


def test_word2vec_is_deterministic(topic_file):
    words, vec = train_word2vec(topic_file, 8, **W2V)
    # the same corpus as token lists, and another process with another string-hash seed
    words2, vec2 = train_word2vec(_topic_corpus(), 8, **W2V)
    assert words2 == words
    np.testing.assert_array_equal(vec2, vec)
    code = (
        "import sys, numpy as np; from xling.static import train_word2vec; "
        "w, v = train_word2vec(sys.argv[1], 8, window=5, min_count=1, epochs=5, seed=3, workers=1); "
        "np.save(sys.argv[2], v); print(' '.join(w))"
    )
    out = topic_file.parent / "other.npy"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(topic_file), str(out)], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == words
    np.testing.assert_array_equal(np.load(out), vec)
    other_seed = train_word2vec(topic_file, 8, **{**W2V, "seed": 4})[1]
    assert not np.allclose(other_seed, vec)


# ---------------------------------------------------------------------------------------------
# Bad input


def test_empty_inputs_are_refused(tmp_path):
    with pytest.raises(ValueError, match="vocabulary would be empty"):
        build_vocab([], min_count=1)
    with pytest.raises(ValueError, match="vocabulary would be empty"):
        build_vocab([["a", "b"]], min_count=2)
    with pytest.raises(ValueError, match="vocabulary is empty"):
        cooccurrence([["a", "b"]], {}, window=2)
    with pytest.raises(ValueError, match="window must be >= 1"):
        cooccurrence([["a", "b"]], {"a": 0, "b": 1}, window=0)
    with pytest.raises(ValueError, match="indices must be 0..1"):
        cooccurrence([["a", "b"]], {"a": 0, "b": 2}, window=2)
    with pytest.raises(ValueError, match="no nonzero entries"):
        train_glove(cooccurrence([["a"], []], {"a": 0}, window=2), 4)
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match="vocabulary would be empty"):
        train_word2vec(empty, 4, min_count=1)
    with pytest.raises(TypeError, match="one-shot iterator"):
        train_word2vec(iter([["a", "b"]]), 4, min_count=1)


def test_bad_dimensions_are_refused():
    X = sparse.coo_matrix(np.ones((2, 2)))
    for dim in (0, -3):
        with pytest.raises(ValueError, match="dim must be an integer >= 1"):
            train_glove(X, dim)
        with pytest.raises(ValueError, match="dim must be an integer >= 1"):
            train_word2vec([["a", "b"]], dim, min_count=1)
    with pytest.raises(ValueError, match="non-empty square"):
        train_glove(sparse.coo_matrix(np.ones((2, 3))), 2)
    with pytest.raises(ValueError, match="non-negative"):
        train_glove(sparse.coo_matrix(-np.ones((2, 2))), 2)
