"""Section 5 jobs on a tiny real checkpoint: mean pooling of every layer, the random-encoder
baseline, Figure 6 retrieval and Figure 7 CKA results, and the workflow script."""

from __future__ import annotations

import json
import random
import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from support.tiny_checkpoint import write_tiny_checkpoint  # noqa: E402
from xling.errors import InputError

loader = pytest.importorskip("xling.model.checkpoint")
from xling.analysis.represent import mean_pooled_layers  # noqa: E402
from xling.analysis.run import fifteen_way, read_lines, run_cka, run_retrieval  # noqa: E402
from xling.model import ModelSpec, PretrainedModel  # noqa: E402
from xling.preprocess.tokenize import TokenizeSettings  # noqa: E402

LANGS = ("en", "fr")
VOCAB = {lang: [f"{lang}{w}" for w in ("cat", "dog", "sees", "eats", "the", "big", "red", "runs", "fish", "bird")]
         for lang in LANGS}
SCRIPTS = Path(__file__).resolve().parents[1] / "workflow" / "scripts"


def sentences(rng: random.Random, lang: str, n: int) -> list[str]:
    return [" ".join(rng.choice(VOCAB[lang]) for _ in range(rng.randint(2, 9))) for _ in range(n)]


def settings() -> dict[str, TokenizeSettings]:
    return {lang: TokenizeSettings(lang) for lang in LANGS}


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    rng = random.Random(0)
    return write_tiny_checkpoint(tmp_path_factory.mktemp("tiny"), {lang: sentences(rng, lang, 200) for lang in LANGS},
                                 merges=10)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """A 15-way file (en, fr columns) and a Tatoeba pair; the 'French' rows are distinct sentences."""
    rng = random.Random(1)
    root = tmp_path_factory.mktemp("parallel")
    en, fr = sentences(rng, "en", 60), sentences(rng, "fr", 60)
    way = root / "extracted" / "XNLI-15way" / "xnli.15way.orig.tsv"
    way.parent.mkdir(parents=True)
    way.write_text("en\tfr\n" + "".join(f"{e}\t{f}\n" for e, f in zip(en, fr)), encoding="utf-8")
    test_en, test_fr = sentences(rng, "en", 25), sentences(rng, "fr", 25)
    (root / "t.fra").write_text("\n".join(test_fr) + "\n", encoding="utf-8")
    (root / "t.eng").write_text("\n".join(test_en) + "\n", encoding="utf-8")
    (root / "t.eng_as_fra").write_text("\n".join(test_en) + "\n", encoding="utf-8")
    (root / "para.txt").write_text("\n".join(en) + "\n", encoding="utf-8")
    return root


def test_mean_pooling_leaves_out_special_tokens_and_padding(model):
    """Batched pooling equals the mean of each sentence's own subword states (positions 1..n-2 of
    <s> ... </s>), whatever the batch it was padded in."""
    from xling.bpe import SubwordTokenizer
    from xling.model.text import WordEncoder

    ckpt, bpe, dictionary = model
    enc = loader.load_encoder(ckpt, dictionary)
    sents = ["encat endog ensees", "enthe", "enbig enred enfish enbird enruns enthe encat"]
    w2s = SubwordTokenizer(bpe, "en").words_to_subwords
    split = lambda texts: [t.split() for t in texts]  # noqa: E731
    batched = mean_pooled_layers(enc, "en", sents, split, w2s, max_seq_len=32, batch_size=3)
    assert batched.shape == (1 + enc.num_layers, 3, enc.dim)
    one_by_one = mean_pooled_layers(enc, "en", sents, split, w2s, max_seq_len=32, batch_size=1)
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)
    ids = WordEncoder(enc.dictionary, w2s, 32).encode_words(sents[2].split()).ids
    with torch.no_grad():
        states = enc.encode(torch.tensor([ids]), "en")
    for layer, h in enumerate(states):
        np.testing.assert_allclose(batched[layer, 2], h[0, 1:-1].mean(0).numpy(), atol=1e-5)
        assert not np.allclose(batched[layer, 2], h[0].mean(0).numpy(), atol=1e-4)  # <s>, </s> matter
    with pytest.raises(ValueError, match="no subword"):
        mean_pooled_layers(enc, "en", ["   "], split, w2s)


