"""NER readers (WikiAnn/panx, CoNLL-2003 English, Levow 2006 Chinese) -> ``tasks/ner/<lang>/*.bio``.

All readers return sentences as lists of ``(word, tag)`` with BIO tags over entity types
PER, ORG, LOC (and MISC for CoNLL-2003).
"""

from __future__ import annotations

import re
import tarfile
from pathlib import Path
from typing import Callable, Iterable, Iterator

from xling.errors import InputError
from xling.taskdata.textio import blank_line_blocks, numbered_lines, write_bio

Sentence = list[tuple[str, str]]

WIKIANN_TYPES = ("PER", "ORG", "LOC")
CONLL_TYPES = ("PER", "ORG", "LOC", "MISC")
# MSRA/SIGHAN releases tag persons, places, organisations as NR, NS, NT; others use PER/LOC/ORG.
LEVOW_TYPES = {"PER": "PER", "LOC": "LOC", "ORG": "ORG", "NR": "PER", "NS": "LOC", "NT": "ORG"}

_TAG = re.compile(r"(?:O|([BI])-([A-Za-z]+))")


def parse_tag(path: Path, line: int, tag: str, types: Iterable[str]) -> tuple[str, str | None]:
    """``'B-PER' -> ('B', 'PER')``, ``'O' -> ('O', None)``; unknown prefixes or types raise."""
    m = _TAG.fullmatch(tag)
    allowed = tuple(types)
    if not m or (m.group(2) is not None and m.group(2) not in allowed):
        raise InputError(path, line, f"a tag O, B-X or I-X with X in {'|'.join(allowed)}", tag)
    return ("O", None) if m.group(1) is None else (m.group(1), m.group(2))


def iob1_to_bio(tags: list[str]) -> list[str]:
    """IOB1 (CoNLL-2003: ``I-`` inside and at the start of an entity, ``B-`` only between two
    adjacent entities of one type) to BIO (every entity starts with ``B-``)."""
    out = []
    prev_type = None
    for tag in tags:
        if tag == "O":
            out.append("O")
            prev_type = None
            continue
        prefix, typ = tag.split("-", 1)
        if prefix == "I" and prev_type != typ:
            out.append("B-" + typ)  # an entity begins here
        else:
            out.append(tag)
        prev_type = typ
    return out


def entity_spans(tags: list[str]) -> list[tuple[int, int, str]]:
    """``(start, end, type)`` spans (end exclusive) of a BIO sequence; an ``I-X`` that does not
    continue an ``X`` entity starts a new one (conlleval's reading)."""
    spans: list[tuple[int, int, str]] = []
    for i, tag in enumerate(tags):
        if tag == "O":
            continue
        prefix, typ = tag.split("-", 1)
        if prefix == "I" and spans and spans[-1][1] == i and spans[-1][2] == typ:
            spans[-1] = (spans[-1][0], i + 1, typ)
        else:
            spans.append((i, i + 1, typ))
    return spans


def realign_to_words(chars: list[str], tags: list[str], words: list[str]) -> list[str]:
    """Project character-level BIO tags onto a segmentation of the same characters.

    Rule: each character entity is mapped to the words it overlaps. A word overlapping no entity
    is ``O``. A word overlapping entities takes the leftmost one, ``X``: it is ``I-X`` when the
    previous word took that same entity, else ``B-X``. So every entity survives as one word span
    unless two entities fall into one word (the segmenter merged them; the first wins).
    Raises ValueError when the words do not spell exactly the characters.
    """
    if "".join(words) != "".join(chars):
        raise ValueError(f"segmentation {''.join(words)!r} does not spell the characters {''.join(chars)!r}")
    # character offset -> index of its entity
    owner = [-1] * len("".join(chars))
    offsets = []
    pos = 0
    for c in chars:
        offsets.append(pos)
        pos += len(c)
    spans = entity_spans(tags)
    for k, (s, e, _) in enumerate(spans):
        end = offsets[e] if e < len(offsets) else pos
        for j in range(offsets[s], end):
            owner[j] = k
    out = []
    prev = -1
    pos = 0
    for w in words:
        hit = next((k for k in owner[pos : pos + len(w)] if k >= 0), -1)
        pos += len(w)
        if hit < 0:
            out.append("O")
        else:
            out.append(("I-" if hit == prev else "B-") + spans[hit][2])
        prev = hit
    return out


# ---------------------------------------------------------------------------------------------
# WikiAnn in the XTREME panx layout


def read_panx_lines(path: str | Path, lang: str, lines: Iterable[tuple[int, str]]) -> list[Sentence]:
    """Sentences from panx lines ``<lang>:<word>\\t<TAG>`` (blank line between sentences)."""
    sents: list[Sentence] = []
    prefix = lang + ":"
    for block in blank_line_blocks(lines):
        cur: Sentence = []
        for i, line in block:
            cols = line.split("\t")
            if len(cols) != 2:
                raise InputError(path, i, f"{lang}:<word><TAB><TAG>", line)
            token, tag = cols[0], cols[1].strip()
            if not token.startswith(prefix) or len(token) == len(prefix):
                raise InputError(path, i, f"a token prefixed with '{prefix}'", token)
            parse_tag(Path(path), i, tag, WIKIANN_TYPES)
            cur.append((token[len(prefix) :], tag))
        sents.append(cur)
    return sents


