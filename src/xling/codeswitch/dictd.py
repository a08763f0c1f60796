"""FreeDict dictionaries in dictd format (``.index`` + ``.dict.dz``) -> weighted translation pairs,
and a seeded MUSE-format train/test split of their headwords (Figure 4's word translation).

dictd: each ``.index`` line is ``headword<TAB>offset<TAB>length``, the numbers in dictd's base64
(``A-Z a-z 0-9 + /``, most significant digit first); they address the entry's bytes in the
decompressed ``.dict.dz`` (dictzip: a gzip file whose extra field indexes its chunks; read here as
plain gzip, in offset order, so the dictionary is streamed, not held whole). The index's
headword is dictd's search key (lower-cased, punctuation gone: "aixlachapelle", "dailleurs"); the
entry's own first line spells it ("Aix-la-Chapelle", "d'ailleurs"), and that is the one kept.

A FreeDict entry, as in eng-fra, fra-eng and eng-rus (Debian's 2022.04.21 packages)::

    à /a/ <prep>                      headword, pronunciation, part of speech (fra-eng only)
    1. at, to, toward, towards        numbered senses, or one unnumbered line: comma-separated
    2. beside, by, near, nearby       translations

What is kept: every comma-separated translation of every sense, multi-word ones as phrases
("fer à repasser", "mer Adriatique": code-switching matches phrases); a pair's weight is the
number of senses that list it (as ``read_muse`` adds repeated lines).

What is dropped:

- the ``00database*`` entries (the dictionary's metadata: its info text, URL, alphabet);
- the pronunciation and the part of speech (``<n, fem>``);
- parenthesised notes, with their text: "(female) duck" -> "duck", "rape (seed)" -> "rape",
  "take (with one)" -> "take"; and domain labels ``[cul]``, ``[mus]`` (fra-eng), and a stray
  bracket ("2. repasser]" in eng-fra);
- lines that start with white space: the usage examples of fra-eng's "falloir"
  (``"Il faut faire"`` and its gloss " You have to"), not translations of the headword;
- entries and translations with "..." (patterns with a gap: "... ago" -> "il y a ...",
  "ne ... jamais"), which no running text matches, and affixes ("-able", "aqu‐");
- nothing else occurs in these three: no "see"/"syn" cross-references, no notes outside
  parentheses.

Normalised: U+2010 HYPHEN (eng-fra's "Addis‐Abeba", eng-rus' "кто‐то") becomes "-", as the
corpora write it; white space becomes one space.

Written by hand on purpose (the format is three fields a line and a gzip file): pyglossary, the
maintained converter that reads it (its ``dict_org`` plugin over a vendored ``dictdlib``), yields
entries only through its conversion framework, as HTML (``<br />`` for line breaks), decoding with
errors ignored; it would give neither the index line of a bad offset nor FreeDict's senses.
"""

from __future__ import annotations

import gzip
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from xling.codeswitch.dictionary import Pairs
from xling.errors import InputError
from xling.io import atomic_write

DICTD_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_DIGIT = {c: i for i, c in enumerate(DICTD_B64)}
METADATA_PREFIXES = ("00database", "00-database")

_HEAD = re.compile(r"^(?P<word>.*?)(?:\s+/[^/]*/)?(?:\s+<[^>]*>)?\s*$")
_SENSE_NUMBER = re.compile(r"^\d+\.\s*")
_PARENS = re.compile(r"\([^()]*\)")
_LABEL = re.compile(r"\[[^\[\]]*\]")
_HYPHENS = str.maketrans({"\u2010": "-", "\u2011": "-"})


@dataclass(frozen=True)
class IndexLine:
    headword: str
    offset: int
    length: int
    line: int  # 1-based, for errors


def find_dictd(root: str | Path) -> tuple[Path, Path]:
    """``(index, dictionary)`` of the one dictd dictionary under an extracted download ``root``
    (Debian's ``dict-freedict-*`` package: ``usr/share/dictd/<name>.index`` and ``.dict.dz``): one
    ``*.index`` and one ``*.dict.dz``, else an error naming what was found."""
    root = Path(root)
    found = {suffix: sorted(p for p in root.rglob(f"*{suffix}") if p.is_file()) for suffix in (".index", ".dict.dz")}
    for suffix, paths in found.items():
        if len(paths) != 1:
            raise InputError(root, None, f"exactly one dictd *{suffix} file under it",
                             f"{len(paths)}: {', '.join(str(p.relative_to(root)) for p in paths) or 'none'}")
    return found[".index"][0], found[".dict.dz"][0]


def decode_b64(text: str) -> int:
    """A dictd base64 number (most significant digit first); ValueError for a bad digit."""
    if not text:
        raise ValueError("empty number")
    value = 0
    for ch in text:
        if ch not in _DIGIT:
            raise ValueError(f"{ch!r} is not a dictd base64 digit")
        value = value * 64 + _DIGIT[ch]
    return value