def test_section5_encoders_read_each_language_with_its_language_embedding(tmp_path):
    """XLM's model: a bilingual model's representations of a language are those of its own
    language embedding (as the models of Figures 5-7 and the shared-space analysis read them), and
    the random baseline has the checkpoint's language table and initialisation."""
    from xling.analysis.run import Encoders

    rng = random.Random(0)
    ckpt, bpe, dictionary = write_tiny_checkpoint(
        tmp_path, {lang: sentences(rng, lang, 200) for lang in LANGS}, merges=10, separate_layers=0,
        language_embeddings=True, mlm_head="xlm", layer_norm_eps=1e-12, activation_dropout=0.0, param_init="xlm")
    sents = sentences(random.Random(3), "fr", 5)
    encoders = Encoders(settings(), max_seq_len=32, batch_size=4)
    enc = loader.load_encoder(ckpt, dictionary)
    fr = encoders(ModelSpec(PretrainedModel.xling(ckpt, dictionary, bpe), "fr"), sents)
    as_en = encoders(ModelSpec(PretrainedModel.xling(ckpt, dictionary, bpe), "en", text_lang="fr"), sents)
    from xling.bpe import SubwordTokenizer

    w2s = SubwordTokenizer(bpe, "fr").words_to_subwords
    split = lambda texts: [t.split() for t in texts]  # noqa: E731
    np.testing.assert_allclose(fr, mean_pooled_layers(enc, "fr", sents, split, w2s, 32, 4), atol=1e-5)
    assert not np.allclose(fr, as_en, atol=1e-3)  # the language row is part of every layer
    rnd = loader.load_encoder(ckpt, dictionary, random_init_seed=3).encoder
    assert rnd.embed_languages.weight.shape == enc.encoder.embed_languages.weight.shape
    table = rnd.embed_tokens[0].weight[: rnd.vocab_size]  # the rows past the dictionary are zero
    assert abs(float(table.detach().std()) - enc.dim ** -0.5) < 0.2 * enc.dim ** -0.5  # XLM's initialisation


def test_random_init_is_seeded_and_untrained(model):
    ckpt, _, dictionary = model
    trained = loader.load_encoder(ckpt, dictionary).state_dict()
    r1 = loader.load_encoder(ckpt, dictionary, random_init_seed=3).state_dict()
    r2 = loader.load_encoder(ckpt, dictionary, random_init_seed=3).state_dict()
    r3 = loader.load_encoder(ckpt, dictionary, random_init_seed=4).state_dict()
    assert trained.keys() == r1.keys()
    weights = [k for k in r1 if k.endswith("weight") and r1[k].dim() == 2]
    assert all(torch.equal(r1[k], r2[k]) for k in r1)
    assert all(not torch.equal(r1[k], r3[k]) and not torch.equal(r1[k], trained[k]) for k in weights)


def test_retrieval_against_itself_is_perfect_and_against_other_text_is_not(model, corpora, tmp_path):
    """A model aligned with itself on identical text retrieves every test sentence (the map is the
    identity); with unrelated 'translations' retrieval stays near chance."""
    ckpt, bpe, dictionary = model
    en = ModelSpec(PretrainedModel.xling(ckpt, dictionary, bpe), "en")
    fr = ModelSpec(PretrainedModel.xling(ckpt, dictionary, bpe), "fr")
    same = tmp_path / "same.json"
    way = corpora / "extracted"
    # the 'foreign' side reads the English column as if it were French: same text, same model
    res = run_retrieval(en, en, way, (corpora / "t.eng_as_fra", corpora / "t.eng"), settings(), 60, 5, same)
    assert res["layers"] == [0, 1, 2] and res["p_at_1"] == [100.0] * 3 and res["n_train"] == 60
    assert json.loads(same.read_text()) == res
    other = run_retrieval(en, fr, way, (corpora / "t.fra", corpora / "t.eng"), settings(), 60, 5, tmp_path / "o.json")
    assert res["pair"] == "en-en" and other["pair"] == "en-fr" and other["n_test"] == 25
    # one meaning of source and target: the pair's order, the target mapped onto the source
    assert (other["source"], other["target"], other["map"]) == ("en", "fr", "target onto source")
    assert "random" not in other and "paired" not in other
    assert max(other["p_at_1"]) < 50
    assert all(0 <= v <= 100 for v in other["p_at_1"] + other["p_at_1_unaligned"])


