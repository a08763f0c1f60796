"""fastText skip-gram vectors in ``wiki.xx.vec``'s text format (``xling.analysis.vec``): Figure 4's
baseline trained on a run's own corpus (``analysis.words.fasttext: corpus``, rule
``fasttext_vectors``) and the testbed's ``wiki.xx.vec``, by fastText itself (PyPI's
``fasttext-numpy2``).

Training runs in a process of its own (``python -m xling.analysis.fasttext TEXT OUT SETTINGS``)
because fastText 0.9 initialises only the first tenth of its input matrix when it trains on fewer
than 10 threads, and leaves the rest as the allocator hands it over: in a process that has freed
large blocks before (any test run, the testbed's own generation), that memory is reused and the
vectors differ from run to run, or become NaN. Started with glibc's ``MALLOC_MMAP_THRESHOLD_``, a
fresh process gets its matrix from fresh, zero-filled pages, so the rest is zero and training on
one thread is deterministic (several threads would make the vectors differ from run to run).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from xling.errors import InputError
from xling.io import atomic_path

# fastText's words when nothing passes min_count (fasttext/src/fasttext.cc)
EMPTY_VOCABULARY = "Empty vocabulary"
# glibc serves every allocation of 128 KiB or more from fresh, zero-filled pages
MMAP_THRESHOLD = 128 * 1024


@dataclass(frozen=True)
class FastTextSettings:
    """fastText's options for skip-gram vectors (``analysis.words.fasttext_train``, or the
    testbed's): their fastText names in :meth:`options`."""

    dim: int
    epochs: int
    min_count: int
    window: int
    negatives: int
    minn: int
    maxn: int
    bucket: int
    lr: float

    def options(self) -> dict:
        """``fasttext.train_unsupervised``'s arguments: skip-gram, as ``wiki.xx.vec`` was trained,
        on one thread (the binding takes no seed: fastText's own, 0, on one thread is the same
        vectors every run)."""
        return {"model": "skipgram", "dim": self.dim, "epoch": self.epochs, "minCount": self.min_count,
                "ws": self.window, "neg": self.negatives, "minn": self.minn, "maxn": self.maxn,
                "bucket": self.bucket, "lr": self.lr, "thread": 1, "verbose": 0}


def train_vectors(text: str | Path, out: str | Path, settings: FastTextSettings) -> dict:
    """Skip-gram vectors of the words of ``text`` (whitespace-separated tokens, as the corpus
    stage writes them) written to ``out`` in fastText's text format, the most frequent word first;
    ``out`` appears whole or not at all. Returns the number of words and the dimension."""
    text = Path(text)
    if not text.is_file():
        raise InputError(text, None, "a text file to train fastText on", "no such file")
    # the child imports this very package: a job's xling is on sys.path only (workflow/scripts/_setup.py)
    src = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD), "PYTHONPATH": path}
    with atomic_path(out) as tmp:
        res = subprocess.run([sys.executable, "-m", "xling.analysis.fasttext", str(text), str(tmp),
                              json.dumps(asdict(settings))], capture_output=True, text=True, env=env)
        if res.returncode != 0:
            if EMPTY_VOCABULARY in res.stderr:
                raise InputError(text, None, f"a word seen at least min_count={settings.min_count} times "
                                 "(fastText's vocabulary)", "none")
            raise RuntimeError(f"fastText training failed (exit {res.returncode}):\n{res.stderr[-2000:]}")
        with open(tmp, encoding="utf-8") as fh:
            words, dim = (int(x) for x in fh.readline().split())
    return {"words": words, "dim": dim}


def _train(text: Path, out: Path, settings: FastTextSettings) -> None:
    """In the fresh process: train and write the vectors (fastText orders its words by count)."""
    import fasttext

    from xling.analysis.vec import write_vec

    model = fasttext.train_unsupervised(str(text), **settings.options())
    words = list(model.words)
    write_vec(out, words, np.stack([model.get_word_vector(w) for w in words]))


def main(argv: list[str]) -> None:
    _train(Path(argv[0]), Path(argv[1]), FastTextSettings(**json.loads(argv[2])))


if __name__ == "__main__":
    main(sys.argv[1:])
