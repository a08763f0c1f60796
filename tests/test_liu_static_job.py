"""Liu et al.'s static baselines as a job: joint training over several languages' texts, .vec out."""

import random

import numpy as np
import pytest

from xling.analysis.vec import read_vec
from xling.liu.static_job import TokenLines, train_static

SETTINGS = {"dim": 8, "min_count": 2, "word2vec": {"window": 2, "negative": 3, "epochs": 2},
            "glove": {"window": 3, "epochs": 5, "lr": 0.05, "x_max": 10.0, "alpha": 0.75, "batch_size": 256}}


@pytest.fixture
def texts(tmp_path):
    rng = random.Random(0)
    out = []
    for lang, vocab in (("en", ["the", "cat", "sa@@", "t"]), ("fr", ["le", "chat", "ass@@", "is"])):
        path = tmp_path / f"{lang}.train.bpe"
        path.write_text("".join(" ".join(rng.choice(vocab) for _ in range(6)) + "\n" for _ in range(200)) + "\n")
        out.append(path)
    return out


def test_token_lines_read_every_file_again_and_skip_empty_lines(texts):
    lines = TokenLines(texts)
    first, second = list(lines), list(lines)
    assert first == second and len(first) == 400 and all(len(t) == 6 for t in first)


@pytest.mark.parametrize("method", ["word2vec", "glove"])
def test_both_languages_pieces_get_vectors(texts, tmp_path, method):
    out = tmp_path / method / "vectors.vec"
    info = train_static(method, texts, out, SETTINGS, seed=3)
    words, vectors = read_vec(out)
    assert set(words) == {"the", "cat", "sa@@", "t", "le", "chat", "ass@@", "is"} and info["words"] == 8
    assert vectors.shape == (8, 8) and np.isfinite(vectors).all()
    again = tmp_path / "again.vec"
    train_static(method, texts, again, SETTINGS, seed=3)
    assert again.read_text() == out.read_text()  # seeded, one thread: the same file


def test_bad_method_and_missing_text_are_refused(texts, tmp_path):
    with pytest.raises(ValueError, match="unknown static method"):
        train_static("fasttext", texts, tmp_path / "x.vec", SETTINGS)
    with pytest.raises(ValueError, match="missing.bpe: expected a BPE training text"):
        train_static("glove", [tmp_path / "missing.bpe"], tmp_path / "x.vec", SETTINGS)
    assert not (tmp_path / "x.vec").exists()
