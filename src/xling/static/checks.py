"""The argument checks the static models share."""

from __future__ import annotations

import numpy as np


def check_counts(who: str, **counts: tuple[object, int]) -> None:
    """Raise ValueError naming ``who`` for the first ``name=(value, lowest)`` whose value is not an
    integer (a bool is not one) of at least ``lowest``."""
    for name, (value, low) in counts.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{who}: {name} must be an integer >= {low}, got {value!r}")
