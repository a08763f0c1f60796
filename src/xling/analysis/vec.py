"""fastText's text format of word vectors (``wiki.xx.vec``): the paper's Figure 4 baseline, which
the testbed also writes. numpy only, so the testbed can write it without torch."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from xling.errors import InputError


def read_vec(path: Path, max_rows: int | None = None) -> tuple[list[str], np.ndarray]:
    """The first ``max_rows`` rows of a fastText text file (``n d`` header, then ``word v1 .. vd``
    per line; fastText writes them by decreasing frequency). A word seen twice keeps its first row."""
    path = Path(path)
    words: list[str] = []
    rows: list[np.ndarray] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8", errors="strict") as fh:
        head = fh.readline().split()
        if len(head) != 2 or not all(h.isdigit() for h in head):
            raise InputError(path, 1, "a fastText header 'rows dimension'", " ".join(head))
        dim = int(head[1])
        for n, line in enumerate(fh, 2):
            if max_rows is not None and len(rows) >= max_rows:
                break
            fields = line.rstrip("\n").rstrip(" ").split(" ")
            if len(fields) != dim + 1:
                raise InputError(path, n, f"a word and {dim} numbers", line[:80].rstrip("\n"))
            try:
                vec = np.array(fields[1:], dtype=np.float32)
            except ValueError:
                raise InputError(path, n, f"{dim} numbers after the word", line[:80].rstrip("\n")) from None
            if fields[0] in seen:
                continue
            seen.add(fields[0])
            words.append(fields[0])
            rows.append(vec)
    if not rows:
        raise InputError(path, None, "at least one word vector", "none")
    return words, np.stack(rows)


def write_vec(path: Path, words: Sequence[str], vectors: np.ndarray) -> None:
    """``vectors`` in fastText's text format (the testbed's wiki.xx.vec)."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"{len(words)} {vectors.shape[1]}\n")
        for w, v in zip(words, vectors):
            fh.write(w + " " + " ".join(f"{x:.5f}" for x in v) + "\n")
