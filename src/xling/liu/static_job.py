"""Liu et al.'s static baselines (3.2) as one job: word2vec or GloVe trained jointly on every
language's BPE training text of one data size ("unsupervised joint training": the languages'
sentences in one corpus, as the MLM reads them), written as a fastText-format ``.vec`` of the BPE
pieces. A word's vector is built from its pieces' at retrieval time (``xling.liu.retrieval_job``)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Sequence

from xling.analysis.vec import write_vec
from xling.errors import InputError
from xling.io import atomic_path
from xling.static import build_vocab, cooccurrence, train_glove, train_word2vec

METHODS = ("word2vec", "glove")


class TokenLines:
    """The non-empty lines of several text files as token lists; iterable again and again (gensim
    reads its corpus once per epoch) without holding the text in memory."""

    def __init__(self, paths: Sequence[Path]):
        self.paths = [Path(p) for p in paths]

    def __iter__(self) -> Iterator[list[str]]:
        for path in self.paths:
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    tokens = line.split()
                    if tokens:
                        yield tokens


def train_static(method: str, texts: Sequence[Path], out_vec: Path, settings: dict, seed: int = 1,
                 threads: int = 1) -> dict:
    """Train ``method`` (word2vec | glove) on ``texts`` with ``settings`` (the config's
    ``liu2020.static``: dim, min_count and the method's own section) and write ``out_vec``."""
    if method not in METHODS:
        raise ValueError(f"unknown static method {method!r} (expected one of {', '.join(METHODS)})")
    for path in texts:
        if not Path(path).is_file():
            raise InputError(path, None, "a BPE training text")
    lines = TokenLines(texts)
    dim, min_count = int(settings["dim"]), int(settings["min_count"])
    if method == "word2vec":
        w = settings["word2vec"]
        # one worker unless asked: gensim's threads split the corpus in a timing-dependent order
        words, vectors = train_word2vec(lines, dim, window=int(w["window"]), min_count=min_count,
                                        negative=int(w["negative"]), epochs=int(w["epochs"]), seed=seed,
                                        workers=threads)
        info = {}
    else:
        g = settings["glove"]
        vocab = build_vocab(lines, min_count)
        if not vocab:
            raise InputError(texts[0], None, f"some token seen at least min_count={min_count} times")
        X = cooccurrence(lines, vocab, int(g["window"]))
        vectors = train_glove(X, dim, epochs=int(g["epochs"]), lr=float(g["lr"]), x_max=float(g["x_max"]),
                              alpha=float(g["alpha"]), batch_size=int(g["batch_size"]), seed=seed, threads=threads)
        words = list(vocab)
        info = {"cooccurrences": int(X.nnz)}
    with atomic_path(out_vec) as tmp:
        write_vec(tmp, words, vectors)
    return {"method": method, "words": len(words), "dim": dim, **info}
