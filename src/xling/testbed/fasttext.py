"""Train the testbed's fastText vectors: ``python -m xling.testbed.fasttext TEXT OUT DIM EPOCHS``.

A process of its own because fastText 0.9 initialises only the first tenth of its input matrix
when it trains on fewer than 10 threads, and leaves the rest as the allocator hands it over: in a
process that has freed large blocks before (any test run, the testbed's own generation), that
memory is reused and the vectors differ from run to run, or become NaN. Started with glibc's
``MALLOC_MMAP_THRESHOLD_`` (``xling.testbed.generate.fasttext_vec`` sets it), a fresh process gets
its matrix from fresh, zero-filled pages, so the rest is zero and training is deterministic.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


def main(argv: list[str]) -> None:
    import fasttext

    from xling.analysis.vec import write_vec

    text, out, dim, epoch = Path(argv[0]), Path(argv[1]), int(argv[2]), int(argv[3])
    # fastText's wiki vectors: skip-gram, character n-grams 3-6; a small hash table, for a small corpus
    model = fasttext.train_unsupervised(str(text), model="skipgram", dim=dim, epoch=epoch, minCount=2, minn=3,
                                        maxn=6, bucket=100_000, thread=1, verbose=0)
    words = list(model.words)
    write_vec(out, words, np.stack([model.get_word_vector(w) for w in words]))


if __name__ == "__main__":
    main(sys.argv[1:])
