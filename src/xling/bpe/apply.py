"""Applying learnt BPE codes to text files and to single words."""

from __future__ import annotations

import os
from pathlib import Path

from subword_nmt.apply_bpe import BPE

from xling.bpe.manifest import SEPARATOR, prefix_token
from xling.io import atomic_path, atomic_write


def load_codes(codes_path: Path) -> BPE:
    with open(codes_path, encoding="utf-8") as fh:
        return BPE(fh, separator=SEPARATOR)


def segment_words(bpe: BPE, words: list[str], prefix_lang: str | None = None) -> list[list[str]]:
    """Subwords of each word: what `apply_file` writes for a line made of these words."""
    out = []
    for word in words:
        # the .bpe files split lines on ' ' only (as subword-nmt does), so only that (and a line
        # break) cannot be part of a word
        if not word or " " in word or "\n" in word:
            raise ValueError(f"expected a single non-empty word without spaces, got {word!r}")
        pieces = bpe.segment_tokens([word])
        if prefix_lang is not None:
            pieces = [prefix_token(prefix_lang, p) for p in pieces]
        out.append(pieces)
    return out


def prefix_line(line: str, lang: str) -> str:
    tokens = line.rstrip("\n").split(" ")
    return " ".join(prefix_token(lang, t) for t in tokens if t) + "\n"


def apply_file(bpe: BPE, src: Path, dst: Path, prefix_lang: str | None = None, workers: int = 1) -> None:
    """Segment every line of `src` into `dst` (atomically); with `prefix_lang` every subword gets
    that language's prefix (No-anchors mode)."""
    dst = Path(dst)
    if prefix_lang is None:
        with atomic_path(dst) as tmp, open(tmp, "w", encoding="utf-8") as out:
            bpe.process_lines(str(src), out, num_workers=max(1, workers))
        return
    # segment in parallel with subword-nmt, then prefix in one streaming pass
    tmp_seg = dst.parent / f".{dst.name}.{os.getpid()}.seg"
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(tmp_seg, "w", encoding="utf-8") as out:
            bpe.process_lines(str(src), out, num_workers=max(1, workers))
        with open(tmp_seg, encoding="utf-8") as fin, atomic_write(dst) as fout:
            for line in fin:
                fout.write(prefix_line(line, prefix_lang))
    finally:
        if tmp_seg.exists():
            tmp_seg.unlink()
