"""Applying learnt BPE codes to text files and to single words."""

from __future__ import annotations

from pathlib import Path

from subword_nmt.apply_bpe import BPE

from xling.bpe.manifest import SEPARATOR, prefix_token
from xling.chunked_map import map_chunks
from xling.io import atomic_write
from xling.progress import progress


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


# lines per chunk of a parallel BPE pass: large enough that a worker's round trip is negligible
BPE_CHUNK_LINES = 5000


def _line_segmenter(arg: tuple[BPE, str | None]):
    """What a BPE worker applies to a chunk of lines (each with its newline, as subword-nmt's own
    ``process_lines`` reads them): ``process_line``, then the language prefix in No-anchors mode."""
    bpe, prefix_lang = arg
    if prefix_lang is None:
        return lambda lines: [bpe.process_line(line) for line in lines]
    return lambda lines: [prefix_line(bpe.process_line(line), prefix_lang) for line in lines]


def apply_file(bpe: BPE, src: Path, dst: Path, prefix_lang: str | None = None, workers: int = 1) -> None:
    """Segment every line of `src` into `dst` (atomically); with `prefix_lang` every subword gets
    that language's prefix (No-anchors mode). Line for line what subword-nmt's ``process_lines``
    writes, in ordered parallel chunks (xling.chunked_map) so that a progress line can follow it."""
    with open(src, encoding="utf-8") as fin, atomic_write(dst) as fout:
        lines = map_chunks(fin, _line_segmenter, (bpe, prefix_lang), max(1, workers), BPE_CHUNK_LINES)
        for line in progress(lines, desc=f"BPE {Path(src).name}", unit="line"):
            fout.write(line)
