"""The ``fairseq-train`` command line of one pretraining job (paper 3.1 hyperparameters,
Table 1 separation options), built from its :class:`xling.pretrain.job.PretrainJob`: one
function per concern (model, data, optimisation, checkpoints, per-language parameters,
precision, distribution), in the order fairseq is given them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from xling.pretrain.job import PretrainJob
from xling.pretrain.names import MODEL_NAME, OPTIMIZER_NAME, TASK_NAME, USER_DIR
from xling.pretrain.schedule import BatchLayout, Schedule, batch_layout, save_interval_updates, schedule

# fairseq's c10d backend wraps the model in torch's DistributedDataParallel with
# device_ids=[device_id], which torch refuses for a CPU module; CPU processes use fairseq's
# legacy_ddp, which all-reduces gradients itself (zeros for parameters a process did not use).
CPU_DDP_BACKEND = "legacy_ddp"

COMPILE = {"auto": "auto", True: "on", False: "off"}  # pretrain.compile -> --compile-encoder


@dataclass(frozen=True)
class ResumeLayout:
    """What a run being resumed was started with, where a new run's command differs: its
    checkpoint only loads into a model and optimizer of the same shape (see
    :func:`xling.pretrain.checkpoints.checkpoint_layout`)."""

    vocab_multiple: int = 1  # embedding rows of checkpoints written before --vocab-multiple
    fairseq_fp16: bool = False  # trained with fairseq's --fp16 (its FP16Optimizer's state)


def data_path(data_dirs: str | Path | Sequence[str | Path]) -> str:
    """fairseq's data argument: several directories (code-switched variants of the training
    text) are joined with os.pathsep, and fairseq trains epoch k on directory k mod n."""
    if isinstance(data_dirs, (str, Path)):
        return str(data_dirs)
    return os.pathsep.join(str(d) for d in data_dirs)


def fairseq_train_command(job: PretrainJob, save_dir: str | Path, gpus: int = 0, num_workers: int = 0,
                          resume: ResumeLayout | None = None) -> list[str]:
    """Full ``fairseq-train`` argv of ``job`` on ``gpus`` GPUs, or without one on the CPU in
    ``job.recipe.cpu_processes`` processes (several need :func:`cpu_process_commands` to start
    them). The update is the configured global batch whatever the processes
    (:func:`xling.pretrain.schedule.batch_layout`). ``resume``: the layout of the checkpoint a
    resumed run continues from, where it predates options that change it."""
    processes = max(1, int(gpus) or int(job.recipe.cpu_processes))
    sched = schedule(job.recipe, job.model)
    return [
        "fairseq-train", data_path(job.data_dirs),
        "--user-dir", USER_DIR,
        "--task", TASK_NAME,
        "--languages", ",".join(job.languages),
        "--arch", MODEL_NAME,
        "--criterion", "masked_lm",
        *model_options(job, resume.vocab_multiple if resume else int(job.recipe.vocab_multiple)),
        *data_options(job, batch_layout(job.recipe, processes), num_workers),
        *optimisation_options(job, sched),
        *checkpoint_options(job, sched, save_dir),
        *per_language_options(job),
        *device_options(job, gpus, processes, resume),
    ]


def as_named(section: Mapping, *names: str) -> list[str]:
    """``--<name> <value>`` for each field of ``section`` whose fairseq option bears its name,
    the value as the config gives it."""
    return [arg for name in names for arg in (f"--{name.replace('_', '-')}", str(section[name]))]


def model_options(job: PretrainJob, vocab_multiple: int) -> list[str]:
    """The encoder (3.1), XLM's model (docs/reading.md) or what older models had, and how its
    tables are padded and its core compiled (speed alone)."""
    m, sep = job.model, job.separate
    return [
        "--encoder-layers", str(m.layers),
        "--encoder-attention-heads", str(m.heads),
        "--encoder-embed-dim", str(m.dim),
        "--encoder-ffn-embed-dim", str(m.ffn_dim),
        "--activation-fn", str(m.activation),
        *as_named(m, "dropout", "attention_dropout"),
        "--max-positions", str(m.tokens_per_sample),
        "--separate-layers", str(sep.layers),
        *(["--language-embeddings"] if m.language_embeddings else []),
        *as_named(m, "mlm_head"),
        "--layer-norm-eps", str(float(m.layer_norm_eps)),
        *(["--activation-dropout", str(m.activation_dropout)] if m.activation_dropout is not None else []),
        "--param-init", str(m.init),
        "--vocab-multiple", str(vocab_multiple),
        "--compile-encoder", COMPILE[job.recipe.compile],
    ]


def data_options(job: PretrainJob, layout: BatchLayout, num_workers: int) -> list[str]:
    """Continuous streams (or one sentence per sample, or windows of one), BERT's masking,
    smoothed language sampling, and the batch of one forward pass."""
    r = job.recipe
    return [
        *as_named(job.model, "tokens_per_sample"),
        *as_named(r, "sample_break_mode"),
        "--sentence-window", str(r.sentence_window or 0),
        *as_named(r, "mask_prob", "leave_unmasked_prob", "random_token_prob"),
        "--multilang-sampling-alpha", str(r.sampling_alpha),
        "--batch-size", str(layout.streams_per_step),
        "--batch-size-valid", str(layout.streams_per_step),
        "--update-freq", str(layout.update_freq),
        "--required-batch-size-multiple", "1",
        "--num-workers", str(num_workers),
    ]


def optimisation_options(job: PretrainJob, sched: Schedule) -> list[str]:
    """fairseq's Adam on torch's multi-tensor kernels, the inverse-sqrt schedule, the updates."""
    r = job.recipe
    return [
        "--optimizer", OPTIMIZER_NAME,
        "--adam-betas", f"({float(r.adam_betas[0])}, {float(r.adam_betas[1])})",
        "--adam-eps", str(float(r.adam_eps)),
        "--weight-decay", str(float(r.weight_decay)),
        "--clip-norm", str(float(r.clip_norm)),
        *as_named(r, "lr", "lr_scheduler", "warmup_updates"),
        "--warmup-init-lr", "1e-07",
        "--max-update", str(sched.max_updates),
        "--seed", str(job.seed),
    ]


def checkpoint_options(job: PretrainJob, sched: Schedule, save_dir: str | Path) -> list[str]:
    """Validation per language, the source language first (it picks ``checkpoint_best.pt``), at
    the paper's update-based epochs; checkpoints in ``save_dir``, resumed from its
    ``checkpoint_last.pt`` (fairseq's default); JSON logs."""
    r = job.recipe
    return [
        "--valid-subset", ",".join(f"valid_{lang}" for lang in job.languages),
        "--best-checkpoint-metric", "loss",
        "--validate-interval-updates", str(sched.updates_per_epoch),
        "--validate-interval", "1000000",  # only the update-based "epochs" of the paper
        "--save-dir", str(save_dir),
        # checkpoint_best is only written when a validation (every epoch) coincides with a save
        "--save-interval-updates", str(save_interval_updates(r, job.model)),
        "--save-interval", "1000000",
        *as_named(r, "keep_interval_updates"),
        "--no-epoch-checkpoints",
        "--log-format", "json",
        *(["--tensorboard-logdir", str(Path(save_dir).parent / "tensorboard")] if r.tensorboard else []),
        *as_named(r, "log_interval"),
        "--skip-invalid-size-inputs-valid-test",
    ]


def per_language_options(job: PretrainJob) -> list[str]:
    """Table 1's separation options: random words within one language, per-language embeddings
    (positions too, unless shared), and one language per batch wherever a parameter is per
    language."""
    sep = job.separate
    one_language = job.recipe.one_language_batches or sep.any or job.model.language_embeddings
    return [
        *(["--in-language-replacement"] if job.in_language_random_words else []),
        *(["--separate-embeddings", "--language-vocab-mask"] if sep.embeddings else []),
        *(["--shared-positions"] if sep.embeddings and not sep.separate_positions else []),
        *(["--one-language-batches"] if one_language else []),
    ]


def device_options(job: PretrainJob, gpus: int, processes: int, resume: ResumeLayout | None) -> list[str]:
    """CPU jobs run fp32. GPU jobs: ``--autocast bf16|fp16`` in the plugin's task on fp32 weights
    with fused AdamW (fp16 with the optimizer's loss scaling), the loss and gradient norm logged
    one update late so that no step waits for the GPU; fairseq's ``--fp16`` only resumes runs
    started with it. Then data parallelism over the ``processes``."""
    if not gpus:
        return distribution_options(job, processes, cpu=True)
    return [*gpu_precision_options(job.recipe.precision, resume), *distribution_options(job, processes, cpu=False)]


def distribution_options(job: PretrainJob, processes: int, cpu: bool) -> list[str]:
    """Data parallelism over ``processes`` GPUs or CPU processes (none for one)."""
    if cpu:
        many = ["--distributed-world-size", str(processes), "--distributed-backend", "gloo",
                "--ddp-backend", CPU_DDP_BACKEND]
        return ["--cpu", *(many if processes > 1 else [])]
    if processes == 1:
        return []
    # each GPU's batch is one language: the other language's parameters are unused
    unused = ["--ddp-backend", "c10d", "--find-unused-parameters"] if job.separate.any else []
    return ["--distributed-world-size", str(processes), *unused]


# GPU precision -> the plugin's options (fp16 scales the loss in the optimizer)
PRECISION = {"bf16": ["--autocast", "bf16"], "fp16": ["--autocast", "fp16", "--loss-scaling"], "fp32": []}


def gpu_precision_options(precision: str, resume: ResumeLayout | None = None) -> list[str]:
    """The options of a GPU run in ``precision``. Never fairseq's ``--bf16`` (its TPU path in
    fairseq 0.12: the trainer crashes on a GPU), ``--memory-efficient-*`` (fairseq refuses our
    optimizer) nor ``--amp`` (its scaler skips no update without a sync)."""
    if resume is not None and resume.fairseq_fp16:
        return ["--fp16"]  # the checkpoint holds FP16Optimizer's state: resume as it was started
    return [*PRECISION[precision], "--deferred-grad-norm", "--deferred-loss-log"]


def cpu_process_commands(cmd: list[str], port: int) -> list[list[str]]:
    """One argv per rank for a command with several CPU processes. fairseq starts one process per
    *GPU* itself and its torchrun path divides by the GPU count, so CPU ranks are started by the
    caller, each told its rank and a TCP rendezvous on this machine."""
    if "--cpu" not in cmd or "--distributed-world-size" not in cmd:
        return [list(cmd)]
    world = int(cmd[cmd.index("--distributed-world-size") + 1])
    init = ["--distributed-init-method", f"tcp://127.0.0.1:{int(port)}", "--distributed-no-spawn"]
    return [[*cmd, *init, "--distributed-rank", str(rank)] for rank in range(world)]
