"""What a pretraining batch carries beside fairseq's tensors, computed on the host while the batch
is collated (in the data loader's workers), so that the training step has no shape that depends
on the data and never waits for the GPU to find it out:

* ``masked_index`` / ``masked_target``: the predicted positions as flat indices into the
  [B * T] tokens and their target tokens, padded to a number of slots that depends on the
  batch's shape only (``padding_idx`` targets predict nothing);
* ``n_predicted``: how many slots are real (the loss's normaliser, fairseq's sample size);
* ``net_input.src_lang``: the batch's language when it holds one (else None);
* ``net_input.padded``: whether any stream is padded.
"""

from __future__ import annotations

import math

import torch

SLOT_MULTIPLE = 8  # rows of the LM head's matrix products, for the tensor cores


def prediction_slots(streams: int, length: int, mask_prob: float) -> int:
    """The most positions BERT masking can select in ``streams`` streams of at most ``length``
    tokens: fairseq's MaskTokensDataset selects int(mask_prob * n + u), u in [0, 1), of a
    stream's n tokens, at most floor(mask_prob * length) + 1."""
    return streams * (math.floor(mask_prob * length) + 1)


def predicted_positions(target: torch.Tensor, pad: int, slots: int) -> tuple[torch.Tensor, torch.Tensor, int]:
    """``(index, targets, n)``: the n positions of ``target`` ([B, T]) that are not ``pad``, as
    flat indices in row-major order (the order boolean indexing gives), and their tokens, both
    padded to at least ``slots`` entries (rounded up to a multiple of 8) with position 0 and
    ``pad``. More than ``slots`` predictions (a masking this bound does not know) get more slots."""
    flat = target.reshape(-1)
    where = flat.ne(pad).nonzero().squeeze(1)
    n = int(where.numel())
    size = -(-max(slots, n, 1) // SLOT_MULTIPLE) * SLOT_MULTIPLE
    index = torch.zeros(size, dtype=torch.long)
    index[:n] = where
    targets = torch.full((size,), pad, dtype=flat.dtype)
    targets[:n] = flat[where]
    return index, targets, n


def add_host_fields(batch: dict, pad: int, mask_prob: float) -> dict:
    """Adds the fields above to a collated batch (tensors on the CPU), in place; returns it."""
    net = batch["net_input"]
    tokens = net["src_tokens"]
    index, targets, n = predicted_positions(batch["target"], pad, prediction_slots(*tokens.shape, mask_prob))
    batch.update(masked_index=index, masked_target=targets, n_predicted=n)
    langs = net.get("src_lang_id")
    if langs is not None and langs.numel():
        first = int(langs.reshape(-1)[0])
        net["src_lang"] = first if bool(langs.eq(first).all()) else None
    net["padded"] = bool(tokens.eq(pad).any())
    return batch