def test_retrieval_beside_the_random_encoder_sentence_by_sentence(model, corpora, tmp_path):
    """The random-encoder baseline: the target side read by the same architecture untrained (seeded),
    through the same map; the paired table counts each test sentence once, at each encoder's best
    layer, and agrees with both P@1 curves."""
    ckpt, bpe, dictionary = model
    en = ModelSpec(PretrainedModel.xling(ckpt, dictionary, bpe), "en")
    way = corpora / "extracted"
    res = run_retrieval(en, en, way, (corpora / "t.eng_as_fra", corpora / "t.eng"), settings(), 60, 5,
                        tmp_path / "r.json", random_seed=7)
    again = run_retrieval(en, en, way, (corpora / "t.eng_as_fra", corpora / "t.eng"), settings(), 60, 5,
                          tmp_path / "r2.json", random_seed=7)
    rnd, paired = res["random"], res["paired"]
    assert rnd["seed"] == 7 and len(rnd["p_at_1"]) == len(res["layers"]) and again["random"] == rnd
    # the same sentences on both sides: an untrained encoder's mean-pooled states (a bag of its
    # subwords) map onto the trained one's as well, which is why chance is no yardstick for Figure 6
    assert max(rnd["p_at_1"]) == 100.0 == max(res["p_at_1"])
    n = res["n_test"]
    assert sum(paired[k] for k in ("both", "trained_only", "random_only", "neither")) == n
    i, j = paired["trained_layer"], paired["random_layer"]
    assert res["p_at_1"][i] == max(res["p_at_1"]) and rnd["p_at_1"][j] == max(rnd["p_at_1"])
    assert 100 * (paired["both"] + paired["trained_only"]) / n == pytest.approx(res["p_at_1"][i])
    assert 100 * (paired["both"] + paired["random_only"]) / n == pytest.approx(rnd["p_at_1"][j])


def test_cka_kinds(model, corpora, tmp_path):
    ckpt, bpe, dictionary = model
    en = ModelSpec(PretrainedModel.xling(ckpt, dictionary, bpe), "en")
    rows = fifteen_way(corpora / "extracted", ["en"], 40)["en"]
    models = {"monolingual": (en, en), "bilingual": None,
              "random": (en, ModelSpec(PretrainedModel.xling(ckpt, dictionary, bpe, 1), "en"))}
    res = run_cka("en-en_prime", (rows, rows), models, settings(), tmp_path / "cka.json")
    assert res["cka"]["bilingual"] is None and res["n"] == 40 and res["layers"] == [0, 1, 2]
    assert res["cka"]["monolingual"] == pytest.approx([1.0] * 3)  # same model, same text
    assert all(v < 0.99 for v in res["cka"]["random"])
    assert json.loads((tmp_path / "cka.json").read_text()) == res


def test_inputs_too_short_are_errors_with_the_file(corpora, tmp_path):
    with pytest.raises(InputError, match=r"xnli\.15way\.orig\.tsv.*at least 61"):
        fifteen_way(corpora / "extracted", ["en", "fr"], 61)
    with pytest.raises(InputError, match=r"exactly one xnli\.15way\.orig\.tsv"):
        fifteen_way(tmp_path, ["en"], 1)
    assert read_lines(corpora / "para.txt", 60)[0] == fifteen_way(corpora / "extracted", ["en"], 1)["en"][0]
    with pytest.raises(InputError, match=r"para\.txt.*at least 61 lines"):
        read_lines(corpora / "para.txt", 61)


