"""XLM's training text of joint BPE codes: the same number of lines of each language, drawn with
replacement (XLM's README: ``shuf -r -n 10000000 data/wiki/train.en >> bpe.train``, the same for the
other language, then ``learnbpe`` on ``bpe.train``). Without it the larger corpus's words dominate
the merges, and with them the shared vocabulary (the anchors).

The sample is never written out: a line drawn m times adds its words m times to the counts, which
is what counting the concatenated ``shuf -r`` output gives. Memory: the draws (~24 bytes each,
240 MB for XLM's 10M lines) and the counts; time: one pass over each train split.
"""

from __future__ import annotations

import zlib
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator, Mapping

import numpy as np

from xling.errors import InputError

PAIR_CHUNK = 1 << 16  # draws turned into Python ints at a time


@dataclass(frozen=True)
class JointSample:
    """``lines`` lines drawn uniformly with replacement from each language's train split (the
    config's ``bpe`` section: ``sample_lines``, ``sample_seed``)."""

    lines: int
    seed: int

    def __post_init__(self):
        if self.lines < 1:
            raise ValueError(f"a BPE sample needs at least one line per language, got {self.lines}")


def sample_params(bpe: Mapping, mode: str) -> dict | None:
    """A ``bpe`` rule's ``sample`` param: the JointSample fields for joint codes when the config's
    ``bpe.sample_lines`` is set, else None (per-language codes learn on the whole train split, as
    XLM's monolingual recipe does)."""
    if mode != "joint" or bpe["sample_lines"] is None:
        return None
    return asdict(JointSample(lines=int(bpe["sample_lines"]), seed=int(bpe["sample_seed"])))


def count_lines(path: str | Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


def draw_lines(n_lines: int, k: int, seed: int, lang: str) -> tuple[np.ndarray, np.ndarray]:
    """``k`` line numbers drawn uniformly with replacement from ``range(n_lines)``: the distinct
    ones in increasing order and how many times each was drawn. Each language has its own stream
    of the seed (a language's sample is the same in every pair it is part of)."""
    if n_lines < 1:
        raise ValueError("no lines to draw from")
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(seed), zlib.crc32(lang.encode())])))
    return np.unique(rng.integers(0, n_lines, size=k, dtype=np.int64), return_counts=True)


def _pairs(lines: np.ndarray, times: np.ndarray) -> Iterator[tuple[int, int]]:
    for a in range(0, lines.size, PAIR_CHUNK):
        yield from zip(lines[a:a + PAIR_CHUNK].tolist(), times[a:a + PAIR_CHUNK].tolist())


def sampled_word_counts(path: str | Path, lang: str, sample: JointSample) -> Counter:
    """Word counts of ``sample.lines`` lines drawn with replacement from ``path``, words split on
    ' ' as subword-nmt's ``get_vocabulary`` splits them."""
    n = count_lines(path)
    if n == 0:
        raise InputError(path, None, "a train split with lines to sample the BPE training text from", "an empty file")
    pairs = _pairs(*draw_lines(n, sample.lines, sample.seed, lang))
    want, times = next(pairs)
    counts: Counter = Counter()
    with open(path, "rb") as fh:
        for i, raw in enumerate(fh):
            if i != want:
                continue
            try:
                words = [w for w in raw.decode("utf-8").strip("\r\n ").split(" ") if w]
            except UnicodeDecodeError as e:
                raise InputError(path, i + 1, "UTF-8 text", repr(raw[max(0, e.start - 20): e.end + 20])) from None
            if times == 1:
                counts.update(words)
            else:
                for w in words:
                    counts[w] += times
            nxt = next(pairs, None)
            if nxt is None:
                break
            want, times = nxt
    return counts


def joint_sample_counts(train: Mapping[str, Path], sample: JointSample) -> Counter:
    """Word counts of XLM's ``bpe.train``: ``sample.lines`` drawn lines of each language's train file."""
    total: Counter = Counter()
    for lang, path in train.items():
        total.update(sampled_word_counts(path, lang, sample))
    return total