def read_panx(panx_root: str | Path, lang: str) -> dict[str, list[Sentence]]:
    """``split -> sentences`` from ``<lang>.tar.gz`` (members ``train``, ``dev``, ``test``) found
    under the extracted ``panx_dataset.tar``. Members are read in memory: nothing is unpacked."""
    panx_root = Path(panx_root)
    hits = sorted(panx_root.rglob(f"{lang}.tar.gz"))
    if len(hits) != 1:
        raise InputError(panx_root / f"{lang}.tar.gz", None, f"one {lang}.tar.gz under {panx_root}",
                         f"{len(hits)} found")
    archive = hits[0]
    out: dict[str, list[Sentence]] = {}
    with tarfile.open(archive, "r:gz") as tf:
        for m in tf.getmembers():
            split = Path(m.name).name
            if m.isfile() and split in ("train", "dev", "test"):
                where = f"{archive}!{m.name}"
                fh = tf.extractfile(m)
                out[split] = read_panx_lines(where, lang, numbered_lines(where, fh))
    missing = [s for s in ("train", "dev", "test") if s not in out]
    if missing:
        raise InputError(archive, None, "members train, dev, test", f"missing {', '.join(missing)}")
    return out


# ---------------------------------------------------------------------------------------------
# CoNLL-2003 English (IOB1, 4 columns, -DOCSTART- lines)


def read_conll2003(path: str | Path) -> list[Sentence]:
    """Sentences of ``eng.{train,testa,testb}`` (``word POS chunk NER``), tags converted to BIO."""
    path = Path(path)
    sents: list[Sentence] = []
    cur_words: list[str] = []
    cur_tags: list[str] = []

    def flush():
        if cur_words:
            sents.append(list(zip(cur_words, iob1_to_bio(cur_tags))))
            cur_words.clear()
            cur_tags.clear()

    for i, line in numbered_lines(path):
        if not line.strip():
            flush()
            continue
        cols = line.split()
        if cols[0] == "-DOCSTART-":
            flush()
            continue
        if len(cols) != 4:
            raise InputError(path, i, "4 space-separated columns: word POS chunk NER", line)
        parse_tag(path, i, cols[3], CONLL_TYPES)
        cur_words.append(cols[0])
        cur_tags.append(cols[3])
    flush()
    return sents


# ---------------------------------------------------------------------------------------------
# Levow 2006 (SIGHAN bakeoff 3) Chinese: one character and its BIO tag per line


def read_char_bio(path: str | Path) -> Iterator[tuple[int, list[str], list[str]]]:
    """``(first_line, chars, BIO tags)`` per sentence; tag types normalised to PER/LOC/ORG."""
    path = Path(path)
    for block in blank_line_blocks(numbered_lines(path)):
        chars, tags = [], []
        for i, line in block:
            cols = line.split("\t") if "\t" in line else line.split()
            if len(cols) != 2 or len(cols[0]) != 1:
                raise InputError(path, i, "one character, a tab, and its BIO tag", line)
            prefix, typ = parse_tag(path, i, cols[1].strip(), LEVOW_TYPES)
            chars.append(cols[0])
            tags.append("O" if typ is None else f"{prefix}-{LEVOW_TYPES[typ]}")
        yield block[0][0], chars, tags


def read_levow(path: str | Path, segment: Callable[[str], list[str]]) -> list[Sentence]:
    """Levow sentences re-tagged on the words of ``segment`` (see :func:`realign_to_words`).

    A segmenter with ``segment_lines`` (xling.preprocess.segment: the Stanford one starts Java
    once per call) gets all sentences in one batch. Whitespace-only pieces are dropped."""
    sents = list(read_char_bio(path))
    texts = ["".join(chars) for _, chars, _ in sents]
    batch = getattr(segment, "segment_lines", None)
    segmented = batch(texts) if batch is not None else [segment(t) for t in texts]
    out = []
    for (line, chars, tags), words in zip(sents, segmented, strict=True):
        words = [w for w in words if w.strip()]
        try:
            word_tags = realign_to_words(chars, tags, words)
        except ValueError as e:
            raise InputError(path, line, "a segmentation that spells the sentence's characters", str(e)) from e
        out.append(list(zip(words, word_tags)))
    return out


# ---------------------------------------------------------------------------------------------
# builders


def _write_splits(out_dir: Path, splits: dict[str, list[Sentence]]) -> dict[str, int]:
    return {split: write_bio(out_dir / f"{split}.bio", sents) for split, sents in splits.items()}


def build_wikiann(panx_root: str | Path, lang: str, out_dir: str | Path) -> dict[str, int]:
    return _write_splits(Path(out_dir), read_panx(panx_root, lang))


def build_conll2003(conll_dir: str | Path, out_dir: str | Path) -> dict[str, int]:
    """eng.train -> train, eng.testa -> dev, eng.testb -> test (the standard use of the splits)."""
    d = Path(conll_dir)
    return _write_splits(
        Path(out_dir),
        {"train": read_conll2003(d / "eng.train"), "dev": read_conll2003(d / "eng.testa"),
         "test": read_conll2003(d / "eng.testb")},
    )


def build_levow(
    levow_dir: str | Path, out_dir: str | Path, segment: Callable[[str], list[str]], dev_fraction: float = 0.1
) -> dict[str, int]:
    """Levow ships train.txt and test.txt only: the last ``dev_fraction`` of train sentences
    (in file order, so deterministic) becomes dev."""
    d = Path(levow_dir)
    train = read_levow(d / "train.txt", segment)
    n_dev = max(1, round(len(train) * dev_fraction)) if len(train) > 1 else 0
    return _write_splits(
        Path(out_dir),
        {"train": train[: len(train) - n_dev], "dev": train[len(train) - n_dev :],
         "test": read_levow(d / "test.txt", segment)},
    )
