"""What a pretraining batch carries beside fairseq's tensors, computed on the host while the batch
is collated (in the data loader's workers), so that the training step has no shape that depends
on the data and never waits for the GPU to find it out:

* ``masked_index`` / ``masked_target``: the predicted positions as flat indices into the
  [B * T] tokens and their target tokens, padded to a number of slots that depends on the
  batch's shape only (``padding_idx`` targets predict nothing);
* ``n_predicted``: how many slots are real (the loss's normaliser, fairseq's sample size);
* ``net_input.src_lang``: the batch's language when it holds one (else None);
* ``net_input.padded``: whether any stream is padded.

A compiled step (:mod:`xling.pretrain.compiling`) takes batches of few shapes only: :func:`pad_to_shape`
pads a batch to the full number of streams and to one of :func:`length_buckets` on the device,
without a sync, leaving its loss and gradients as they were.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

SLOT_MULTIPLE = 8  # rows of the LM head's matrix products, for the tensor cores
SHORTEST_BUCKET = 16  # the shortest padded length of a compiled step's batches


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
    size = _round_up(max(slots, n, 1), SLOT_MULTIPLE)
    index = torch.zeros(size, dtype=torch.long)
    index[:n] = where
    targets = torch.full((size,), pad, dtype=flat.dtype)
    targets[:n] = flat[where]
    return index, targets, n


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def length_buckets(max_length: int) -> list[int]:
    """The lengths a compiled step's batches are padded to: powers of two from 16, and
    ``max_length`` (at most twice the tokens of a batch, a handful of graphs; streams of the
    paper's fixed length all take the last)."""
    buckets = []
    length = SHORTEST_BUCKET
    while length < max_length:
        buckets.append(length)
        length *= 2
    return [*buckets, int(max_length)]


def bucket_length(length: int, max_length: int) -> int:
    """The shortest of :func:`length_buckets` that holds ``length`` tokens."""
    if length > max_length:
        raise ValueError(f"a batch of {length} tokens is longer than the model's {max_length} positions")
    return next(b for b in length_buckets(max_length) if b >= length)


def pad_to_shape(batch: dict, streams: int, length: int, bos: int, pad: int, mask_prob: float) -> dict:
    """``batch`` (collated, with the host fields above, on any device) as ``streams`` x ``length``
    tokens: each stream padded to ``length``, and streams of ``<s>`` and padding added. The
    predicted positions are the same (re-indexed for the longer streams; their slots padded to the
    new shape's number), so the summed loss and its gradients are those of the batch: a stream
    only attends within itself, and an added one predicts nothing (its ``<s>`` spares it an
    all-padding attention row, whose softmax would be NaN). Device operations only: no sync.
    ``ntokens``/``nsentences``/``n_predicted`` keep counting the real ones."""
    net = batch["net_input"]
    tokens = net["src_tokens"]
    b, t = tokens.shape
    if (b, t) == (streams, length):
        return batch
    if b > streams or t > length:
        raise ValueError(f"a batch of {b} x {t} tokens does not fit {streams} x {length}")
    grown = F.pad(tokens, (0, length - t, 0, streams - b), value=pad)
    grown[b:, 0] = bos
    index, target = batch["masked_index"], batch["masked_target"]
    index = index + (index // t) * (length - t)  # row r's position p moves to r * length + p
    slots = _round_up(max(prediction_slots(streams, length, mask_prob), index.numel()), SLOT_MULTIPLE)
    out = {**batch, "masked_index": F.pad(index, (0, slots - index.numel()), value=0),
           "masked_target": F.pad(target, (0, slots - target.numel()), value=pad)}
    if torch.is_tensor(batch.get("target")):
        out["target"] = F.pad(batch["target"], (0, length - t, 0, streams - b), value=pad)
    grown_net = {**net, "src_tokens": grown, "padded": True}
    for key in ("src_lengths", "src_lang_id"):
        value = net.get(key)
        if torch.is_tensor(value) and value.dim() == 1 and value.numel() == b and b < streams:
            # the added streams: one token, in the batch's first language
            fill = value[:1].expand(streams - b) if key == "src_lang_id" else value.new_ones(streams - b)
            grown_net[key] = torch.cat([value, fill])
    out["net_input"] = grown_net
    return out


def add_host_fields(batch: dict, pad: int, mask_prob: float) -> dict:
    """Adds the fields above to a collated batch (tensors on the CPU), in place; returns it."""
    net = batch["net_input"]
    tokens = net["src_tokens"]
    streams, length = tokens.shape
    index, targets, n = predicted_positions(batch["target"], pad, prediction_slots(streams, length, mask_prob))
    batch.update(masked_index=index, masked_target=targets, n_predicted=n)
    langs = net.get("src_lang_id")
    if langs is not None and langs.numel():
        first = int(langs.reshape(-1)[0])
        net["src_lang"] = first if bool(langs.eq(first).all()) else None
    net["padded"] = bool(tokens.eq(pad).any())
    return batch
