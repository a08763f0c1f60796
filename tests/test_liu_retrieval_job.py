"""Liu et al.'s word retrieval job: static word vectors from their pieces, planted spaces scored by
their definition, and an MLM's per-layer scores from a real (tiny) checkpoint."""

import json
import random

import numpy as np
import pytest

from xling.analysis.vec import write_vec
from xling.liu.retrieval_job import run_liu_retrieval, static_word_vectors

PIECES = ["ca@@", "t", "Dog", "chat", "chien", "ch@@", "at"]
VECS = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0.1, 0], [0, 1, 0.1], [0, 0, 1], [0, 0, 1]], dtype=np.float32)


def test_static_word_vectors_are_piece_means_and_need_every_piece():
    lines = ["ca@@ t Dog Dog", "mou@@ se Dog"]
    words, vecs = static_word_vectors(lines, PIECES, VECS, max_words=10)
    assert words == ["Dog", "cat"]  # most frequent first; "mouse" has a piece without a vector
    assert vecs.shape == (1, 2, 3) and np.allclose(vecs[0, 1], [1, 0, 0])
    assert static_word_vectors(lines, PIECES, VECS, max_words=1)[0] == ["Dog"]
    with pytest.raises(ValueError, match="no word of the text"):
        static_word_vectors(["mou@@ se"], PIECES, VECS, 10)


@pytest.fixture
def static_run(tmp_path):
    write_vec(tmp_path / "vectors.vec", PIECES, VECS)
    (tmp_path / "en.bpe").write_text("ca@@ t Dog\nDog ca@@ t\n")
    (tmp_path / "fr.bpe").write_text("chat chien\nchien\n")
    return tmp_path


@pytest.mark.parametrize("dictionary, mrr", [("cat chat\ndog chien\n", 1.0), ("cat chien\ndog chat\n", 0.5)])
def test_planted_static_space(static_run, dictionary, mrr):
    (static_run / "en-fr.txt").write_text(dictionary)
    out = static_run / "out.json"
    texts = {"en": static_run / "en.bpe", "fr": static_run / "fr.bpe"}
    res = run_liu_retrieval({"kind": "static", "vectors": static_run / "vectors.vec"}, texts,
                            {"fr": static_run / "en-fr.txt"}, "en", 10, 100, out, {"model": "glove", "size": 2})
    assert res["layers"] == 1 and res["languages"]["fr"]["mrr"] == [pytest.approx(mrr)]
    assert res["languages"]["fr"]["pairs"] == 2  # "Dog" is lowercased to the dictionary's "dog"
    assert json.loads(out.read_text())["model"] == "glove"


def test_mlm_scores_every_layer(tmp_path):
    from support.tiny_checkpoint import write_tiny_checkpoint

    rng = random.Random(0)
    en = ["the cat sees the dog", "a dog sees a cat", "the big cat runs"]
    fr = ["le chat voit le chien", "un chien voit un chat", "le grand chat court"]
    sents = {"en": [rng.choice(en) for _ in range(60)], "fr": [rng.choice(fr) for _ in range(60)]}
    sents["en"][0] = " ".join([en[0]] * 20)  # 100 words: longer than the model's 64 positions
    ckpt, bpe, dict_txt = write_tiny_checkpoint(tmp_path / "m", sents, merges=30, layers=2, separate_layers=0)
    (tmp_path / "en-fr.txt").write_text("cat chat\ndog chien\nbig grand\nzebra zèbre\n")
    texts = {lang: bpe.parent / f"{lang}.train.bpe" for lang in ("en", "fr")}
    res = run_liu_retrieval({"kind": "mlm", "checkpoint": ckpt, "dictionary": dict_txt}, texts,
                            {"fr": tmp_path / "en-fr.txt"}, "en", 50, 100, tmp_path / "out.json", {},
                            max_seq_len=100_000)  # cut at the model's positions, not refused
    fr = res["languages"]["fr"]
    assert res["layers"] == 3 and len(fr["mrr"]) == 3 and all(0 < m <= 1 for m in fr["mrr"])
    assert fr["pairs"] == 3 and fr["missing_pairs"] == 1 and fr["candidates"] == 3
