"""Fine-tuning drives the pretraining stage's real encoder (xling_mlm via LoadedEncoder) the same way:
a tiny randomly initialised model with separate embeddings and a separate bottom layer."""

from __future__ import annotations

import argparse
import random

import pytest
import torch
from fairseq.data import Dictionary
from test_finetune import LANGS, WORDS, make_ner, per_word

from xling.finetune import FinetuneJob, TaskFiles, finetune

mlm_model = pytest.importorskip("xling.pretrain.fairseq_plugin.mlm_model")
from support.tiny_checkpoint import write_tiny_checkpoint  # noqa: E402

loader = pytest.importorskip("xling.pretrain.loader")


def tiny_loaded_encoder(separate_embeddings: bool, separate_layers: int, **options):
    d = Dictionary()
    for w in WORDS:
        d.add_symbol(w)
    d.add_symbol("<mask>")
    args = argparse.Namespace(encoder_layers=2, encoder_embed_dim=32, encoder_ffn_embed_dim=64,
                              encoder_attention_heads=4, activation_fn="gelu", dropout=0.0,
                              attention_dropout=0.0, max_positions=64,
                              separate_embeddings=separate_embeddings, separate_layers=separate_layers, **options)
    mlm_model.base_architecture(args)
    enc = mlm_model.XlingMLMEncoder(args, d, len(LANGS), None)
    return loader.LoadedEncoder(enc, d, LANGS)


def job(epochs, max_seq_len=64) -> FinetuneJob:
    return FinetuneJob(task="ner", src_lang="en", tgt_lang="fr", hp={"batch_size": 16, "lr": 3e-3}, epochs=epochs,
                       seed=1, max_seq_len=max_seq_len, warmup_fraction=0.1)


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


@pytest.mark.parametrize("sep_emb,sep_layers", [(False, 0), (True, 1)])
def test_real_encoder_finetunes_with_frozen_language_parts(ner_dir, sep_emb, sep_layers):
    torch.manual_seed(0)
    enc = tiny_loaded_encoder(sep_emb, sep_layers)
    specific = {lang: [p.detach().clone() for p in enc.language_specific_parameters(lang)] for lang in LANGS}
    assert (len(specific["en"]) > 0) == (sep_emb or sep_layers > 0)
    res = finetune(job(3), enc, per_word, files(ner_dir))
    assert res["en_dev"] > 60, res["history"]
    for lang in LANGS:
        for before, after in zip(specific[lang], enc.language_specific_parameters(lang)):
            assert torch.equal(before, after.detach())
    with pytest.raises(ValueError, match="positions"):
        finetune(job(1, max_seq_len=65), enc, per_word, files(ner_dir))


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
    finetune(job(1), enc, per_word, files(ner_dir))
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


def test_run_finetune_job_with_checkpoint_and_bpe(ner_dir, job_inputs, tmp_path):
    """The Snakemake job's path: load_encoder, SubwordTokenizer, result.json written atomically."""
    import json

    from xling.finetune import run_finetune

    ckpt, bpe, dictionary = job_inputs
    out = tmp_path / "finetune" / "default" / "en-fr" / "ner" / "bs16_lr0.003" / "result.json"
    res = run_finetune(job(3), ckpt, dictionary, bpe, files(ner_dir), out, meta={"setting": "default"})
    saved = json.loads(out.read_text())
    assert saved["tgt_test"] == pytest.approx(res["tgt_test"]) and saved["meta"] == {"setting": "default"}
    assert saved["en_dev"] > 60, saved["history"]
    assert not list(out.parent.glob(".*tmp"))


def test_finetune_workflow_script(ner_dir, job_inputs, tmp_path):
    """workflow/scripts/finetune.py with the objects Snakemake injects."""
    import json
    import runpy
    from pathlib import Path
    from types import SimpleNamespace

    from snakemake.iocontainers import Namedlist

    ckpt, bpe, dictionary = job_inputs
    out = tmp_path / "r" / "result.json"
    tokenize = {lang: {"moses_lang": lang, "segmenter": "none", "lowercase": False, "stanford_model": None}
                for lang in ("en", "fr")}
    job_params = {"task": "ner", "src_lang": "en", "tgt_lang": "fr", "hp": {"batch_size": 16, "lr": 3e-3},
                  "epochs": 1, "seed": 1, "max_seq_len": 64, "schedule": "warmup_linear", "warmup_fraction": 0.1,
                  "epoch_size": None, "max_train_examples": None, "tokenize": tokenize}
    task_files = {"train": ner_dir / "en" / "train.bio", "en_dev": ner_dir / "en" / "dev.bio",
                  "tgt_dev": ner_dir / "fr" / "dev.bio", "tgt_test": ner_dir / "fr" / "test.bio"}
    sm = SimpleNamespace(
        input=Namedlist(fromdict={"checkpoint": str(ckpt), "bpe": str(bpe), "dictionary": str(dictionary),
                                  **{k: str(v) for k, v in task_files.items()}}),
        output=Namedlist(fromdict={"result": str(out)}),
        params=Namedlist(fromdict={"job": job_params, "meta": {"setting": "default", "pair": "en-fr"}}),
        threads=1, resources=Namedlist(fromdict={"gpu": 0}), log=[str(tmp_path / "log" / "ft.log")],
        rule="finetune", wildcards=Namedlist(fromdict={"task": "ner"}),
    )
    script = Path(__file__).resolve().parents[1] / "workflow" / "scripts" / "finetune.py"
    runpy.run_path(str(script), init_globals={"snakemake": sm}, run_name="__snakemake__")
    rec = json.loads(out.read_text())
    assert rec["epochs"] == 1 and rec["schedule"] == "warmup_linear" and rec["meta"]["pair"] == "en-fr"
    log = (tmp_path / "log" / "ft.log").read_text()
    assert "epoch 1:" in log
    # the log ends with the job's one-line summary
    summary = json.loads(log.strip().splitlines()[-1])
    assert summary["rule"] == "finetune" and summary["wildcards"] == {"task": "ner"}
    assert summary["tgt_test"] == pytest.approx(rec["tgt_test"])
