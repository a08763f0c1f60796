"""Learning-rate schedules of paper 3.2 as multipliers of the base rate per optimizer step."""

from __future__ import annotations

import math


def constant(step: int, total_steps: int, warmup_fraction: float = 0.0) -> float:
    return 1.0


def warmup_linear(step: int, total_steps: int, warmup_fraction: float = 0.1) -> float:
    """Linear warmup over the first ``warmup_fraction`` of the steps, then linear decay to 0 at the end.

    ``step`` counts from 0; the multiplier applies to the update made at that step."""
    if total_steps <= 0:
        raise ValueError("total_steps must be positive")
    warmup = max(1, math.ceil(warmup_fraction * total_steps)) if warmup_fraction > 0 else 0
    if step < warmup:
        return (step + 1) / warmup
    return max(0.0, (total_steps - step) / max(1, total_steps - warmup))


SCHEDULES = {"constant": constant, "warmup_linear": warmup_linear}
