"""The shared-space diagnostic on tiny real checkpoints: a model whose parts the two languages
share encodes the same text identically (P@1 100); separate random embeddings do not."""

from __future__ import annotations

import json
import random

import pytest

from support.tiny_checkpoint import write_tiny_checkpoint  # noqa: E402

pytest.importorskip("xling.pretrain.loader")
from xling.analysis.shared_space import main, shared_space_retrieval  # noqa: E402
from xling.preprocess.tokenize import TokenizeSettings  # noqa: E402

WORDS = ["cat", "dog", "sees", "eats", "the", "big", "red", "runs", "fish", "bird", "green", "old"]


def _sentences(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))) for _ in range(n)]


@pytest.fixture(scope="module")
def text():
    return _sentences(40, 1)


def _model(tmp_path_factory, separate_embeddings: bool):
    train = _sentences(200, 0)
    return write_tiny_checkpoint(tmp_path_factory.mktemp("m"), {"en": train, "en_prime": train}, merges=10,
                                 separate_layers=0, separate_embeddings=separate_embeddings)


def test_a_fully_shared_model_retrieves_every_sentence(tmp_path_factory, text):
    ckpt, bpe, d = _model(tmp_path_factory, separate_embeddings=False)
    res = shared_space_retrieval(ckpt, d, bpe, ("en", "en_prime"), (text, text), {"en": TokenizeSettings("en")})
    assert res["n"] == 40 and res["chance"] == pytest.approx(2.5) and res["layers"] == [0, 1, 2]
    # the language id selects nothing in such a model: both sides are the same vectors. Repeated
    # sentences in the sample tie, so allow a miss or two
    assert min(res["raw"]) >= 95 and min(res["centred"]) >= 95


def test_separate_random_embeddings_do_not_share_a_space(tmp_path_factory, text):
    ckpt, bpe, d = _model(tmp_path_factory, separate_embeddings=True)
    res = shared_space_retrieval(ckpt, d, bpe, ("en", "en_prime"), (text, text), {"en": TokenizeSettings("en")})
    assert res["raw"][0] < 50  # two unrelated random embedding tables


def test_parallel_sentences_are_required(tmp_path_factory, text):
    ckpt, bpe, d = _model(tmp_path_factory, separate_embeddings=False)
    with pytest.raises(ValueError, match="parallel"):
        shared_space_retrieval(ckpt, d, bpe, ("en", "en_prime"), (text, text[:-1]), {"en": TokenizeSettings("en")})


def test_command_line(tmp_path_factory, tmp_path, text, capsys):
    ckpt, bpe, d = _model(tmp_path_factory, separate_embeddings=False)
    way = tmp_path / "extracted" / "XNLI-15way" / "xnli.15way.orig.tsv"
    way.parent.mkdir(parents=True)
    way.write_text("en\tfr\n" + "".join(f"{s}\tx\n" for s in text), encoding="utf-8")
    out = tmp_path / "r.json"
    assert main(["--checkpoint", str(ckpt), "--dictionary", str(d), "--bpe", str(bpe), "--langs", "en", "en_prime",
                 "--way15", str(tmp_path / "extracted"), "--rows", "30", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["n"] == 30 and res == json.loads(capsys.readouterr().out)