def read_index(path: str | Path) -> list[IndexLine]:
    """The entries of a dictd ``.index``, metadata entries included, in the file's order."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            fields = raw.rstrip("\n").split("\t")
            expected = "'headword<TAB>offset<TAB>length', the numbers in dictd base64"
            if len(fields) != 3:
                raise InputError(path, n, expected, raw.rstrip("\n"))
            try:
                out.append(IndexLine(fields[0], decode_b64(fields[1]), decode_b64(fields[2]), n))
            except ValueError:
                raise InputError(path, n, expected, raw.rstrip("\n")) from None
    if not out:
        raise InputError(path, None, "a dictd index with at least one entry", "an empty file")
    return out


def dictd_entries(index: str | Path, dictionary: str | Path) -> Iterator[tuple[IndexLine, str]]:
    """Each index line (but the metadata entries) with its entry's text, in the dictionary's
    byte order. An entry that reaches past the decompressed dictionary is an error naming the
    index line; a ``.dict.dz`` that is not gzip, one naming that file."""
    lines = [x for x in read_index(index) if not x.headword.startswith(METADATA_PREFIXES)]
    try:
        with gzip.open(dictionary, "rb") as fh:
            at = 0  # bytes read so far: gzip's own seek past the end would not tell where the end is
            for entry in sorted(lines, key=lambda x: (x.offset, x.line)):
                if entry.offset < at:  # entries that overlap: gzip rewinds
                    at = fh.seek(entry.offset)
                at += _skip(fh, entry.offset - at)
                data = fh.read(entry.length)
                at += len(data)
                if len(data) != entry.length:  # the dictionary ended first: ``at`` is its size
                    raise _outside(index, entry, dictionary, at)
                yield entry, data.decode("utf-8")
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise InputError(dictionary, None, "a dictzip (gzip) file", str(e)) from None


def _outside(index: str | Path, entry: IndexLine, dictionary: str | Path, size: int) -> InputError:
    return InputError(index, entry.line, f"an offset and length inside {Path(dictionary).name} ({size} bytes "
                      "decompressed)", f"bytes {entry.offset}-{entry.offset + entry.length}")


def _skip(fh, n: int, block: int = 1 << 20) -> int:
    """Read and drop up to ``n`` bytes; returns how many there were."""
    done = 0
    while done < n:
        chunk = fh.read(min(block, n - done))
        if not chunk:
            break
        done += len(chunk)
    return done


def _clean(text: str) -> str:
    text = _LABEL.sub(" ", _PARENS.sub(" ", text.translate(_HYPHENS)))
    return " ".join(text.replace("[", " ").replace("]", " ").split())


def _kept(text: str) -> bool:
    return bool(text) and "..." not in text and not text.startswith("-") and not text.endswith("-")


def parse_entry(text: str) -> tuple[str, list[str]]:
    """(headword, translations) of one FreeDict entry's text; a translation is listed once per
    sense that gives it. Empty when the entry is a pattern or an affix (see the module's notes)."""
    lines = text.split("\n")
    match = _HEAD.match(lines[0])
    headword = _clean(match["word"] if match else lines[0])
    if not _kept(headword):
        return headword, []
    translations = []
    for line in lines[1:]:
        if not line.strip() or line[0].isspace():  # blank, or a usage example and its gloss
            continue
        for part in _SENSE_NUMBER.sub("", line).split(","):
            part = _clean(part)
            if _kept(part):
                translations.append(part)
    return headword, translations


def read_dictd(index: str | Path, dictionary: str | Path) -> Pairs:
    """A FreeDict dictionary as weighted pairs ``{(headword, translation): senses listing it}``,
    the shape of ``xling.codeswitch.dictionary``."""
    pairs: Pairs = {}
    for _, text in dictd_entries(index, dictionary):
        headword, translations = parse_entry(text)
        for t in translations:
            pairs[(headword, t)] = pairs.get((headword, t), 0) + 1
    return pairs


def _single_words(pairs: Pairs) -> dict[str, list[str]]:
    """Headword -> its one-word translations, best first (weight, then alphabet): MUSE's format
    has one word a side."""
    table: dict[str, dict[str, float]] = {}
    for (a, b), w in pairs.items():
        if len(a.split()) == 1 and len(b.split()) == 1:
            table.setdefault(a, {})[b] = w
    return {a: sorted(t, key=lambda b: (-t[b], b)) for a, t in table.items()}


def write_muse_split(pairs: Pairs, train: str | Path, test: str | Path, train_words: int, test_words: int,
                     seed: int) -> dict:
    """Split the one-word headwords of ``pairs`` at random (seeded) into ``train_words`` for the
    training dictionary and ``test_words`` for the test one, no headword in both, and write each
    as MUSE does: ``src tgt`` a line, every translation of a headword, headwords in the drawn
    order. Too few headwords is an error (a smaller test set would change the measure). Both
    files appear together or neither does. Returns the words and pairs of each."""
    table = _single_words(pairs)
    words = sorted(table)
    if train_words < 1 or test_words < 1:
        raise ValueError(f"write_muse_split: sizes must be >= 1, got {train_words} and {test_words}")
    if len(words) < train_words + test_words:
        raise ValueError(f"write_muse_split: {len(words)} one-word headwords, fewer than "
                         f"{train_words} + {test_words}")
    order = [words[i] for i in np.random.default_rng(int(seed)).permutation(len(words))]
    parts = {"train": order[:train_words], "test": order[train_words:train_words + test_words]}
    counts = {}
    with atomic_write(train) as ftrain, atomic_write(test) as ftest:
        for name, fh in (("train", ftrain), ("test", ftest)):
            rows = [(a, b) for a in parts[name] for b in table[a]]
            fh.writelines(f"{a} {b}\n" for a, b in rows)
            counts[name] = {"words": len(parts[name]), "pairs": len(rows)}
    return {"headwords": len(words), **counts}
