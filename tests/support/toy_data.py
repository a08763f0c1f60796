"""Small synthetic binarised corpora in the binarize stage's layout, for tests and the
benchmark: ``dict.txt``, ``dict.<lang>.txt`` and ``<lang>/{train,valid,test}.{bin,idx}``.

Each language draws words from its own vocabulary (plus ``shared`` common tokens) along a
random Markov chain; with ``successors`` its splits share one chain, so masked tokens of the
validation data are predictable from the context training saw."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
from fairseq.data import Dictionary, indexed_dataset

from xling.config import fill_defaults
from xling.io import atomic_write


def _sentences(rng, words: list[str], n: int, min_len: int, max_len: int, table=None) -> list[list[str]]:
    v = len(words)
    # sparse random transition table: each word is followed by one of its row's successors (4, drawn
    # anew for each split, unless the caller gives the language's one table)
    table = rng.integers(0, v, size=(v, 4)) if table is None else table
    successors = table.shape[1]
    out = []
    for _ in range(n):
        w = int(rng.integers(v))
        sent = []
        for _ in range(int(rng.integers(min_len, max_len + 1))):
            sent.append(words[w])
            w = int(table[w, rng.integers(successors)])
        out.append(sent)
    return out


def write_toy_data(out_dir: str | Path, languages: list[str], n_train: dict[str, int] | int = 200,
                   n_valid: int = 20, vocab_per_language: int = 60, shared: int = 10,
                   min_len: int = 5, max_len: int = 20, seed: int = 0, successors: int | None = None) -> Path:
    """``successors``: each language's one chain, each word followed by one of that many, for all
    its splits (a corpus a model can learn: validation follows training's chain); None: a chain of
    4 drawn anew for each split (the corpora tests were written against)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    common = [f"num{i}" for i in range(shared)]
    splits: dict[str, dict[str, list[list[str]]]] = {}
    for lang in languages:
        words = [f"{lang}{i}" for i in range(vocab_per_language)] + common
        n_tr = n_train[lang] if isinstance(n_train, dict) else n_train
        table = None if successors is None else rng.integers(0, len(words), size=(len(words), successors))
        splits[lang] = {
            "train": _sentences(rng, words, n_tr, min_len, max_len, table),
            "valid": _sentences(rng, words, n_valid, min_len, max_len, table),
            "test": _sentences(rng, words, n_valid, min_len, max_len, table),
        }
    dictionary = Dictionary()
    per_lang: dict[str, Counter] = {}
    for lang in languages:
        per_lang[lang] = Counter(w for s in splits[lang]["train"] for w in s)
        for w, c in per_lang[lang].items():
            dictionary.add_symbol(w, c)
    dictionary.finalize(padding_factor=8)
    dictionary.save(str(out / "dict.txt"))
    for lang in languages:
        with atomic_write(out / f"dict.{lang}.txt") as fh:
            for w, c in per_lang[lang].most_common():
                fh.write(f"{w} {c}\n")
        (out / lang).mkdir(exist_ok=True)
        for split, sents in splits[lang].items():
            prefix = str(out / lang / split)
            builder = indexed_dataset.make_builder(prefix + ".bin", "mmap", vocab_size=len(dictionary))
            for s in sents:
                builder.add_item(dictionary.encode_line(" ".join(s), add_if_not_exist=False,
                                                        append_eos=True).long())
            builder.finalize(prefix + ".idx")
    return out


# A tiny model/pretraining config of the config.yaml shape, for tests and the benchmark
# (8 layers so that Sep L1-3 / L1-6 keep their meaning).
# The other keys take the schema's defaults, as a run's validated config does (XLM's model).
TINY_MODEL = fill_defaults({"model": dict(layers=8, heads=2, dim=64, ffn_dim=256, activation="gelu", dropout=0.1,
                                          attention_dropout=0.1, tokens_per_sample=64)})["model"]
# the same with BERT's head and initialisation and no language embeddings (what this pipeline
# trained before it followed XLM): for the tests of those options, and of batches mixing languages
BERT_MODEL = {**TINY_MODEL, "language_embeddings": False, "mlm_head": "bert", "layer_norm_eps": 1e-5,
              "activation_dropout": None, "init": "bert_xavier_attention"}
TINY_PRETRAIN = fill_defaults({"pretrain": dict(
    optimizer="adam", adam_betas=[0.9, 0.98], adam_eps=1e-8, weight_decay=0.0, clip_norm=0.0, lr=1e-3,
    lr_scheduler="inverse_sqrt", warmup_updates=10, batch_size_per_gpu=16, batch_gpus=1,
    streams_per_epoch_per_gpu=160, max_epoch=2, mask_prob=0.15, leave_unmasked_prob=0.1, random_token_prob=0.1,
    sampling_alpha=0.7, one_language_batches=True, precision="fp16", log_interval=5,
    save_interval_updates=5, keep_interval_updates=1)})["pretrain"]
