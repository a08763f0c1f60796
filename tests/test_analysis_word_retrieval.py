"""Liu et al.'s word retrieval (MRR under cosine), against its definition."""

import numpy as np
import pytest

from xling.analysis.word_retrieval import dictionary_retrieval, mean_reciprocal_rank, reciprocal_ranks


def test_planted_identity_mapping_has_mrr_one():
    V = np.random.default_rng(0).normal(size=(300, 16))
    assert mean_reciprocal_rank(V * 3.0, V, np.arange(300)) == 1.0  # cosine: scale does not matter


def test_hand_computed_ranks():
    queries = np.array([[1.0, 0.0], [0.0, 1.0]])
    candidates = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
    # query 0: cosines 1, .6, 0 -> its gold (1) is second; query 1: .0, .8, 1 -> gold (2) is first
    assert reciprocal_ranks(queries, candidates, [1, 2]).tolist() == [0.5, 1.0]
    assert mean_reciprocal_rank(queries, candidates, [1, 2]) == 0.75


def test_ties_take_the_mean_rank_so_a_collapsed_space_scores_like_chance():
    n = 5
    rr = reciprocal_ranks(np.ones((n, 3)), np.ones((n, 3)), np.arange(n))
    assert np.allclose(rr, 2 / (n + 1))  # mean rank (n + 1) / 2


def test_random_vectors_score_the_expected_chance_mrr():
    rng = np.random.default_rng(1)
    n = 400
    mrr = mean_reciprocal_rank(rng.normal(size=(n, 64)), rng.normal(size=(n, 64)), np.arange(n))
    chance = sum(1 / k for k in range(1, n + 1)) / n  # E[1/rank] for a uniform rank
    assert abs(mrr - chance) < 0.012


def test_blocks_do_not_change_the_ranks():
    rng = np.random.default_rng(2)
    Q, C = rng.normal(size=(50, 8)), rng.normal(size=(30, 8))
    gold = rng.integers(0, 30, size=50)
    assert np.array_equal(reciprocal_ranks(Q, C, gold, block=7), reciprocal_ranks(Q, C, gold))


def test_dictionary_pairs_missing_words_duplicates_and_two_translations():
    src = (["cat", "dog", "big"], np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    tgt = (["chat", "chien", "gros", "grand"], np.array([[1.0, 0.1], [0.1, 1.0], [1.0, 1.05], [1.3, 1.0]]))
    pairs = [("cat", "chat"), ("cat", "chat"), ("dog", "chien"), ("big", "gros"), ("big", "grand"),
             ("red", "rouge"), ("dog", "loup")]
    out = dictionary_retrieval(pairs, src, tgt)
    assert out["pairs"] == 4 and out["candidates"] == 4 and out["missing_pairs"] == 2 and out["identical_pairs"] == 0
    # big -> gros and big -> grand: each is the other's distractor, so grand (further off) ranks second
    Q = src[1][[0, 1, 2, 2]]
    assert out["mrr"] == pytest.approx(mean_reciprocal_rank(Q, tgt[1], [0, 1, 2, 3]))
    assert out["mrr"] == pytest.approx((1 + 1 + 1 + 0.5) / 4)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="dimensions"):
        reciprocal_ranks(np.ones((2, 3)), np.ones((2, 4)), [0, 1])
    with pytest.raises(ValueError, match="gold indices"):
        reciprocal_ranks(np.ones((2, 3)), np.ones((2, 3)), [0, 2])
    with pytest.raises(ValueError, match="no dictionary pair"):
        dictionary_retrieval([("a", "b")], (["x"], np.ones((1, 2))), (["y"], np.ones((1, 2))))


def test_chance_mrr_is_the_mean_reciprocal_rank_of_a_random_order():
    from xling.analysis.word_retrieval import chance_mrr

    assert chance_mrr(1) == 1.0 and chance_mrr(2) == 0.75
    n = 6
    rng = np.random.default_rng(3)
    ranks = np.array([rng.permutation(n)[0] + 1 for _ in range(20000)])
    assert abs(chance_mrr(n) - (1 / ranks).mean()) < 0.01
