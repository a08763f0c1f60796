"""A tiny saved ``xling_mlm`` checkpoint (random weights) with its BPE manifest and dict.txt, laid
out as the pretraining stage leaves them; shared by the tests of the stages that load models."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

# BERT's head and initialisation without language embeddings (what this pipeline trained before
# it followed XLM): the tiny models' default, XLM's options given by name where a test needs them
BERT_OPTIONS = {"language_embeddings": False, "mlm_head": "bert", "layer_norm_eps": 1e-5, "activation_dropout": None,
                "param_init": "bert_xavier_attention"}


def write_tiny_checkpoint(root: Path, sentences: dict[str, list[str]], merges: int = 20, layers: int = 2,
                          dim: int = 32, seed: int = 0, separate_layers: int = 1,
                          separate_embeddings: bool = False, vocab_multiple: int | None = 64,
                          **model_options) -> tuple[Path, Path, Path]:
    """``(checkpoint, bpe.json, dict.txt)`` for languages ``sentences`` (tokenised, one sentence
    per item; the BPE is learnt on them): the files a job that loads a model declares as inputs.
    Same ``seed``: the same weights. ``separate_layers``/``separate_embeddings``: its per-language
    parts (0/False: a Default-like model whose parts are all shared). ``vocab_multiple``: the rows
    its tables are padded to a multiple of; None: a checkpoint from before that option (no such
    argument, which loading refuses). ``model_options``: the model's options by their fairseq
    names, over ``BERT_OPTIONS`` (XLM's: ``language_embeddings=True``, ``mlm_head="xlm"``, ...; or
    another size, e.g. ``encoder_ffn_embed_dim``)."""
    from fairseq.data import Dictionary

    from xling.bpe.build import build_bpe
    from xling.pretrain.fairseq_plugin import mlm_model

    texts = {}
    for lang, sents in sentences.items():
        texts[lang] = {}
        for split in ("train", "valid", "test"):
            p = root / "text" / f"{lang}.{split}.txt"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("\n".join(sents) + "\n", encoding="utf-8")
            texts[lang][split] = p
    bpe_dir = root / "bpe"
    build_bpe(bpe_dir, "joint", merges, texts)
    d = Dictionary()
    for lang in sentences:
        for tok in (bpe_dir / f"{lang}.train.bpe").read_text(encoding="utf-8").split():
            d.add_symbol(tok)
    data_dir = root / "bin"
    data_dir.mkdir(parents=True, exist_ok=True)
    d.save(str(data_dir / "dict.txt"))
    d.add_symbol("<mask>")
    margs = argparse.Namespace(**{
        "_name": "xling_mlm", "arch": "xling_mlm", "encoder_layers": layers, "encoder_embed_dim": dim,
        "encoder_ffn_embed_dim": 2 * dim, "encoder_attention_heads": 4, "activation_fn": "gelu", "dropout": 0.0,
        "attention_dropout": 0.0, "max_positions": 64, "separate_embeddings": separate_embeddings,
        "separate_layers": separate_layers, "shared_positions": False,
        **({} if vocab_multiple is None else {"vocab_multiple": vocab_multiple}), **BERT_OPTIONS, **model_options})
    if margs.activation_dropout is None:  # the config's null: the layers' dropout
        margs.activation_dropout = margs.dropout
    if vocab_multiple is None:
        margs.vocab_multiple = 1
    torch.manual_seed(seed)
    enc = mlm_model.XlingMLMEncoder(margs, d, len(sentences), None)
    if vocab_multiple is None:
        del margs.vocab_multiple  # as code from before --vocab-multiple saved it
    ckpt = root / "checkpoint_best.pt"
    torch.save({"cfg": {"model": margs, "task": argparse.Namespace(data=str(data_dir), languages=",".join(sentences))},
                "model": {f"encoder.{k}": v for k, v in enc.state_dict().items()}}, ckpt)
    return ckpt, bpe_dir / "bpe.json", data_dir / "dict.txt"
