"""Tokens seen in pretraining, matched between two ways of cutting the same data into samples
(Liu et al. 2020, 3.2.3: sentences "sliced into smaller segments, limiting input length to 20 tokens
... the total number of tokens in pretraining data stayed unchanged").

A model of 20-token windows trained for the updates and samples per update of a model of 512-token
streams sees about 25x fewer tokens. With ``pretrain.match_tokens`` a job is given as many tokens
as the reference model of the same data (its ``sample_break_mode`` at the same
``tokens_per_sample``, the same updates and samples per update): the mean tokens per sample of
both cuttings is counted on the binarised training data as the MLM task cuts it
(:func:`sample_tokens`), averaged over the languages with their sampling probabilities, and their
ratio scales either the samples per update (``by: batch``: the same updates, each of as many tokens
as the reference's; its learning-rate schedule, counted in updates, is the reference's) or the
updates (``by: updates``: the same samples per update, longer epochs).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from xling.pretrain.sampling import language_sampling_probs
from xling.pretrain.schedule import schedule

BY = ("batch", "updates")
# one language's sentence lengths: a list, or the binarised data's sizes array
Lengths = Sequence[int] | np.ndarray


def sample_tokens(sizes: Lengths, break_mode: str, tokens_per_sample: int,
                  window: int | None = None) -> tuple[int, int]:
    """``(tokens, samples)`` of one language's training data (``sizes``: its sentences' lengths,
    ``</s>`` included, as binarised) cut as ``xling.pretrain.fairseq_plugin.mlm_task`` cuts them,
    each sample with its ``<s>``: ``window``: every sentence into pieces of ``window - 1``; ``eos``:
    one sentence per sample, cut at ``tokens_per_sample - 1``; ``none``: the language's text as one
    stream cut into blocks of ``tokens_per_sample - 1``."""
    n = np.asarray(sizes, dtype=np.int64)
    if window:
        samples = int(np.maximum(1, -(-n // (int(window) - 1))).sum())
        return int(n.sum()) + samples, samples
    if break_mode == "eos":
        return int(np.minimum(n, int(tokens_per_sample) - 1).sum()) + len(n), len(n)
    if break_mode == "none":
        samples = max(1, -(-int(n.sum()) // (int(tokens_per_sample) - 1)))
        return int(n.sum()) + samples, samples
    raise ValueError(f"unknown sample_break_mode {break_mode!r} (expected none or eos)")


def mean_tokens_per_sample(sizes: Mapping[str, Lengths], sampling_alpha: float, break_mode: str,
                           tokens_per_sample: int, window: int | None = None) -> float:
    """Expected tokens of one training sample: each language's mean (:func:`sample_tokens`)
    weighted by the share of samples it is drawn for (sentence share ^ ``sampling_alpha``)."""
    langs = list(sizes)
    probs = language_sampling_probs([len(sizes[lang]) for lang in langs], sampling_alpha)
    means = [t / s for t, s in (sample_tokens(sizes[lang], break_mode, tokens_per_sample, window) for lang in langs)]
    return float(np.dot(probs, means))


def match_recipe(pretrain: Mapping, ratio: float, by: str, step_ratio: float | None = None) -> dict:
    """``pretrain`` with ``ratio`` times the samples seen (the ratio of the reference's tokens per
    sample to this job's), without ``match_tokens``. ``batch``: ``batch_size_per_gpu`` times
    ``ratio``, the epoch's samples so that an epoch keeps its updates, and the samples of one
    forward pass (``max_streams_per_step``, else ``batch_size_per_gpu``) times ``step_ratio``
    (default ``ratio``; the ratio of the longest samples, so that a pass holds no more tokens than
    the reference's and fits the same memory; the rest is accumulated); ``updates``: the epoch's
    updates times ``ratio``, rounded up to a multiple of ``save_interval_updates`` when one is set
    (it must divide the epoch)."""
    if by not in BY:
        raise ValueError(f"match_tokens.by must be one of {', '.join(BY)}, got {by!r}")
    if not ratio > 0:
        raise ValueError(f"match_tokens: the ratio of tokens per sample must be positive, got {ratio}")
    out = {k: v for k, v in pretrain.items() if k != "match_tokens"}
    batch = int(pretrain["batch_size_per_gpu"])
    per_epoch = math.ceil(int(pretrain["streams_per_epoch_per_gpu"]) / batch)
    if by == "batch":
        step = int(pretrain.get("max_streams_per_step") or batch)
        out["max_streams_per_step"] = max(1, math.floor(step * (ratio if step_ratio is None else step_ratio)))
        batch = max(1, round(batch * ratio))
        out["batch_size_per_gpu"] = batch
    else:
        every = int(pretrain.get("save_interval_updates") or 1)
        per_epoch = math.ceil(max(1, round(per_epoch * ratio)) / every) * every
    out["streams_per_epoch_per_gpu"] = per_epoch * batch
    return out


def training_sizes(data_dir: str | Path, languages: Sequence[str]) -> dict[str, np.ndarray]:
    """Each language's training sentence lengths from the binarised data (fairseq's reader)."""
    from fairseq.data import data_utils

    from xling.errors import InputError

    out = {}
    for lang in languages:
        path = Path(data_dir) / lang / "train"
        data = data_utils.load_indexed_dataset(str(path), None)
        if data is None:
            raise InputError(f"{path}.bin", None, f"a fairseq indexed dataset of {lang}'s training data")
        out[lang] = np.asarray(data.sizes, dtype=np.int64)
    return out


def matched_recipe(pretrain: Mapping, model: Mapping, data_dir: str | Path,
                   languages: Sequence[str]) -> tuple[dict, dict]:
    """``(recipe, record)``: ``pretrain`` matched in tokens to its ``match_tokens`` reference on the
    training data of ``data_dir`` (:func:`match_recipe`), and what was measured, for ``done.json``."""
    spec = pretrain["match_tokens"]
    sizes = training_sizes(data_dir, languages)
    tps, alpha = int(model["tokens_per_sample"]), float(pretrain["sampling_alpha"])
    reference = mean_tokens_per_sample(sizes, alpha, spec["sample_break_mode"], tps)
    own = mean_tokens_per_sample(sizes, alpha, pretrain["sample_break_mode"], tps, pretrain.get("sentence_window"))
    window = int(pretrain.get("sentence_window") or tps)
    recipe = match_recipe(pretrain, reference / own, spec["by"], step_ratio=tps / min(window, tps))
    before, after = schedule(pretrain, model), schedule(recipe, model)
    record = {"by": spec["by"], "reference_sample_break_mode": spec["sample_break_mode"],
              "reference_tokens_per_sample": reference, "tokens_per_sample": own,
              "reference_tokens_per_update": reference * before.global_batch_streams,
              "tokens_per_update": own * after.global_batch_streams,
              "reference_tokens": reference * before.streams, "tokens": own * after.streams,
              "samples_per_update": after.global_batch_streams, "updates": after.max_updates,
              "max_samples_per_step": recipe.get("max_streams_per_step")}
    return recipe, record
