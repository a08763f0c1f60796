"""Readers of the normalised task files (docs/ARCHITECTURE.md, ``R/tasks/...``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xling.errors import InputError
from xling.metrics.parsing import read_conllu_words
from xling.taskdata import textio
from xling.taskdata.textio import NLI_LABELS


@dataclass
class NliExample:
    premise: str
    hypothesis: str
    label: str


@dataclass
class TaggedSentence:
    words: list[str]
    tags: list[str]


@dataclass
class Tree:
    words: list[str]
    heads: list[int]  # 0 = root
    deprels: list[str]  # universal part


def read_nli(path: str | Path) -> list[NliExample]:
    path = Path(path)
    out = []
    with open(path, encoding="utf-8") as fh:
        header = fh.readline().rstrip("\r\n")
        if header != "premise\thypothesis\tlabel":
            raise InputError(path, 1, "header 'premise<TAB>hypothesis<TAB>label'", header)
        for lineno, line in enumerate(fh, 2):
            line = line.rstrip("\r\n")
            if not line:
                continue
            cols = line.split("\t")
            if len(cols) != 3:
                raise InputError(path, lineno, "3 tab-separated columns", line)
            if cols[2] not in NLI_LABELS:
                raise InputError(path, lineno, "label in " + "|".join(NLI_LABELS), cols[2])
            out.append(NliExample(*cols))
    if not out:
        raise InputError(path, None, "at least one example")
    return out


def read_bio(path: str | Path) -> list[TaggedSentence]:
    sents = textio.read_bio(path)
    if not sents:
        raise InputError(path, None, "at least one sentence")
    return [TaggedSentence([w for w, _ in s], [t for _, t in s]) for s in sents]


def read_trees(path: str | Path) -> list[Tree]:
    sents = read_conllu_words(path)
    if not sents:
        raise InputError(path, None, "at least one sentence")
    return [Tree([w.form for w in s], [w.head for w in s], [w.deprel for w in s]) for s in sents]
