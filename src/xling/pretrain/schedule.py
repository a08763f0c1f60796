"""What one pretraining job computes, as counts a reader can check against the paper (3.1):
updates per epoch and in all, streams and tokens, the batch layout on the processes a job has,
and the model FLOPs per token that the compute budget divides a throughput by.

The paper: "batch size 96 for each GPU [8 V100] and each epoch contains 200k batches. We stop
training at epoch 200". It ran XLM, whose ``--epoch_size 200000`` is counted by every GPU process
in steps of its own batch (``trainer.n_sentences += params.batch_size``), so an epoch is
ceil(200000 / 96) = 2,084 updates of 8 x 96 = 768 streams, and 200 epochs are 416,800 updates
(8.2e10 tokens of 256-token streams), which 8 V100s process in about the stated 3 days. Read as
200k *updates* per epoch it would be 40M updates, ~100x that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from xling.errors import ConfigError


@dataclass(frozen=True)
class Schedule:
    """The training length of one model."""

    global_batch_streams: int  # streams per update, all processes and accumulation steps together
    updates_per_epoch: int  # an epoch ends with a validation and a checkpoint
    max_epoch: int
    tokens_per_sample: int

    @property
    def max_updates(self) -> int:
        return self.updates_per_epoch * self.max_epoch

    @property
    def streams(self) -> int:
        return self.max_updates * self.global_batch_streams

    @property
    def tokens(self) -> int:
        return self.streams * self.tokens_per_sample


def schedule(pretrain: Mapping, model: Mapping) -> Schedule:
    """The schedule of the config's ``pretrain:`` and ``model:`` sections.

    ``batch_gpus`` x ``batch_size_per_gpu`` streams make one update (the paper's 8 x 96);
    ``streams_per_epoch_per_gpu`` is XLM's ``--epoch_size``, counted per GPU process in steps of
    ``batch_size_per_gpu``, hence ceil(streams / batch) updates per epoch."""
    per_gpu = int(pretrain["batch_size_per_gpu"])
    return Schedule(
        global_batch_streams=int(pretrain["batch_gpus"]) * per_gpu,
        updates_per_epoch=math.ceil(int(pretrain["streams_per_epoch_per_gpu"]) / per_gpu),
        max_epoch=int(pretrain["max_epoch"]),
        tokens_per_sample=int(model["tokens_per_sample"]),
    )


def save_interval_updates(pretrain: Mapping, model: Mapping) -> int:
    """Checkpoint interval: every epoch unless ``save_interval_updates`` asks for more often (it
    must divide the epoch, or ``checkpoint_best.pt`` would miss the validations that select it)."""
    per_epoch = schedule(pretrain, model).updates_per_epoch
    every = int(pretrain["save_interval_updates"] or per_epoch)
    if per_epoch % every:
        raise ConfigError(f"pretrain.save_interval_updates ({every}) must divide the {per_epoch} updates of an "
                          f"epoch (ceil(streams_per_epoch_per_gpu / batch_size_per_gpu))")
    return every


@dataclass(frozen=True)
class BatchLayout:
    """How ``processes`` data-parallel processes (GPUs, or CPU processes) make up one update."""

    processes: int
    streams_per_step: int  # fairseq --batch-size: what one process holds in one forward pass
    update_freq: int  # fairseq --update-freq: forward/backward passes accumulated per update

    @property
    def effective_batch_streams(self) -> int:
        return self.processes * self.streams_per_step * self.update_freq


def batch_layout(pretrain: Mapping, processes: int) -> BatchLayout:
    """The configured global batch on ``processes`` processes: each holds at most
    ``max_streams_per_step`` streams per forward pass (default ``batch_size_per_gpu``, what the
    paper's GPUs held) and accumulates gradients (``--update-freq``) for the rest, so an update is
    the same 768 streams on 8 GPUs, 4 GPUs or one. A process count that does not divide the global
    batch is refused: fairseq would silently train with another batch."""
    processes = max(1, int(processes))
    total = int(pretrain["batch_gpus"]) * int(pretrain["batch_size_per_gpu"])
    if total % processes:
        raise ConfigError(
            f"{processes} data-parallel processes cannot share the global batch of {total} streams "
            f"(pretrain.batch_gpus x batch_size_per_gpu) evenly: use a GPU count that divides {total}")
    per_process = total // processes
    cap = int(pretrain["max_streams_per_step"] or pretrain["batch_size_per_gpu"])
    # the largest step that fits the cap and divides the process's share (1 always does)
    step = max(d for d in range(1, min(cap, per_process) + 1) if per_process % d == 0)
    return BatchLayout(processes, step, per_process // step)


def train_flops_per_token(layers: int, dim: int, ffn_dim: int, tokens_per_sample: int, vocab: int,
                          predicted_fraction: float) -> float:
    """Training FLOPs (forward + backward = 3 x forward) per input token of the MLM: 2 FLOPs per
    weight of the Transformer blocks (attention projections 4 d^2, feed-forward 2 d f), attention
    scores and values 4 T d per layer, and the LM head (dense d^2 and tied softmax d V) on the
    predicted (masked) fraction of the positions only, as the model computes it."""
    blocks = 2 * layers * (4 * dim * dim + 2 * dim * ffn_dim)
    attention = 4 * layers * tokens_per_sample * dim
    head = 2 * predicted_fraction * (dim * dim + dim * vocab)
    return 3.0 * (blocks + attention + head)


def model_flops_per_token(model: Mapping, pretrain: Mapping, vocab: int) -> float:
    """``train_flops_per_token`` for the config's ``model:`` and masking probability."""
    return train_flops_per_token(int(model["layers"]), int(model["dim"]), int(model["ffn_dim"]),
                                 int(model["tokens_per_sample"]), int(vocab), float(pretrain["mask_prob"]))
