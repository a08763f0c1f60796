"""Liu et al.'s token translation job on a real (tiny) checkpoint: the sweep's rows, alpha = 0 as
the unshifted model's own predictions, the convert rate's token sets those of the evaluated rows
(Table 3), and a zero shift (a language to itself) changing nothing."""

import json
import random

import pytest
import torch

from xling.liu.translation_job import line_ids, read_piece_set, run_liu_translation
from xling.metrics.translation import bleu1, convert_rate, vocabulary_of


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from support.tiny_checkpoint import write_tiny_checkpoint

    root = tmp_path_factory.mktemp("liu_tr")
    rng = random.Random(0)
    en = ["the cat sees the dog", "a dog sees a cat", "the big cat runs"]
    fr = ["le chat voit le chien", "un chien voit un chat", "le grand chat court"]
    sents = {"en": [rng.choice(en) for _ in range(60)], "fr": [rng.choice(fr) for _ in range(60)]}
    ckpt, bpe, dict_txt = write_tiny_checkpoint(root / "m", sents, merges=30, layers=2, separate_layers=0)
    texts = {lang: bpe.parent / f"{lang}.train.bpe" for lang in ("en", "fr")}
    vocabs = {}
    for lang, path in texts.items():
        vocabs[lang] = root / f"dict.{lang}.txt"
        vocabs[lang].write_text("".join(f"{p} 1\n" for p in sorted(set(path.read_text().split()))))
    parallel = {lang: [line.split() for line in texts[lang].read_text().splitlines()[:3]] for lang in texts}
    return root, ckpt, dict_txt, texts, vocabs, parallel


def test_sweep_rows_and_alpha_zero_is_the_unshifted_model(model):
    from xling.model.checkpoint import load_encoder

    root, ckpt, dict_txt, texts, vocabs, parallel = model
    res = run_liu_translation(ckpt, dict_txt, texts, parallel, [("en", "fr"), ("fr", "en")], [1, 2],
                              [1.0, 3.0], 20, root / "out.json", {"model": "mlm_full", "size": 60}, vocabs=vocabs)
    assert json.loads((root / "out.json").read_text())["model"] == "mlm_full"
    rows = res["scores"]
    assert len(rows) == 2 * (1 + 2 * 2)
    assert {(r["layer"], r["alpha"]) for r in rows if r["src"] == "en"} == {(2, 0.0), (1, 1.0), (1, 3.0), (2, 1.0),
                                                                             (2, 3.0)}
    # alpha 0: the model's own argmax at every position of each English sentence
    enc = load_encoder(ckpt, dict_txt)
    enc.train(False)
    d = enc.dictionary
    hyps = []
    with torch.no_grad():
        for pieces in parallel["en"]:
            ids = torch.tensor([line_ids(d, pieces, 64)])
            features, _ = enc.encoder.extract_features(ids, 0)
            pred = enc.encoder.output_layer(features, 0).argmax(-1)[0, 1:-1]
            hyps.append(" ".join(d[int(t)] for t in pred))
    zero = next(r for r in rows if r["src"] == "en" and r["alpha"] == 0.0)
    assert zero["bleu1"] == pytest.approx(bleu1(hyps, [" ".join(p) for p in parallel["fr"]]))
    expected_rate = convert_rate(hyps, read_piece_set(vocabs["en"]), read_piece_set(vocabs["fr"]))
    assert zero["convert_rate"] == pytest.approx(expected_rate)


def unshifted_hypotheses(ckpt, dict_txt, rows):
    from xling.model.checkpoint import load_encoder

    enc = load_encoder(ckpt, dict_txt)
    enc.train(False)
    out = []
    with torch.no_grad():
        for pieces in rows:
            ids = torch.tensor([line_ids(enc.dictionary, pieces, 64)])
            features, _ = enc.encoder.extract_features(ids, 0)
            out.append([enc.dictionary[int(t)] for t in enc.encoder.output_layer(features, 0).argmax(-1)[0, 1:-1]])
    return out


def test_token_sets_are_those_of_the_evaluated_rows(model):
    """Table 3's V_lang: the pieces of the parallel rows translated, not the training text's
    vocabulary (which holds many more pieces, most of them shared by both languages)."""
    root, ckpt, dict_txt, texts, vocabs, parallel = model
    rows = {"en": parallel["en"][:1], "fr": parallel["fr"][:1]}  # fewer pieces than either training text
    res = run_liu_translation(ckpt, dict_txt, texts, rows, [("en", "fr")], [2], [1.0], 20, root / "sets.json", {})
    sets = {lang: vocabulary_of(r) for lang, r in rows.items()}
    assert res["token_sets"] == "evaluated"
    assert res["vocab_sizes"] == {lang: len(v) for lang, v in sets.items()}
    assert res["vocab_overlap"] == {"en-fr": len(sets["en"] & sets["fr"])}
    assert all(len(sets[lang]) < len(read_piece_set(vocabs[lang])) for lang in sets)
    zero = next(r for r in res["scores"] if r["alpha"] == 0.0)
    hyps = unshifted_hypotheses(ckpt, dict_txt, rows["en"])
    try:
        expected = convert_rate(hyps, sets["en"], sets["fr"])
    except ValueError:
        expected = None
    assert zero["convert_rate"] == expected
    trained = run_liu_translation(ckpt, dict_txt, texts, rows, [("en", "fr")], [2], [1.0], 20, root / "t.json", {},
                                  vocabs=vocabs)
    assert trained["token_sets"] == "training"
    assert trained["vocab_sizes"] == {lang: len(read_piece_set(vocabs[lang])) for lang in sets}


def test_a_language_to_itself_has_no_shift(model):
    root, ckpt, dict_txt, texts, vocabs, parallel = model
    parallel = {"fr": parallel["fr"]}
    res = run_liu_translation(ckpt, dict_txt, texts, parallel, [("fr", "fr")], [1, 2], [2.0], 20,
                              root / "self.json", {})
    bleus = {r["bleu1"] for r in res["scores"]}
    assert len(bleus) == 1  # D(fr -> fr) = 0: every layer and alpha decodes as alpha 0


def test_layers_outside_the_model_are_refused(model):
    root, ckpt, dict_txt, texts, vocabs, parallel = model
    with pytest.raises(ValueError, match=r"layers \[3\] outside 1..2"):
        run_liu_translation(ckpt, dict_txt, texts, parallel, [("en", "fr")], [1, 3], [1.0], 20,
                            root / "bad.json", {})
    assert not (root / "bad.json").exists()
