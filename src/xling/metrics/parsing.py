"""Labelled / unlabelled attachment scores following the CoNLL 2018 shared-task evaluation.

Conventions of conll18_ud_eval.py (https://universaldependencies.org/conll18/evaluation.html)
that apply to gold-tokenised parsing:
- the scored units are syntactic words (ids ``1``, ``2``, ...): multiword-token lines (``1-2``) and
  empty nodes (``8.1``) are not scored;
- every word counts, punctuation included;
- DEPREL is compared on its universal part (``nmod:poss`` scores as ``nmod``).
With identical word segmentation the official F1 equals the share of words that are right, which
is what is computed here; differing segmentation is an input error, not something to align.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from xling.errors import InputError
from xling.taskdata.textio import numbered_lines


@dataclass(frozen=True)
class Word:
    form: str
    head: int
    deprel: str  # universal part only


@dataclass(frozen=True)
class AttachmentScores:
    words: int
    uas: float  # 0-100
    las: float  # 0-100


def universal_deprel(deprel: str) -> str:
    """Universal part of a UD relation (the subtype after ':' is language-specific)."""
    return deprel.split(":", 1)[0]


def read_conllu_words(path: str | Path) -> list[list[Word]]:
    """Sentences of syntactic words (form, head, universal deprel) from a CoNLL-U file."""
    path = Path(path)
    sentences: list[list[Word]] = []
    current: list[Word] = []
    for lineno, line in numbered_lines(path):
        if not line:
            if current:
                sentences.append(current)
                current = []
            continue
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise InputError(path, lineno, "10 tab-separated CoNLL-U columns", line)
        wid = cols[0]
        if "-" in wid or "." in wid:
            continue  # multiword-token surface line or empty node: not scored
        if not wid.isdigit() or int(wid) != len(current) + 1:
            raise InputError(path, lineno, f"word id {len(current) + 1}", wid)
        if not cols[6].isdigit():
            raise InputError(path, lineno, "an integer HEAD", cols[6])
        head = int(cols[6])
        current.append(Word(cols[1], head, universal_deprel(cols[7])))
    if current:
        sentences.append(current)
    for s in sentences:
        n = len(s)
        for w in s:
            if w.head > n:
                raise InputError(path, None, f"HEAD within the sentence (<= {n})", str(w.head))
    return sentences


def attachment_scores(
    gold: Sequence[Sequence[tuple[int, str]]], predicted: Sequence[Sequence[tuple[int, str]]]
) -> AttachmentScores:
    """UAS/LAS (0-100) over all words from per-sentence (head, deprel) lists.

    Relations are compared on their universal part, as CoNLL 2018 does."""
    if len(gold) != len(predicted):
        raise ValueError(f"attachment_scores: {len(gold)} gold sentences but {len(predicted)} predicted")
    total = heads = labelled = 0
    for i, (g, p) in enumerate(zip(gold, predicted)):
        if len(g) != len(p):
            raise ValueError(f"sentence {i}: {len(g)} gold words but {len(p)} predicted")
        for (gh, gl), (ph, pl) in zip(g, p):
            total += 1
            if gh == ph:
                heads += 1
                if universal_deprel(gl) == universal_deprel(pl):
                    labelled += 1
    if total == 0:
        raise ValueError("attachment scores of an empty treebank are undefined")
    return AttachmentScores(total, 100.0 * heads / total, 100.0 * labelled / total)


def score_conllu_files(gold_path: str | Path, system_path: str | Path) -> AttachmentScores:
    """UAS/LAS of a system CoNLL-U file against gold with the same word segmentation."""
    gold = read_conllu_words(gold_path)
    system = read_conllu_words(system_path)
    if len(gold) != len(system):
        raise InputError(system_path, None, f"{len(gold)} sentences as in {gold_path}", str(len(system)))
    for k, (g, s) in enumerate(zip(gold, system)):
        if [w.form for w in g] != [w.form for w in s]:
            raise InputError(system_path, None, f"sentence {k + 1} with the gold words", " ".join(w.form for w in s))
    return attachment_scores(
        [[(w.head, w.deprel) for w in s] for s in gold], [[(w.head, w.deprel) for w in s] for s in system]
    )