def test_analysis_workflow_script_cka_for_en_prime(model, corpora, tmp_path):
    """workflow/scripts/analysis_cka.py with what Snakemake injects, for the en-en' column: the
    English model reads the 15-way English rows, en_prime reads the paraphrases."""
    from snakemake.iocontainers import Namedlist

    ckpt, bpe, dictionary = model
    files = {}
    for m in ("en", "en_prime"):
        files.update({f"{m}_checkpoint": str(ckpt), f"{m}_dictionary": str(dictionary), f"{m}_bpe": str(bpe)})
    out = tmp_path / "analysis" / "cka" / "en-en_prime.json"
    inputs = Namedlist(fromdict={**files, "way15": str(corpora / "extracted"), "paraphrase": str(corpora / "para.txt")})
    tokenize = {"en": {"moses_lang": "en", "segmenter": "none", "lowercase": False, "stanford_model": None}}
    sm = SimpleNamespace(
        input=inputs,
        output=Namedlist(fromdict={"result": str(out)}),
        params=Namedlist(fromdict={"source": "en", "target": "en_prime", "tokenize": tokenize, "rows": 30,
                                   "random_seed": 1, "bootstrap": 20, "max_seq_len": 32, "batch_size": 8}),
        threads=1, resources=Namedlist(fromdict={"gpu": 0}), log=[str(tmp_path / "log" / "a.log")],
        rule="analysis_cka", wildcards=Namedlist(fromdict={"target": "en_prime"}),
    )
    runpy.run_path(str(SCRIPTS / "analysis_cka.py"), init_globals={"snakemake": sm}, run_name="__snakemake__")
    res = json.loads(out.read_text())
    # same checkpoint on identical text (the paraphrase file repeats the English rows here)
    assert res["pair"] == "en-en_prime" and res["n"] == 30
    assert res["cka"]["monolingual"] == pytest.approx([1.0] * 3) and res["cka"]["bilingual"] is None
    assert res["bootstrap"]["resamples"] == 20 and res["cka_interval"]["bilingual"] is None
    assert list(res["difference_interval"]) == ["monolingual-random"]  # no bilingual model here
    assert all(lo <= v <= hi for v, (lo, hi) in zip(res["cka"]["random"], res["cka_interval"]["random"]))
    log = (tmp_path / "log" / "a.log").read_text()
    assert "monolingual:" in log and json.loads(log.strip().splitlines()[-1])["rule"] == "analysis_cka"


def test_cka_length_controlled_and_drift_beside_the_papers_measure(model, corpora, tmp_path):
    """The CKA job also writes the length-controlled CKA of the same kinds and layers (same model and
    text: 1, as the paper's) and each trained model's distance from its start (None: a checkpoint
    that records no seed, and the random encoder)."""
    ckpt, bpe, dictionary = model
    en = ModelSpec(PretrainedModel.xling(ckpt, dictionary, bpe), "en")
    rows = fifteen_way(corpora / "extracted", ["en"], 40)["en"]
    models = {"monolingual": (en, en), "bilingual": None,
              "random": (en, ModelSpec(PretrainedModel.xling(ckpt, dictionary, bpe, 1), "en"))}
    res = run_cka("en-en_prime", (rows, rows), models, settings(), tmp_path / "cka.json", bootstrap=5)
    controlled = res["length_controlled"]
    assert controlled["cka"]["monolingual"] == pytest.approx([1.0] * 3) and controlled["cka"]["bilingual"] is None
    assert len(controlled["cka"]["random"]) == 3 and len(controlled["cka_interval"]["random"]) == 3
    assert len(controlled["difference_interval"]["monolingual-random"]) == 3
    assert res["drift"] == {"monolingual": [None, None], "bilingual": None, "random": [None, None]}
