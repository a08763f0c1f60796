"""Fine-tuning drives the pretraining stage's real encoder (xling_mlm via LoadedEncoder): a tiny
randomly initialised model with separate embeddings and a separate bottom layer, as the grid's
batched model (a grid of one, what every Table 1 job runs) and as a module (Liu et al.'s XNLI job,
Figure 5)."""

from __future__ import annotations

import argparse
import random

import pytest
import torch
from fairseq.data import Dictionary
from test_finetune import LANGS, WORDS, make_ner, per_word

from support.tiny_checkpoint import BERT_OPTIONS
from support.toy_tasks import finetune_one
from xling.finetune import FinetuneJob, Hyperparameters, TaskFiles

mlm_model = pytest.importorskip("xling.pretrain.fairseq_plugin.mlm_model")
from support.tiny_checkpoint import write_tiny_checkpoint  # noqa: E402

loader = pytest.importorskip("xling.model.checkpoint")


def tiny_loaded_encoder(separate_embeddings: bool, separate_layers: int, **options):
    d = Dictionary()
    for w in WORDS:
        d.add_symbol(w)
    d.add_symbol("<mask>")
    args = argparse.Namespace(encoder_layers=2, encoder_embed_dim=32, encoder_ffn_embed_dim=64,
                              encoder_attention_heads=4, activation_fn="gelu", dropout=0.0,
                              attention_dropout=0.0, max_positions=64,
                              separate_embeddings=separate_embeddings, separate_layers=separate_layers,
                              **{**BERT_OPTIONS, "activation_dropout": 0.0, "vocab_multiple": 1, **options})
    mlm_model.base_architecture(args)
    enc = mlm_model.XlingMLMEncoder(args, d, len(LANGS), None)
    return loader.LoadedEncoder(enc, d, LANGS)


def job(epochs, max_seq_len=64) -> FinetuneJob:
    return FinetuneJob(task="ner", src_lang="en", tgt_lang="fr", hp=Hyperparameters(batch_size=16, lr=3e-3),
                       epochs=epochs, seed=1, max_seq_len=max_seq_len, warmup_fraction=0.1)


def files(ner_dir) -> TaskFiles:
    return TaskFiles(train=ner_dir / "en" / "train.bio", en_dev=ner_dir / "en" / "dev.bio",
                     tgt_dev=ner_dir / "fr" / "dev.bio", tgt_test=ner_dir / "fr" / "test.bio")


@pytest.fixture(scope="module")
def ner_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("ner")
    rng = random.Random(5)
    for lang in LANGS:
        for split, n in [("train", 200), ("dev", 50), ("test", 50)]:
            (root / lang).mkdir(exist_ok=True)
            (root / lang / f"{split}.bio").write_text(make_ner(rng, n), encoding="utf-8")
    return root


@pytest.mark.parametrize("as_module", [False, True])
@pytest.mark.parametrize("sep_emb,sep_layers", [(False, 0), (True, 1)])
def test_real_encoder_finetunes_with_frozen_language_parts(ner_dir, sep_emb, sep_layers, as_module):
    torch.manual_seed(0)
    enc = tiny_loaded_encoder(sep_emb, sep_layers)
    specific = {lang: [p.detach().clone() for p in enc.language_specific_parameters(lang)] for lang in LANGS}
    shared = [p.detach().clone() for p in enc.shared_parameters()]
    assert (len(specific["en"]) > 0) == (sep_emb or sep_layers > 0)
    res = finetune_one(job(3), enc, per_word, files(ner_dir), as_module=as_module)
    assert res["en_dev"] > 60, res["history"]
    for lang in LANGS:
        for before, after in zip(specific[lang], enc.language_specific_parameters(lang)):
            assert torch.equal(before, after.detach())
    # a module trains in place; the grid trains copies and leaves the loaded encoder as it was
    moved = any(not torch.equal(b, a.detach()) for b, a in zip(shared, enc.shared_parameters()))
    assert moved == as_module
    with pytest.raises(ValueError, match="positions"):
        finetune_one(job(1, max_seq_len=65), enc, per_word, files(ner_dir), as_module=as_module)


@pytest.mark.parametrize("sep_emb", [False, True])
def test_language_embeddings_train_the_source_row_and_test_with_the_targets(ner_dir, sep_emb):
    """As XLM's XNLI fine-tuning: the table of language embeddings is trained (with English batches
    only English's row moves) and every split is encoded with its own language's id, the target's
    test set with the target's row (xnli.py L178)."""
    torch.manual_seed(0)
    enc = tiny_loaded_encoder(sep_emb, 0, language_embeddings=True, mlm_head="xlm", layer_norm_eps=1e-12,
                              activation_dropout=0.0, param_init="xlm")
    table = enc.encoder.embed_languages.weight
    before = table.detach().clone()
    seen = []
    encode = enc.encode

    def spy(tokens, lang, padding_mask=None):
        seen.append((lang, torch.is_grad_enabled()))
        return encode(tokens, lang, padding_mask)

    enc.encode = spy
    finetune_one(job(1), enc, per_word, files(ner_dir), as_module=True)
    assert not torch.equal(before[0], table[0].detach()) and torch.equal(before[1], table[1].detach())
    assert {lang for lang, training in seen if training} == {"en"}
    assert {lang for lang, training in seen if not training} == {"en", "fr"}


@pytest.fixture(scope="module")
def job_inputs(ner_dir, tmp_path_factory):
    """A saved xling_mlm checkpoint (random weights) and a BPE directory, as the earlier stages lay them out."""
    sentences = {}  # BPE learnt on the task's own words (8 words a sentence)
    for lang in LANGS:
        words = [line.split("\t")[0] for line in (ner_dir / lang / "train.bio").read_text().split("\n") if line]
        sentences[lang] = [" ".join(words[i:i + 8]) for i in range(0, len(words), 8)]
    return write_tiny_checkpoint(tmp_path_factory.mktemp("job"), sentences)


def test_a_one_cell_job_with_checkpoint_and_bpe(ner_dir, job_inputs, tmp_path):
    """The Snakemake job's path for a grid of one: load_encoder, SubwordTokenizer, result.json
    written atomically."""
    import json

    from xling.finetune import run_grid

    ckpt, bpe, dictionary = job_inputs
    out = tmp_path / "finetune" / "default" / "en-fr" / "ner" / "bs16_lr0.003" / "result.json"
    [res] = run_grid([job(3)], ckpt, dictionary, bpe, files(ner_dir), [out], metas=[{"setting": "default"}])
    saved = json.loads(out.read_text())
    assert saved["tgt_test"] == pytest.approx(res["tgt_test"]) and saved["meta"] == {"setting": "default"}
    assert saved["en_dev"] > 60, saved["history"]
    assert not list(out.parent.glob(".*tmp"))
