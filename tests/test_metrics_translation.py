"""Token translation scores (Liu et al. 2020, 4.2.2): convert rate and BLEU-1 against values computed
by hand from their definitions."""

from __future__ import annotations

import math

import pytest

from xling.metrics.translation import bleu1, convert_rate, vocabulary_of

SRC = {"the", "cat", "sat", ".", "de"}
TGT = {"le", "chat", "assis", ".", "de"}


def test_convert_rate_by_hand():
    outputs = [["le", "cat", ".", "chat", "xyz"], ["de", "the", "assis"]]
    # le, chat, assis: target only (converted); cat, the: source only; xyz: neither;
    # "." and "de": shared, out of both terms -> 3 / (8 - 2)
    assert convert_rate(outputs, SRC, TGT) == pytest.approx(3 / 6)
    # the same sentences as space-joined strings, split into tokens rather than characters
    assert convert_rate([" ".join(s) for s in outputs], SRC, TGT) == pytest.approx(0.5)


def test_convert_rate_counts_over_all_sentences_not_per_sentence():
    # per-sentence rates 1/1 and 0/3 would average 0.5; over all tokens it is 1/4
    assert convert_rate([["chat"], ["cat", "the", "sat"]], SRC, TGT) == pytest.approx(0.25)


def test_convert_rate_extremes_and_undefined():
    assert convert_rate([["le", "chat", "."]], SRC, TGT) == 1.0
    assert convert_rate([["the", "cat", "de"]], SRC, TGT) == 0.0
    assert convert_rate([["zzz"]], SRC, TGT) == 0.0  # neither vocabulary: not converted
    with pytest.raises(ValueError, match="both vocabularies"):
        convert_rate([[".", "de"]], SRC, TGT)
    with pytest.raises(ValueError):
        convert_rate([], SRC, TGT)


def test_vocabulary_of():
    assert vocabulary_of([["a", "b"], "b c", []]) == {"a", "b", "c"}


def test_bleu1_identical_and_disjoint():
    refs = ["le chat est assis", "il pleut"]
    assert bleu1(refs, refs) == pytest.approx(100.0)
    assert bleu1(["x y z w", "u v"], refs) == 0.0


def test_bleu1_brevity_penalty_by_hand():
    # precision 2/2, BP = exp(1 - 4/2)
    assert bleu1(["a b"], ["a b c d"]) == pytest.approx(100 * math.exp(1 - 4 / 2))
    assert bleu1([["a", "b"]], [["a", "b", "c", "d"]]) == pytest.approx(36.7879, abs=1e-4)


def test_bleu1_clips_counts_and_pools_the_corpus():
    assert bleu1(["a a a a"], ["a b c d"]) == pytest.approx(25.0)  # "a" matches once
    # corpus level: 3 of 4 unigrams match over both sentences, equal lengths
    assert bleu1(["a b", "x y"], ["a b", "x z"]) == pytest.approx(75.0)


def test_bleu1_takes_the_tokens_as_given():
    # no re-tokenisation ("a." stays one token) and no lowercasing
    assert bleu1(["a."], ["a ."]) == 0.0
    assert bleu1(["A"], ["a"]) == 0.0


def test_bleu1_errors():
    with pytest.raises(ValueError, match="2 hypotheses but 1 references"):
        bleu1(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="empty"):
        bleu1([], [])
