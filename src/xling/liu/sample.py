"""Liu et al.'s data sizes (3.2): "200k and 1000k sentences per language", drawn at random from a
language's training split.

A line of the training split is a paragraph as WikiExtractor left it (several sentences), not a
sentence (and with ``preprocess.shuffle: false`` the split keeps the dump's order, its earliest
articles first). So each line is cut into sentences by ``sentencex`` (Wikimedia's splitter: rules
for ~300 languages, Thai and Chinese included; it reads the Moses-tokenised text as it is; the
package's splitters are in ``xling.preprocess.sentences``), and N
of all the split's sentences are drawn
uniformly at random with a seed: every sentence gets a seeded random key and the N smallest keys
are kept. One pass, N sentences in memory, and the sizes nest: with one seed, the 200k sample lies
inside the 1000k one, as "more data" means. The sample keeps the split's order."""

from __future__ import annotations

import heapq
from pathlib import Path
from typing import Iterator

import numpy as np

from xling.errors import InputError
from xling.io import atomic_write
from xling.preprocess.sentences import splitter


def random_keys(seed: int, block: int = 1 << 16) -> Iterator[float]:
    """An endless seeded stream of uniform keys, drawn in blocks (one numpy call per block)."""
    rng = np.random.default_rng(int(seed))
    while True:
        yield from rng.random(block).tolist()


def sample_sentences(src: Path, dst: Path, n: int, lang: str, seed: int, split: str = "sentencex") -> dict:
    """Write ``n`` sentences of ``src`` drawn uniformly at random (seeded) to ``dst`` (atomically),
    one per line in ``src``'s order. Fewer sentences than ``n`` is an error, since a smaller sample
    would silently change the experiment. Returns the counts read and written."""
    if n < 1:
        raise ValueError(f"sample_sentences: n must be >= 1, got {n}")
    cut = splitter(split, lang)
    keys = random_keys(seed)
    kept: list[tuple[float, int, str]] = []  # max-heap on the key (negated): the n smallest so far
    total = lines = 0
    with open(src, encoding="utf-8") as fin:
        for line in fin:
            lines += 1
            for sentence in cut(line.strip()):
                sentence = sentence.strip()
                if not sentence:
                    continue
                key = next(keys)
                if len(kept) < n:
                    heapq.heappush(kept, (-key, total, sentence))
                elif key < -kept[0][0]:
                    heapq.heapreplace(kept, (-key, total, sentence))
                total += 1
    if total < n:
        raise InputError(src, None, f"at least {n} sentences for this data size (liu2020.sizes)",
                         f"{total} sentences in {lines} lines")
    with atomic_write(dst) as fout:
        for _, _, sentence in sorted(kept, key=lambda k: k[1]):
            fout.write(sentence + "\n")
    return {"lines": lines, "sentences": total, "written": n}
