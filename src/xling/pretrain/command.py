"""The ``fairseq-train`` command line of one pretraining job (paper 3.1 hyperparameters,
Table 1 separation options), built from the config's ``model:``/``pretrain:`` sections."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from xling.config import fill_defaults
from xling.errors import ConfigError
from xling.pretrain.job import OPTIONS, Separation, in_language_random_words, model_option
from xling.pretrain.names import MODEL_NAME, OPTIMIZER_NAME, TASK_NAME, USER_DIR
from xling.pretrain.schedule import batch_layout, save_interval_updates, schedule

# fairseq's c10d backend wraps the model in torch's DistributedDataParallel with
# device_ids=[device_id], which torch refuses for a CPU module; CPU processes use fairseq's
# legacy_ddp, which all-reduces gradients itself (zeros for parameters a process did not use).
CPU_DDP_BACKEND = "legacy_ddp"

COMPILE = {"auto": "auto", True: "on", False: "off"}  # pretrain.compile -> --compile-encoder


@dataclass(frozen=True)
class ResumeLayout:
    """What a run being resumed was started with, where a new run's command differs: its
    checkpoint only loads into a model and optimizer of the same shape (see
    :func:`xling.pretrain.run.checkpoint_layout`)."""

    vocab_multiple: int = 1  # embedding rows of checkpoints written before --vocab-multiple
    fairseq_fp16: bool = False  # trained with fairseq's --fp16 (its FP16Optimizer's state)


def data_path(data_dirs: str | Path | Sequence[str | Path]) -> str:
    """fairseq's data argument: several directories (code-switched variants of the training
    text) are joined with os.pathsep, and fairseq trains epoch k on directory k mod n."""
    if isinstance(data_dirs, (str, Path)):
        return str(data_dirs)
    return os.pathsep.join(str(d) for d in data_dirs)


def fairseq_train_command(
    data_dir: str | Path | Sequence[str | Path],
    save_dir: str | Path,
    setting: dict,
    model: dict,
    pretrain: dict,
    languages: list[str],
    n_gpus: int,
    cpu: bool,
    seed: int,
    num_workers: int = 0,
    cpu_processes: int = 1,
    resume: ResumeLayout | None = None,
) -> list[str]:
    """Full ``fairseq-train`` argv. ``languages`` are in language-id order; the first one
    is the source language whose dev perplexity selects ``checkpoint_best.pt``.
    ``seed``: fairseq's seed (config ``seeds.pretrain``; en' of Section 5 has its own). ``data_dir``: one directory, or
    several whose training data fairseq cycles through by epoch (dictionary and validation data
    from the first). The update is the configured global batch on ``n_gpus`` GPUs (or
    ``cpu_processes`` CPU processes): see :func:`xling.pretrain.schedule.batch_layout`; several CPU
    processes need :func:`cpu_process_commands` to start them. ``resume``: the layout of the
    checkpoint a resumed run continues from, where it predates options that change it.

    Precision on GPUs: ``--autocast bf16|fp16`` in the plugin's task on fp32 weights with fused
    AdamW (fp16 with the optimizer's loss scaling), the loss and gradient norm logged one update
    late so that no step waits for the GPU; fairseq's ``--fp16`` only resumes runs started with it.
    CPU jobs run fp32."""
    # a job's tracked recipe leaves an option out at the value older models had (xling.pretrain.job),
    # which is the schema's default but for the random words' rule
    rule = pretrain.get("in_language_random_words", OPTIONS["in_language_random_words"])
    pretrain = fill_defaults({"pretrain": dict(pretrain)})["pretrain"]  # jobs' params omit new keys at default
    languages = list(languages)
    if not languages or len(set(languages)) != len(languages):
        raise ConfigError(f"pretraining needs distinct languages, got {languages}")
    sep_emb = bool(setting["separate"]["embeddings"])
    sep_pos = bool(setting["separate"].get("positions", sep_emb))
    if sep_pos and not sep_emb:
        raise ConfigError("separate.positions needs separate.embeddings")
    sep_layers = int(setting["separate"]["layers"])
    if not 0 <= sep_layers <= int(model["layers"]):
        raise ConfigError(f"separate.layers={sep_layers} outside 0..{model['layers']}")
    in_language = in_language_random_words(Separation(sep_emb, sep_layers), rule)
    language_embeddings = bool(model_option(model, "language_embeddings")) and len(set(languages)) > 1
    activation_dropout = model_option(model, "activation_dropout")
    sched = schedule(pretrain, model)
    # checkpoint_best is only written when a validation (every epoch) coincides with a save
    save_every = save_interval_updates(pretrain, model)
    if cpu and n_gpus:
        raise ConfigError("cpu=True with n_gpus > 0")
    processes = max(1, int(cpu_processes)) if cpu else max(1, int(n_gpus))
    layout = batch_layout(pretrain, processes)
    if pretrain["compile"] not in COMPILE:
        raise ConfigError(f"pretrain.compile must be auto, true or false, got {pretrain['compile']!r}")
    vocab_multiple = resume.vocab_multiple if resume else int(pretrain["vocab_multiple"])
    if pretrain["optimizer"] != "adam":
        raise ConfigError(f"pretrain.optimizer: only adam is supported, got {pretrain['optimizer']}")
    betas = pretrain["adam_betas"]

    cmd = [
        "fairseq-train", data_path(data_dir),
        "--user-dir", USER_DIR,
        "--task", TASK_NAME,
        "--languages", ",".join(languages),
        "--arch", MODEL_NAME,
        "--criterion", "masked_lm",
        # model (3.1)
        "--encoder-layers", str(model["layers"]),
        "--encoder-attention-heads", str(model["heads"]),
        "--encoder-embed-dim", str(model["dim"]),
        "--encoder-ffn-embed-dim", str(model["ffn_dim"]),
        "--activation-fn", str(model["activation"]),
        "--dropout", str(model["dropout"]),
        "--attention-dropout", str(model["attention_dropout"]),
        "--max-positions", str(model["tokens_per_sample"]),
        "--separate-layers", str(sep_layers),
        # XLM's model (docs/reading.md), or what older models had
        *(["--language-embeddings"] if language_embeddings else []),
        "--mlm-head", str(model_option(model, "mlm_head")),
        "--layer-norm-eps", str(float(model_option(model, "layer_norm_eps"))),
        *(["--activation-dropout", str(activation_dropout)] if activation_dropout is not None else []),
        "--param-init", str(model_option(model, "init")),
        "--vocab-multiple", str(vocab_multiple),
        "--compile-encoder", COMPILE[pretrain["compile"]],
        # data: continuous streams (or one sentence per sample), BERT masking, smoothed language sampling
        "--tokens-per-sample", str(model["tokens_per_sample"]),
        "--sample-break-mode", str(pretrain["sample_break_mode"]),
        "--sentence-window", str(pretrain.get("sentence_window") or 0),
        "--mask-prob", str(pretrain["mask_prob"]),
        "--leave-unmasked-prob", str(pretrain["leave_unmasked_prob"]),
        "--random-token-prob", str(pretrain["random_token_prob"]),
        "--multilang-sampling-alpha", str(pretrain["sampling_alpha"]),
        "--batch-size", str(layout.streams_per_step),
        "--batch-size-valid", str(layout.streams_per_step),
        "--update-freq", str(layout.update_freq),
        "--required-batch-size-multiple", "1",
        "--num-workers", str(num_workers),
        # optimisation
        "--optimizer", OPTIMIZER_NAME,  # fairseq's Adam, on torch's multi-tensor kernels
        "--adam-betas", f"({float(betas[0])}, {float(betas[1])})",
        "--adam-eps", str(float(pretrain["adam_eps"])),
        "--weight-decay", str(float(pretrain["weight_decay"])),
        "--clip-norm", str(float(pretrain["clip_norm"])),
        "--lr", str(pretrain["lr"]),
        "--lr-scheduler", str(pretrain["lr_scheduler"]),
        "--warmup-updates", str(pretrain["warmup_updates"]),
        "--warmup-init-lr", "1e-07",
        "--max-update", str(sched.max_updates),
        "--seed", str(int(seed)),
        # validation per language, source language first: it picks checkpoint_best
        "--valid-subset", ",".join(f"valid_{lang}" for lang in languages),
        "--best-checkpoint-metric", "loss",
        "--validate-interval-updates", str(sched.updates_per_epoch),
        "--validate-interval", "1000000",  # only the update-based "epochs" of the paper
        # checkpoints: resume from checkpoint_last.pt in save_dir (fairseq's default)
        "--save-dir", str(save_dir),
        "--save-interval-updates", str(save_every),
        "--save-interval", "1000000",
        "--keep-interval-updates", str(pretrain["keep_interval_updates"]),
        "--no-epoch-checkpoints",
        "--log-format", "json",
        *(["--tensorboard-logdir", str(Path(save_dir).parent / "tensorboard")] if pretrain.get("tensorboard") else []),
        "--log-interval", str(pretrain["log_interval"]),
        "--skip-invalid-size-inputs-valid-test",
    ]
    if in_language:
        cmd.append("--in-language-replacement")
    if sep_emb:
        cmd += ["--separate-embeddings", "--language-vocab-mask"]
        if not sep_pos:
            cmd.append("--shared-positions")
    if pretrain["one_language_batches"] or sep_emb or sep_layers or language_embeddings:
        # per-language parameters need one language per batch
        cmd.append("--one-language-batches")
    separate_parts = sep_emb or sep_layers > 0
    if cpu:
        cmd.append("--cpu")
        if processes > 1:
            cmd += ["--distributed-world-size", str(processes), "--distributed-backend", "gloo",
                    "--ddp-backend", CPU_DDP_BACKEND]
    else:
        cmd += gpu_precision_options(pretrain["precision"], resume)
        if n_gpus > 1:
            cmd += ["--distributed-world-size", str(n_gpus)]
            if separate_parts:
                # each GPU's batch is one language: the other language's parameters are unused
                cmd += ["--ddp-backend", "c10d", "--find-unused-parameters"]
    return cmd


def gpu_precision_options(precision: str, resume: ResumeLayout | None = None) -> list[str]:
    """The options of a GPU run in ``precision``. Never fairseq's ``--bf16`` (its TPU path in
    fairseq 0.12: the trainer crashes on a GPU), ``--memory-efficient-*`` (fairseq refuses our
    optimizer) nor ``--amp`` (its scaler skips no update without a sync)."""
    if resume is not None and resume.fairseq_fp16:
        return ["--fp16"]  # the checkpoint holds FP16Optimizer's state: resume as it was started
    if precision == "bf16":
        options = ["--autocast", "bf16"]
    elif precision == "fp16":
        options = ["--autocast", "fp16", "--loss-scaling"]
    elif precision == "fp32":
        options = []
    else:
        raise ConfigError(f"pretrain.precision must be fp16, bf16 or fp32, got {precision!r}")
    return [*options, "--deferred-grad-norm", "--deferred-loss-log"]


def cpu_process_commands(cmd: list[str], port: int) -> list[list[str]]:
    """One argv per rank for a command with several CPU processes. fairseq starts one process per
    *GPU* itself and its torchrun path divides by the GPU count, so CPU ranks are started by the
    caller, each told its rank and a TCP rendezvous on this machine."""
    if "--cpu" not in cmd or "--distributed-world-size" not in cmd:
        return [list(cmd)]
    world = int(cmd[cmd.index("--distributed-world-size") + 1])
    init = ["--distributed-init-method", f"tcp://127.0.0.1:{int(port)}", "--distributed-no-spawn"]
    return [[*cmd, *init, "--distributed-rank", str(rank)] for rank in range(world)]
