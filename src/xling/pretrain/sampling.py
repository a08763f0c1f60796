"""Language sampling of the multilingual MLM (paper 3.1): p_l proportional to (n_l / sum n)^alpha."""

from __future__ import annotations

import numpy as np


def language_sampling_probs(sentence_counts, alpha: float) -> np.ndarray:
    """Smoothed probability of drawing a batch from each language.

    ``sentence_counts[l]`` is the number of training sentences of language l; alpha < 1
    upsamples the smaller languages (alpha = 1: proportional, alpha = 0: uniform)."""
    counts = np.asarray(sentence_counts, dtype=np.float64)
    if counts.ndim != 1 or len(counts) == 0 or (counts <= 0).any():
        raise ValueError(f"need one positive sentence count per language, got {counts.tolist()}")
    share = counts / counts.sum()
    smoothed = share**alpha
    return smoothed / smoothed.sum()


def resampling_ratios(probs, block_counts) -> np.ndarray:
    """Size ratio per language so that an epoch of ``sum(block_counts)`` streams holds
    ``probs[l]`` of its streams (hence of its one-language batches) from language l."""
    probs = np.asarray(probs, dtype=np.float64)
    blocks = np.asarray(block_counts, dtype=np.float64)
    if probs.shape != blocks.shape or (blocks <= 0).any():
        raise ValueError(f"need one positive block count per language, got {blocks.tolist()}")
    return probs * blocks.sum() / blocks
