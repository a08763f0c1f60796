"""Parallel sentence readers for the analysis stage: Tatoeba (LASER v1 test sets), XNLI-15way and
the UD PUD treebanks (the same sentences in each language, aligned by ``sent_id``)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping

from conllu.parser import parse_comment_line

from xling.config import TATOEBA_CODES
from xling.errors import InputError
from xling.io import atomic_write
from xling.taskdata.textio import blank_line_blocks, clean_field, numbered_lines, tsv_header


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


def read_conllu_texts(path: str | Path) -> tuple[dict[str, str], dict[str, int]]:
    """``sent_id -> text`` of a CoNLL-U file (its ``# sent_id = `` and ``# text = `` comments,
    parsed by the conllu library), in file order, and the line of each sentence's ``sent_id``. A
    sentence without either comment, or a sent_id seen twice, is an error at that sentence."""
    path = Path(path)
    texts: dict[str, str] = {}
    lines: dict[str, int] = {}
    for block in blank_line_blocks(numbered_lines(path)):
        comments: dict[str, tuple[int, str]] = {}  # key -> (line, value), the first of each key
        for i, line in block:
            if line.startswith("#"):
                for key, value in parse_comment_line(line):
                    comments.setdefault(key, (i, value or ""))
        if all(line.startswith("#") for _, line in block):
            continue  # comments only (a document's header): no sentence
        at, sent_id = comments.get("sent_id", (block[0][0], ""))
        if not sent_id:
            raise InputError(path, at, "a '# sent_id = ' comment in the sentence starting here", block[0][1])
        text = comments.get("text", (at, ""))[1]
        if not text:
            raise InputError(path, at, f"a '# text = ' comment in sentence {sent_id}", "none")
        if sent_id in texts:
            raise InputError(path, at, f"a sent_id not seen before (first at line {lines[sent_id]})", sent_id)
        texts[sent_id], lines[sent_id] = text, at
    if not texts:
        raise InputError(path, None, "at least one sentence", "none")
    return texts, lines


def read_pud(files: Mapping[str, str | Path]) -> dict[str, list[str]]:
    """``language -> sentences`` of the PUD treebanks (``language -> .conllu``), row-aligned in
    the ``sent_id`` order of the first language's file: every sent_id must be in every file (a
    sentence missing from one is an error at the line of the first language's sent_id, naming the
    file that lacks it), and no file may hold more."""
    langs = list(files)
    if not langs:
        raise ValueError("read_pud: no PUD file given")
    read = {lang: read_conllu_texts(files[lang]) for lang in langs}
    first = langs[0]
    order, at = read[first]
    for lang in langs[1:]:
        texts, lines = read[lang]
        missing = [sid for sid in order if sid not in texts]
        if missing:
            raise InputError(files[first], at[missing[0]], f"sent_id {missing[0]} in {files[lang]} as well",
                             f"{len(missing)} of its sentences missing there")
        extra = [sid for sid in texts if sid not in order]
        if extra:
            raise InputError(files[lang], lines[extra[0]], f"only sent_ids of {files[first]}", extra[0])
    return {lang: [read[lang][0][sid] for sid in order] for lang in langs}


def write_pud_rows(files: Mapping[str, str | Path], out: str | Path) -> dict:
    """The PUD treebanks' sentences (:func:`read_pud`) as one row-aligned TSV in XNLI-15way's
    format (a header of language codes, a sentence per column), so that Section 5's jobs read
    PUD's rows as they read 15-way's (``xling.analysis.run.fifteen_way``). Returns the counts."""
    rows = read_pud(files)
    langs = list(rows)
    with atomic_write(out) as fh:
        fh.write("\t".join(langs) + "\n")
        for cells in zip(*(rows[lang] for lang in langs)):
            fh.write("\t".join(clean_field(c) for c in cells) + "\n")
    return {"languages": langs, "rows": len(rows[langs[0]])}
