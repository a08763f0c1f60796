"""Line reading with file/line positions for error messages, and the normalised-file writers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import IO, Iterable, Iterator

from xling.errors import InputError
from xling.io import atomic_write


def numbered_lines(path: str | Path, fh: IO[bytes] | None = None) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` (1-based, line without its newline) from a UTF-8 file.

    ``fh``: an already open binary stream (a tar member) that ``path`` only names in messages.
    """
    stream = fh if fh is not None else open(path, "rb")
    try:
        for i, raw in enumerate(stream, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(path, i, "UTF-8 text", repr(raw[:60])) from e
            yield i, line.rstrip("\r\n")
    finally:
        if fh is None:
            stream.close()


def tsv_header(path: str | Path, lines: Iterator[tuple[int, str]], expected: str) -> tuple[list[str], str]:
    """The first line of ``lines`` (:func:`numbered_lines` of ``path``) as a TSV header: its fields
    and the line itself; an empty file is an InputError at line 1 saying what was ``expected``."""
    try:
        _, line = next(lines)
    except StopIteration:
        raise InputError(path, 1, expected, "end of file") from None
    return line.split("\t"), line


def clean_field(text: str) -> str:
    """Make a sentence safe for one TSV field: tabs and line breaks become spaces."""
    return re.sub(r"[\t\r\n]+", " ", text).strip()


NLI_HEADER = ("premise", "hypothesis", "label")
NLI_LABELS = ("entailment", "neutral", "contradiction")


def write_nli_tsv(path: str | Path, rows: Iterable[tuple[str, str, str]]) -> int:
    """Write ``premise\\thypothesis\\tlabel`` with a header; returns the number of examples."""
    n = 0
    with atomic_write(path) as out:
        out.write("\t".join(NLI_HEADER) + "\n")
        for premise, hypothesis, label in rows:
            if label not in NLI_LABELS:
                raise ValueError(f"NLI label {label!r} not in {NLI_LABELS}")
            out.write(f"{clean_field(premise)}\t{clean_field(hypothesis)}\t{label}\n")
            n += 1
    return n


def write_bio(path: str | Path, sentences: Iterable[list[tuple[str, str]]]) -> int:
    """Write ``word\\tTAG`` lines, a blank line after each sentence; returns the sentence count."""
    n = 0
    with atomic_write(path) as out:
        for sent in sentences:
            if not sent:
                continue
            for word, tag in sent:
                if not word or any(c in word for c in "\t\n\r"):
                    raise ValueError(f"word {word!r} is empty or holds a tab/newline")
                out.write(f"{word}\t{tag}\n")
            out.write("\n")
            n += 1
    return n


def blank_line_blocks(lines: Iterable[tuple[int, str]]) -> Iterator[list[tuple[int, str]]]:
    """Group ``(line_number, line)`` pairs into the non-empty runs between blank lines."""
    cur: list[tuple[int, str]] = []
    for i, line in lines:
        if line.strip():
            cur.append((i, line))
        elif cur:
            yield cur
            cur = []
    if cur:
        yield cur


def is_bio_tag(tag: str) -> bool:
    return tag == "O" or (tag[:2] in ("B-", "I-") and len(tag) > 2)


def read_bio(path: str | Path) -> list[list[tuple[str, str]]]:
    """Read a normalised ``.bio`` file: sentences of ``(word, tag)``, blank-line separated; tags
    must be O, B-X or I-X. An empty file gives no sentences (callers that need some say so)."""
    sents = []
    for block in blank_line_blocks(numbered_lines(path)):
        sent = []
        for i, line in block:
            cols = line.split("\t")
            if len(cols) != 2 or not cols[0] or not is_bio_tag(cols[1]):
                raise InputError(path, i, "'word<TAB>TAG' with TAG in O, B-X, I-X", line)
            sent.append((cols[0], cols[1]))
        sents.append(sent)
    return sents
