"""word2vec (Mikolov et al. 2013), Liu et al. 2020's predictive baseline: gensim's implementation.

gensim reads the corpus once to build the vocabulary and once per epoch, so it needs a corpus it can
iterate again: a path to the tokenised text (one sentence per line, tokens separated by spaces) or a
re-iterable such as a list of token lists, never a one-shot generator (which would silently train
on nothing after the first pass).

Reproducibility: with ``workers=1`` and a fixed ``seed`` gensim 4.4 gives identical vectors. Its
initial vectors come from ``seed`` alone (``KeyedVectors.resize_vectors``); the ``hashfxn`` its docs
tie to ``PYTHONHASHSEED`` only reaches deprecated code, but we pass a stable one anyway so that no
path depends on Python's per-process string hashing. Several workers split the corpus between
threads in an order that depends on timing, so their runs differ.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
from gensim.models import Word2Vec
from gensim.models.word2vec import LineSentence

from xling.static.checks import check_counts


def _stable_hash(text: str) -> int:
    """A hash of ``text`` that is the same in every process (Python's ``hash`` of a str is not)."""
    return zlib.crc32(text.encode("utf-8"))


def train_word2vec(
    corpus: str | Path | Iterable[list[str]],
    dim: int,
    *,
    window: int = 5,
    min_count: int = 5,
    sg: int = 1,
    negative: int = 5,
    epochs: int = 5,
    seed: int = 1,
    workers: int = 1,
) -> tuple[list[str], np.ndarray]:
    """Train word2vec (skip-gram with negative sampling by default) and return its vocabulary and
    vectors: ``words[i]`` has row i of the (V x ``dim``) float32 array, most frequent word first (gensim's
    ``index_to_key``). Settings not taken here are gensim's defaults (learning rate 0.025 falling to
    0.0001, downsampling threshold 1e-3); hierarchical softmax is off."""
    check_counts("train_word2vec", dim=(dim, 1), window=(window, 1), min_count=(min_count, 1),
                 negative=(negative, 1), epochs=(epochs, 1), workers=(workers, 1))
    if sg not in (0, 1):
        raise ValueError(f"train_word2vec: sg must be 1 (skip-gram) or 0 (CBOW), got {sg!r}")
    if isinstance(corpus, (str, Path)):
        if not Path(corpus).is_file():
            raise FileNotFoundError(f"train_word2vec: no corpus file {corpus}")
        sentences = LineSentence(str(corpus))
    elif isinstance(corpus, Iterator):
        raise TypeError(
            "train_word2vec: the corpus is a one-shot iterator; gensim reads it once per epoch, "
            "so pass a file path or a list of token lists"
        )
    else:
        sentences = corpus

    model = Word2Vec(
        vector_size=dim,
        window=window,
        min_count=min_count,
        sg=sg,
        hs=0,
        negative=negative,
        seed=seed,
        workers=workers,
        hashfxn=_stable_hash,
    )
    model.build_vocab(sentences)
    if len(model.wv) == 0:
        raise ValueError(
            f"train_word2vec: no word occurs at least min_count={min_count} times "
            f"(the corpus has {model.corpus_total_words} tokens): the vocabulary would be empty"
        )
    model.train(sentences, total_examples=model.corpus_count, epochs=epochs)
    return list(model.wv.index_to_key), np.array(model.wv.vectors, dtype=np.float32)
