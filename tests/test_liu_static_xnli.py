"""XNLI with static vectors (Liu et al.'s word2vec / GloVe rows of Figures 2, 4, 6): the BiLSTM-max
classifier learns a planted English NLI task and carries it to a second language exactly as far as
that language's vectors share English's space."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

from xling.liu.static_xnli import UNK, BiLSTMMaxNLI, encode_pairs, piece_table, run_static_xnli
from xling.taskdata.textio import NLI_LABELS

WORDS = [f"w{i}" for i in range(30)]


def french(word: str) -> str:
    return "pas" if word == "not" else "f" + word[1:]


def examples(n: int, seed: int, lang: str) -> list[tuple[str, str, str]]:
    """entailment: the premise again; contradiction: the premise and "not"; neutral: other words."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        premise = rng.sample(WORDS, 4)
        label = NLI_LABELS[k % 3]
        if label == "entailment":
            hyp = list(premise)
        elif label == "contradiction":
            hyp = [*premise, "not"]
        else:
            hyp = rng.sample([w for w in WORDS if w not in premise], 4)
        if lang == "fr":
            premise, hyp = [french(w) for w in premise], [french(w) for w in hyp]
        out.append((" ".join(premise), " ".join(hyp), label))
    return out


def write_nli(path, rows):
    path.write_text("premise\thypothesis\tlabel\n" + "".join(f"{p}\t{h}\t{l}\n" for p, h, l in rows), encoding="utf-8")
    return path


def write_vec(path, shared: bool):
    rng = np.random.default_rng(0)
    en = {w: rng.normal(size=8) for w in [*WORDS, "not"]}
    fr = {french(w): (v if shared else rng.normal(size=8)) for w, v in en.items()}
    rows = {**en, **fr}
    path.write_text(f"{len(rows)} 8\n" + "".join(f"{w} " + " ".join(f"{x:.6f}" for x in v) + "\n"
                                                for w, v in rows.items()), encoding="utf-8")
    return path


def test_piece_table_and_unknown_pieces():
    index, table = piece_table(["a", "b"], np.ones((2, 3)))
    assert index == {"a": 2, "b": 3} and table.shape == (4, 3) and float(table[:2].abs().sum()) == 0.0
    assert encode_pairs([(["a", "zz"], [])], index, max_len=8) == [([2, UNK], [UNK])]
    assert encode_pairs([(["a", "b", "a"], ["b"])], index, max_len=2) == [([2, 3], [3])]


def test_max_pooling_ignores_padding():
    """A sentence's encoding does not depend on how much padding its batch adds."""
    _, table = piece_table(["a", "b", "c"], np.random.default_rng(1).normal(size=(3, 4)))
    torch.manual_seed(0)
    model = BiLSTMMaxNLI(table, hidden=5).eval()
    alone = model.encode(torch.tensor([[2, 3]]))
    padded = model.encode(torch.tensor([[2, 3, 0, 0], [4, 4, 4, 4]]))[0:1]
    assert torch.allclose(alone, padded, atol=1e-6)


@pytest.mark.parametrize("shared", [True, False])
def test_transfer_follows_the_shared_space(tmp_path, shared):
    files = {"train": write_nli(tmp_path / "train.tsv", examples(900, 1, "en"))}
    dev = {lang: write_nli(tmp_path / f"{lang}.dev.tsv", examples(90, 2, lang)) for lang in ("en", "fr")}
    test = {lang: write_nli(tmp_path / f"{lang}.test.tsv", examples(90, 3, lang)) for lang in ("en", "fr")}
    out = tmp_path / "r.json"
    res = run_static_xnli(write_vec(tmp_path / "v.vec", shared), lambda lang, sents: [s.split() for s in sents],
                          files["train"], dev, test, "en", out, {"model": "glove", "size": 100}, hidden=16, epochs=6,
                          batch_size=32, lr=3e-3, max_train_examples=None, max_eval_examples=None, max_seq_len=16)
    assert json.loads(out.read_text()) == res and res["classifier"] == "BiLSTM-max" and len(res["history"]) == 6
    en, fr = res["languages"]["en"], res["languages"]["fr"]
    assert en["test"] > 90 and en["test_pieces_with_vectors"] == 1.0
    if shared:  # French words have English's vectors: the classifier reads them as English
        assert fr["test"] == en["test"]
    else:  # "pas" and the content words mean nothing to it; only u = v (entailment) still shows
        assert fr["test"] < en["test"] - 20


def test_the_rule_script_reads_xnli_through_the_bpe(tmp_path):
    """liu_xnli_static on a real BPE: sentences tokenised as the corpus, cut into its pieces, looked up
    among the vectors' rows (every piece of the BPE text has one here)."""
    from support.script_run import run_script
    from support.tiny_checkpoint import write_tiny_checkpoint
    from support.xnli_files import write_xnli_files

    rng = random.Random(0)
    words = {"en": "the cat sees a dog runs big small".split(), "fr": "le chat voit un chien court grand petit".split()}
    sents = {lang: [" ".join(rng.choice(w) for _ in range(5)) for _ in range(60)] for lang, w in words.items()}
    _, bpe, _ = write_tiny_checkpoint(tmp_path / "m", sents, merges=30, layers=1, separate_layers=0)
    pieces = sorted({p for lang in words for line in (bpe.parent / f"{lang}.train.bpe").read_text().split("\n")
                     for p in line.split()})
    vec = tmp_path / "vectors.vec"
    vec.write_text(f"{len(pieces)} 4\n" + "".join(f"{p} " + " ".join(f"{rng.random():.4f}" for _ in range(4)) + "\n"
                                                   for p in pieces), encoding="utf-8")
    files = write_xnli_files(tmp_path, words, {"train": 30, "dev": 12, "test": 12}, rng)
    classifier = {"hidden": 8, "batch_size": 8, "lr": 1e-3, "epochs": 1, "max_train_examples": None,
                  "max_eval_examples": None, "max_seq_len": 32, "seed": 1}
    run_script("liu_xnli_static",
               {"vectors": str(vec), "bpe": str(bpe), "train": str(files["en", "train"]),
                **{f"{s}_{l}": str(files[l, s]) for l in words for s in ("dev", "test")}},
               {"result": str(tmp_path / "r.json")},
               {"meta": {"model": "glove", "size": 60}, "languages": ["en", "fr"], "classifier": classifier,
                "tokenize": {lang: {"moses_lang": lang} for lang in words}}, tmp_path / "r.log")
    res = json.loads((tmp_path / "r.json").read_text())
    assert res["model"] == "glove" and set(res["languages"]) == {"en", "fr"}
    assert all(res["languages"][lang]["test_pieces_with_vectors"] == 1.0 for lang in words)
