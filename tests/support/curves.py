"""The GPU pretraining job's check: its validation curve on a corpus the job learns, held to the
same job's curve on the CPU at every validation.

The corpus (``write_toy_data(..., successors=2)``) is each language one Markov chain of 2
successors per word, its validation text on the same chain; with ``LEARN`` the tiny job's English
perplexity falls from ~115 to ~48 in 200 updates on the CPU in fp32 (uniform over its dictionary:
about 140). The job on a GPU sees the same masks (drawn on the host with the seed) but its own
dropout masks and rounding: two CPU runs that differ in every draw (seeds 1 and 2) part by at most
0.12 in log perplexity at any validation, so ``LOG_TOLERANCE`` holds a GPU run to within that
spread of the CPU's; and it must end well below the uniform guess (``LEARNT``)."""

from __future__ import annotations

import math
from pathlib import Path

# 20 epochs of 10 updates at 5e-3 after 20 warm-up updates, a validation every 10 updates
LEARN = {"lr": 5e-3, "warmup_updates": 20, "max_epoch": 20}
LOG_TOLERANCE = 0.15
LEARNT = 0.5  # the last perplexity at most this share of the uniform guess


def uniform_ppl(data_dir: Path) -> float:
    """The perplexity of guessing uniformly over the dictionary (its entries and the specials)."""
    from fairseq.data import Dictionary

    return float(len(Dictionary.load(str(Path(data_dir) / "dict.txt"))))


def assert_follows(curve: list[float], reference: list[float], uniform: float) -> None:
    """``curve`` (a job's perplexity at each validation) learnt as ``reference`` did: as many
    validations, each within ``LOG_TOLERANCE`` in log, and the last well below ``uniform``."""
    assert len(curve) == len(reference) > 1, (curve, reference)
    apart = [abs(math.log(a / b)) for a, b in zip(curve, reference)]
    worst = max(range(len(apart)), key=apart.__getitem__)
    assert apart[worst] <= LOG_TOLERANCE, (
        f"validation {worst + 1}: perplexity {curve[worst]:.1f} against the CPU's {reference[worst]:.1f} "
        f"(log ratio {apart[worst]:.2f} > {LOG_TOLERANCE}); curve {curve}, CPU {reference}")
    assert curve[-1] <= LEARNT * uniform, f"ended at perplexity {curve[-1]:.1f}, uniform guess {uniform:.0f}: {curve}"
