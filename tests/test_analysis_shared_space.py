"""The shared-space diagnostic on tiny real checkpoints: a model whose parts the two languages
share encodes the same text identically (P@1 100); separate random embeddings do not. The curve
scores every interval checkpoint a pretraining job kept, and its figure averages seeds."""

from __future__ import annotations

import json
import random

import pytest

from support.tiny_checkpoint import write_tiny_checkpoint  # noqa: E402

pytest.importorskip("xling.model.checkpoint")
import shutil  # noqa: E402

from xling.analysis.shared_space import interval_checkpoints, main, run_curve, shared_space_retrieval  # noqa: E402
from xling.errors import InputError  # noqa: E402
from xling.metrics.intervals import t_interval  # noqa: E402
from xling.preprocess.tokenize import TokenizeSettings  # noqa: E402
from xling.report.shared_space_figure import curve_rows, shared_space_figure, write_curve_csv  # noqa: E402

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


def test_interval_checkpoints_are_fairseqs_numbered_files_by_updates(tmp_path):
    for name in ("checkpoint_2_1000.pt", "checkpoint_1_500.pt", "checkpoint_10_5000.pt", "checkpoint_best.pt",
                 "checkpoint_last.pt", "checkpoint_1_500.pt.tmp"):
        (tmp_path / name).write_bytes(b"")
    assert [(u, p.name) for u, p in interval_checkpoints(tmp_path)] == [
        (500, "checkpoint_1_500.pt"), (1000, "checkpoint_2_1000.pt"), (5000, "checkpoint_10_5000.pt")]


def test_the_curve_scores_every_kept_checkpoint(tmp_path_factory, tmp_path, text):
    """A shared model kept at 40 updates and separate random embeddings kept at 80: the curve
    has both points in order, each scored as the single-checkpoint diagnostic scores it."""
    shared, bpe, d = _model(tmp_path_factory, separate_embeddings=False)
    separate, _, _ = _model(tmp_path_factory, separate_embeddings=True)
    model_dir = tmp_path / "seed1"
    (model_dir / "fairseq").mkdir(parents=True)
    shutil.copy(shared, model_dir / "fairseq" / "checkpoint_1_40.pt")
    shutil.copy(separate, model_dir / "fairseq" / "checkpoint_2_80.pt")
    settings = {"en": TokenizeSettings("en")}
    out = tmp_path / "curve.json"
    res = run_curve(model_dir, d, bpe, ("en", "en_prime"), (text, text), settings, out,
                    {"setting": "default", "pair": "en-fr", "seed": 1})
    assert json.loads(out.read_text()) == res
    assert (res["setting"], res["pair"], res["seed"], res["n"]) == ("default", "en-fr", 1, 40)
    assert [c["updates"] for c in res["checkpoints"]] == [40, 80]
    alone = shared_space_retrieval(shared, d, bpe, ("en", "en_prime"), (text, text), settings)
    assert res["checkpoints"][0]["centred"] == alone["centred"] and min(alone["centred"]) >= 95
    assert res["checkpoints"][1]["raw"][0] < 50
    # a job that kept no interval checkpoint is an error naming the folder, and writes nothing
    (tmp_path / "empty" / "fairseq").mkdir(parents=True)
    with pytest.raises(InputError, match="interval checkpoints"):
        run_curve(tmp_path / "empty", d, bpe, ("en", "en_prime"), (text, text), settings, tmp_path / "none.json", {})
    assert not (tmp_path / "none.json").exists()


def _result(setting, seed, points):
    return {"setting": setting, "pair": "en-fr", "seed": seed, "chance": 0.1,
            "checkpoints": [{"updates": u, "centred": c, "raw": c} for u, c in points]}


def test_curve_rows_average_each_seeds_best_layer(tmp_path):
    results = [_result("default", 1, [(40, [1.0, 9.0]), (80, [4.0, 2.0])]),
               _result("default", 2, [(40, [3.0, 5.0]), (80, [6.0, 1.0])]),
               _result("default", 3, [(40, [7.0, 0.0])]),  # kept fewer checkpoints
               _result("no_anchors", 1, [(40, [0.5, 0.2])])]
    rows = curve_rows(results)
    assert [(r["setting"], r["updates"], r["seeds"]) for r in rows] == [
        ("default", 40, 3), ("default", 80, 2), ("no_anchors", 40, 1)]
    iv = t_interval([9.0, 5.0, 7.0])
    assert rows[0]["best_layer_p1"] == pytest.approx(7.0) and (rows[0]["low"], rows[0]["high"]) == (iv.low, iv.high)
    assert rows[1]["best_layer_p1"] == pytest.approx(5.0) and rows[1]["low"] < 5.0 < rows[1]["high"]
    assert rows[2]["low"] is None and rows[2]["best_layer_p1"] == 0.5  # one seed: no interval
    write_curve_csv(rows, tmp_path / "c.csv")
    lines = (tmp_path / "c.csv").read_text().splitlines()
    assert lines[0] == "pair,setting,updates,best_layer_p1,low,high,seeds,chance" and len(lines) == 4
    assert lines[3] == "en-fr,no_anchors,40,0.5,,,1,0.1"
    shared_space_figure(rows, {"default": "Default"}, tmp_path / "f.png", tmp_path / "f.pdf")
    assert (tmp_path / "f.png").stat().st_size > 1000 and (tmp_path / "f.pdf").stat().st_size > 1000
    with pytest.raises(ValueError, match="without 'seed'"):
        curve_rows([{"setting": "default", "pair": "en-fr", "checkpoints": [], "chance": 0.1}])
