"""A tiny saved ``xling_mlm`` checkpoint (random weights) with its BPE manifest and dict.txt, laid
out as the pretraining stage leaves them; shared by the tests of the stages that load models."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch


def write_tiny_checkpoint(root: Path, sentences: dict[str, list[str]], merges: int = 20, layers: int = 2,
                          dim: int = 32, seed: int = 0, separate_layers: int = 1,
                          separate_embeddings: bool = False, vocab_multiple: int | None = 64,
                          **model_options) -> tuple[Path, Path, Path]:
    """``(checkpoint, bpe.json, dict.txt)`` for languages ``sentences`` (tokenised, one sentence
    per item; the BPE is learnt on them): the files a job that loads a model declares as inputs.
    Same ``seed``: the same weights. ``separate_layers``/``separate_embeddings``: its per-language
    parts (0/False: a Default-like model whose parts are all shared). ``vocab_multiple``: the rows
    its tables are padded to a multiple of; None: a checkpoint from before that option (no padding,
    no such argument). ``model_options``: XLM's model arguments (``language_embeddings=True``,
    ``mlm_head="xlm"``, ...; or another size, e.g. ``encoder_ffn_embed_dim``); without them the
    checkpoint is one of a model trained before they existed."""
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
        "separate_layers": separate_layers, **({} if vocab_multiple is None else {"vocab_multiple": vocab_multiple}),
        **model_options})
    mlm_model.base_architecture(margs)
    torch.manual_seed(seed)
    enc = mlm_model.XlingMLMEncoder(margs, d, len(sentences), None)
    if vocab_multiple is None:
        del margs.vocab_multiple  # base_architecture filled it in; older code had no such argument
    ckpt = root / "checkpoint_best.pt"
    torch.save({"cfg": {"model": margs, "task": argparse.Namespace(data=str(data_dir), languages=",".join(sentences))},
                "model": {f"encoder.{k}": v for k, v in enc.state_dict().items()}}, ckpt)
    return ckpt, bpe_dir / "bpe.json", data_dir / "dict.txt"
