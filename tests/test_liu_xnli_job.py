"""Liu et al.'s XNLI job on a real (tiny) checkpoint: only the upper layers are fine-tuned, every
language is scored with and without the shift, alpha is chosen on dev, and alpha = 0 is the
unshifted model."""

import json
import random

import pytest

from xling.finetune.job import FinetuneJob, Hyperparameters
from xling.liu.xnli_job import choose_alpha, freeze_below, run_liu_xnli


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from support.tiny_checkpoint import write_tiny_checkpoint
    from support.xnli_files import write_xnli_files

    root = tmp_path_factory.mktemp("liu_xnli")
    rng = random.Random(0)
    words = {"en": "the cat sees a dog runs big small".split(), "fr": "le chat voit un chien court grand petit".split()}
    sents = {lang: [" ".join(rng.choice(w) for _ in range(5)) for _ in range(60)] for lang, w in words.items()}
    ckpt, bpe, dict_txt = write_tiny_checkpoint(root / "m", sents, merges=30, layers=2, separate_layers=0)
    texts = {lang: bpe.parent / f"{lang}.train.bpe" for lang in words}
    files = write_xnli_files(root, words, {"train": 48, "dev": 24, "test": 24}, rng)
    return root, ckpt, bpe, dict_txt, texts, files


def job(**kw) -> FinetuneJob:
    return FinetuneJob(task="xnli", src_lang="en", tgt_lang="fr",
                       hp=Hyperparameters(batch_size=8, encoder_lr=1e-3, classifier_lr=1e-2), epochs=2, seed=1,
                       max_seq_len=32, warmup_fraction=0.0, **kw)


def test_choose_alpha_prefers_the_smallest_of_equals():
    assert choose_alpha({0.0: 50.0, 0.5: 55.0, 1.0: 55.0, 2.0: 40.0}) == 0.5
    assert choose_alpha({0.0: 50.0, 0.5: 50.0}) == 0.0


def test_only_the_layers_above_the_fixed_ones_train(model):
    from xling.model.checkpoint import load_encoder

    root, ckpt, bpe, dict_txt, texts, files = model
    enc = load_encoder(ckpt, dict_txt)
    trainable = freeze_below(enc, 1, "en")
    upper = {id(p) for p in enc.encoder.shared_layers[1].parameters()}
    assert {id(p) for p in trainable} == upper
    assert all(p.requires_grad == (id(p) in upper) for p in enc.parameters())
    with pytest.raises(ValueError, match=r"freeze_layers must be in 0..1"):
        freeze_below(enc, 2, "en")


def test_run_scores_every_language_with_and_without_the_shift(model):
    root, ckpt, bpe, dict_txt, texts, files = model
    dev = {lang: files[lang, "dev"] for lang in ("en", "fr")}
    test = {lang: files[lang, "test"] for lang in ("en", "fr")}
    out = root / "out.json"
    res = run_liu_xnli(job(), ckpt, dict_txt, bpe, files["en", "train"], dev, test, texts, freeze=1,
                       alphas=[0.5, 1.0], n_sentences=30, out_json=out, meta={"model": "mlm_full", "size": 60})
    assert json.loads(out.read_text())["model"] == "mlm_full"
    assert res["freeze_layers"] == 1 and set(res["languages"]) == {"en", "fr"}
    en, fr = res["languages"]["en"], res["languages"]["fr"]
    assert en["alpha"] == 0.0 and set(en["dev_by_alpha"]) == {"0"}  # the source language is not shifted
    assert set(fr["dev_by_alpha"]) == {"0", "0.5", "1"}
    assert fr["alpha"] == choose_alpha({float(a): v for a, v in fr["dev_by_alpha"].items()})
    assert fr["dev"] == fr["dev_by_alpha"]["0"] and fr["mds_dev"] == fr["dev_by_alpha"][f"{fr['alpha']:g}"]
    if fr["alpha"] == 0.0:
        assert fr["mds_test"] == fr["test"]
    assert fr["examples"] == {"dev": 24, "test": 24}
    assert all(0.0 <= v <= 100.0 for lang in (en, fr) for v in (lang["dev"], lang["test"], lang["mds_test"]))
    assert res["best_epoch"] in (1, 2) and len(res["history"]) == 2


def test_all_layers_fine_tunes_the_whole_model_once_more(model):
    """Table 4's first row: a second fine-tuning with every parameter trainable, scored unshifted;
    the frozen run's numbers are the same as without it."""
    root, ckpt, bpe, dict_txt, texts, files = model
    dev = {lang: files[lang, "dev"] for lang in ("en", "fr")}
    test = {lang: files[lang, "test"] for lang in ("en", "fr")}
    args = dict(freeze=1, alphas=[1.0], n_sentences=30, meta={"model": "mlm_full", "size": 60})
    base = run_liu_xnli(job(), ckpt, dict_txt, bpe, files["en", "train"], dev, test, texts,
                        out_json=root / "a.json", **args)
    both = run_liu_xnli(job(), ckpt, dict_txt, bpe, files["en", "train"], dev, test, texts,
                        out_json=root / "b.json", all_layers=True, **args)
    assert "all_layers" not in base and len(both["all_layers"]["history"]) == 2
    for lang in ("en", "fr"):
        assert both["languages"][lang]["test"] == base["languages"][lang]["test"]
        assert 0.0 <= both["languages"][lang]["all_layers_test"] <= 100.0
        assert "all_layers_dev" in both["languages"][lang] and "all_layers_test" not in base["languages"][lang]
