"""Classification accuracy (XNLI)."""

from __future__ import annotations

from typing import Sequence


def accuracy(gold: Sequence, predicted: Sequence) -> float:
    """Percentage of positions where ``predicted`` equals ``gold`` (0-100)."""
    if len(gold) != len(predicted):
        raise ValueError(f"accuracy: {len(gold)} gold labels but {len(predicted)} predictions")
    if not gold:
        raise ValueError("accuracy of an empty set is undefined")
    return 100.0 * sum(g == p for g, p in zip(gold, predicted)) / len(gold)
