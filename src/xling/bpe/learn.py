"""Learning BPE merge operations with subword-nmt from one or more tokenised text files."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path
from typing import Iterable

from subword_nmt.learn_bpe import get_vocabulary, learn_bpe

from xling.io import atomic_write


def count_words(paths: Iterable[Path], workers: int = 1) -> Counter:
    """Word frequencies over all files (split on ' ' as subword-nmt does, so that learning and
    applying see the same words)."""
    total: Counter = Counter()
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            # subword-nmt's own counter: parallel over byte ranges of the file when workers > 1
            total.update(get_vocabulary(fh, num_workers=max(1, workers)))
    return total


def learn_codes_from_counts(counts: Counter, codes_path: Path, merges: int, min_frequency: int = 2) -> int:
    """Learn up to `merges` merges (fewer when no pair is seen `min_frequency` times any more).

    Returns the number of merges written. The vocabulary is handed over sorted by (-count, word)
    so the result does not depend on the order words were counted in."""
    if merges < 1:
        raise ValueError(f"merges must be >= 1, got {merges}")
    if not counts:
        raise ValueError(f"no words to learn BPE from for {codes_path}")
    vocab_lines = [f"{w} {c}\n" for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    buf = io.StringIO()
    learn_bpe(vocab_lines, buf, merges, min_frequency=min_frequency, is_dict=True)
    text = buf.getvalue()
    with atomic_write(codes_path) as fh:
        fh.write(text)
    # first line is subword-nmt's '#version: 0.2' header
    return text.count("\n") - 1


def learn_codes(paths: Iterable[Path], codes_path: Path, merges: int, min_frequency: int = 2, workers: int = 1) -> int:
    """Learn one set of codes on the concatenation of `paths` (joint BPE when they are several
    languages' training files)."""
    return learn_codes_from_counts(count_words(paths, workers), codes_path, merges, min_frequency)
