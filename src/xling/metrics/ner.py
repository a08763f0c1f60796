"""Span-level NER scoring (paper 3.2): BIO repair heuristic, then span F1 scored by seqeval.

seqeval's default (conlleval-compatible) mode is the reference scorer; ``spans`` is the BIO span
definition used on repaired sequences, where both agree (tests check it).
"""

from __future__ import annotations

from typing import Sequence


def _split(tag: str) -> tuple[str, str | None]:
    if tag == "O":
        return "O", None
    prefix, sep, etype = tag.partition("-")
    if not sep or prefix not in ("B", "I") or not etype:
        raise ValueError(f"not a BIO tag: {tag!r} (expected O, B-X or I-X)")
    return prefix, etype


def repair_bio(tags: Sequence[str]) -> list[str]:
    """Rewrite a predicted BIO sequence into valid spans, as the paper does before scoring.

    A standalone ``I-X`` (after O, at the start, or after a span of another type that it does not
    continue) opens a span: ``B-X``. A run ``B-X I-Y I-Z`` (one span whose pieces disagree on the
    type) takes the type of its final piece: ``B-Z I-Z I-Z``.
    """
    parsed = [_split(t) for t in tags]
    out = [t for t in tags]
    i = 0
    n = len(parsed)
    while i < n:
        prefix, _ = parsed[i]
        if prefix == "O":
            i += 1
            continue
        # A span starts here (B-*, or a standalone I-*); it runs over the following I-* tags.
        j = i + 1
        while j < n and parsed[j][0] == "I":
            j += 1
        final_type = parsed[j - 1][1]
        out[i] = f"B-{final_type}"
        for k in range(i + 1, j):
            out[k] = f"I-{final_type}"
        i = j
    return out


def spans(tags: Sequence[str]) -> set[tuple[int, int, str]]:
    """(start, end exclusive, type) of each span of a *valid* BIO sequence (I-X continues X only)."""
    result: set[tuple[int, int, str]] = set()
    start: int | None = None
    etype: str | None = None
    for i, tag in enumerate(list(tags) + ["O"]):
        prefix, t = _split(tag)
        if start is not None and not (prefix == "I" and t == etype):
            assert etype is not None  # a span starts at a B or I tag, and those have a type
            result.add((start, i, etype))
            start = etype = None
        if prefix == "B" or (prefix == "I" and start is None):
            start, etype = i, t
    return result


def span_f1(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]], repair: bool = True) -> float:
    """Micro span-level F1 (0-100) over sentences, predictions repaired first (paper 3.2)."""
    from seqeval.metrics import f1_score

    if len(gold) != len(predicted):
        raise ValueError(f"span_f1: {len(gold)} gold sentences but {len(predicted)} predicted")
    pred = []
    for g, p in zip(gold, predicted):
        if len(g) != len(p):
            raise ValueError(f"span_f1: sentence of {len(g)} gold tags but {len(p)} predicted")
        pred.append(repair_bio(p) if repair else list(p))
    return 100.0 * float(f1_score([list(g) for g in gold], pred))
