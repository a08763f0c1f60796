"""Liu et al.'s data sizes (3.2): the first N lines of a language's training split.

The first N are a random N when the split was shuffled (``preprocess.shuffle``, on by default as
in XLM's get-data-wiki.sh: ``xling.preprocess.split`` puts the kept lines in a seeded random order
before the split), and taking a prefix nests the sizes, so the 200k-line model reads a subset of
what the 1000k one reads, as "more data" means. With ``preprocess.shuffle: false`` the split keeps
the dump's order and the first N lines are the earliest articles' paragraphs."""

from __future__ import annotations

from pathlib import Path

from xling.errors import InputError
from xling.io import atomic_write


def copy_first_lines(src: Path, dst: Path, n: int) -> int:
    """Copy the first ``n`` lines of ``src`` to ``dst`` (atomically); fewer lines is an error,
    since a smaller sample would silently change the experiment."""
    if n < 1:
        raise ValueError(f"copy_first_lines: n must be >= 1, got {n}")
    written = 0
    with open(src, encoding="utf-8") as fin, atomic_write(dst) as fout:
        for line in fin:
            if written == n:
                break
            fout.write(line if line.endswith("\n") else line + "\n")
            written += 1
        if written < n:
            raise InputError(src, None, f"at least {n} sentences for this data size (liu2020.sizes)",
                             f"{written} lines")
    return written
