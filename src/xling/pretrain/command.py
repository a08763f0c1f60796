"""The ``fairseq-train`` command line of one pretraining job (paper 3.1 hyperparameters,
Table 1 separation options), built from the config's ``model:``/``pretrain:`` sections."""

from __future__ import annotations

from pathlib import Path

from xling.errors import ConfigError
from xling.pretrain.fairseq_plugin import USER_DIR
from xling.pretrain.fairseq_plugin.mlm_model import MODEL_NAME
from xling.pretrain.fairseq_plugin.mlm_task import TASK_NAME
from xling.pretrain.fairseq_plugin.optim import OPTIMIZER_NAME


def max_updates(pretrain: dict) -> int:
    """The paper counts epochs of a fixed number of batches: stop at epochs x updates/epoch."""
    return int(pretrain["max_epoch"]) * int(pretrain["updates_per_epoch"])


def fairseq_train_command(
    data_dir: str | Path,
    save_dir: str | Path,
    setting: dict,
    model: dict,
    pretrain: dict,
    languages: list[str],
    n_gpus: int,
    cpu: bool,
    seed: int | None = None,
    num_workers: int = 0,
) -> list[str]:
    """Full ``fairseq-train`` argv. ``languages`` are in language-id order; the first one
    is the source language whose dev perplexity selects ``checkpoint_best.pt``.
    ``seed`` overrides ``pretrain.seed`` (en' of Section 5)."""
    languages = list(languages)
    if not languages or len(set(languages)) != len(languages):
        raise ConfigError(f"pretraining needs distinct languages, got {languages}")
    separate = setting.get("separate") or {}
    sep_emb = bool(separate.get("embeddings", False))
    sep_layers = int(separate.get("layers", 0))
    if not 0 <= sep_layers <= int(model["layers"]):
        raise ConfigError(f"separate.layers={sep_layers} outside 0..{model['layers']}")
    per_epoch = int(pretrain["updates_per_epoch"])
    save_every = int(pretrain["save_interval_updates"])
    if per_epoch % save_every:
        # checkpoint_best is only written when a validation coincides with a save
        raise ConfigError(f"pretrain.updates_per_epoch ({per_epoch}) must be a multiple of "
                          f"pretrain.save_interval_updates ({save_every})")
    if pretrain.get("optimizer", "adam") != "adam":
        raise ConfigError(f"pretrain.optimizer: only adam is supported, got {pretrain['optimizer']}")
    if cpu and n_gpus:
        raise ConfigError("cpu=True with n_gpus > 0")
    betas = pretrain.get("adam_betas", [0.9, 0.98])

    cmd = [
        "fairseq-train", str(data_dir),
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
        "--attention-dropout", str(model.get("attention_dropout", model["dropout"])),
        "--max-positions", str(model["tokens_per_sample"]),
        "--separate-layers", str(sep_layers),
        # data: continuous streams, BERT masking, smoothed language sampling
        "--tokens-per-sample", str(model["tokens_per_sample"]),
        "--sample-break-mode", "none",
        "--mask-prob", str(pretrain["mask_prob"]),
        "--leave-unmasked-prob", str(pretrain["leave_unmasked_prob"]),
        "--random-token-prob", str(pretrain["random_token_prob"]),
        "--multilang-sampling-alpha", str(pretrain["sampling_alpha"]),
        "--batch-size", str(pretrain["batch_size_per_gpu"]),
        "--batch-size-valid", str(pretrain["batch_size_per_gpu"]),
        "--required-batch-size-multiple", "1",
        "--num-workers", str(num_workers),
        # optimisation
        "--optimizer", OPTIMIZER_NAME,  # fairseq's Adam, on torch's multi-tensor kernels
        "--adam-betas", f"({float(betas[0])}, {float(betas[1])})",
        "--lr", str(pretrain["lr"]),
        "--lr-scheduler", str(pretrain["lr_scheduler"]),
        "--warmup-updates", str(pretrain["warmup_updates"]),
        "--warmup-init-lr", "1e-07",
        "--max-update", str(max_updates(pretrain)),
        "--seed", str(pretrain["seed"] if seed is None else seed),
        # validation per language, source language first: it picks checkpoint_best
        "--valid-subset", ",".join(f"valid_{lang}" for lang in languages),
        "--best-checkpoint-metric", "loss",
        "--validate-interval-updates", str(per_epoch),
        "--validate-interval", "1000000",  # only the update-based "epochs" of the paper
        # checkpoints: resume from checkpoint_last.pt in save_dir (fairseq's default)
        "--save-dir", str(save_dir),
        "--save-interval-updates", str(save_every),
        "--save-interval", "1000000",
        "--keep-interval-updates", str(pretrain.get("keep_interval_updates", 1)),
        "--no-epoch-checkpoints",
        "--log-format", "json",
        "--log-interval", str(pretrain.get("log_interval", 100)),
        "--skip-invalid-size-inputs-valid-test",
    ]
    if sep_emb:
        cmd += ["--separate-embeddings", "--in-language-replacement", "--language-vocab-mask"]
    if pretrain.get("one_language_batches", True) or sep_emb or sep_layers:
        # per-language parameters need one language per batch
        cmd.append("--one-language-batches")
    if cpu:
        cmd.append("--cpu")
    else:
        precision = pretrain.get("precision", "fp16")
        if precision == "fp16":
            cmd.append("--fp16")
        elif precision == "bf16":
            cmd.append("--bf16")
        elif precision != "fp32":
            raise ConfigError(f"pretrain.precision must be fp16, bf16 or fp32, got {precision}")
        if n_gpus > 1:
            cmd += ["--distributed-world-size", str(n_gpus)]
            if sep_emb or sep_layers:
                # each GPU's batch is one language: the other language's parameters are unused
                cmd += ["--ddp-backend", "c10d", "--find-unused-parameters"]
    return cmd
