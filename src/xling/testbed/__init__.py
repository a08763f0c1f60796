"""Synthetic bilingual testbed: the data behind ``make demo``.

``generate(out_dir, params, seed)`` writes, in the formats and archive layouts of the real
downloads, every resource the pipeline reads, for an English-like source language and four
derived languages (fr, de, ru, zh) whose relation to it mirrors the paper's pairs."""

from .generate import SCALES, generate, resolve_params

__all__ = ["SCALES", "generate", "resolve_params"]
