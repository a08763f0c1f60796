"""Parallel sentence readers for the analysis stage: Tatoeba (LASER v1 test sets) and XNLI-15way."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from xling.config import TATOEBA_CODES
from xling.errors import InputError
from xling.taskdata.textio import numbered_lines, tsv_header


def tatoeba_files(root: str | Path, lang: str) -> tuple[Path, Path]:
    """``(tatoeba.<xxx>-eng.<xxx>, tatoeba.<xxx>-eng.eng)`` under ``root`` for a paper language code."""
    code = TATOEBA_CODES.get(lang, lang)
    root = Path(root)
    return root / f"tatoeba.{code}-eng.{code}", root / f"tatoeba.{code}-eng.eng"


def read_sentences(path: str | Path) -> list[str]:
    """One sentence per line of a line-aligned file; an empty line is an error (it would shift the
    alignment)."""
    path = Path(path)
    out = []
    for i, line in numbered_lines(path):
        if not line.strip():
            raise InputError(path, i, "a non-empty sentence (files are line-aligned)", line)
        out.append(line)
    return out


def read_tatoeba(foreign: str | Path, english: str | Path) -> tuple[list[str], list[str]]:
    """Line-aligned ``(foreign sentences, English sentences)``; unequal line counts raise."""
    foreign, english = Path(foreign), Path(english)
    xs, ens = read_sentences(foreign), read_sentences(english)
    if len(xs) != len(ens):
        line = min(len(xs), len(ens)) + 1
        short = foreign if len(xs) < len(ens) else english
        raise InputError(short, line, f"as many lines as {english if short == foreign else foreign} "
                                      f"({max(len(xs), len(ens))})", f"{min(len(xs), len(ens))} lines")
    return xs, ens


def read_xnli_15way(path: str | Path, languages: Iterable[str] | None = None) -> dict[str, list[str]]:
    """``language -> sentences`` (row-aligned) from ``XNLI-15way/xnli.15way.orig.tsv``, whose header
    lists the language codes."""
    path = Path(path)
    lines = numbered_lines(path)
    header, header_line = tsv_header(path, lines, "a header of language codes")
    if len(set(header)) != len(header) or not all(h.strip() for h in header):
        raise InputError(path, 1, "distinct, non-empty language codes", header_line)
    wanted = header if languages is None else list(languages)
    missing = [lang for lang in wanted if lang not in header]
    if missing:
        raise InputError(path, 1, f"columns for {', '.join(missing)}", header_line)
    idx = {lang: header.index(lang) for lang in wanted}
    out: dict[str, list[str]] = {lang: [] for lang in wanted}
    for i, line in lines:
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            raise InputError(path, i, f"{len(header)} tab-separated columns", f"{len(cells)} columns")
        for lang, k in idx.items():
            out[lang].append(cells[k])
    return out
