"""Snakemake script of rule finetune: one (setting, pair, task, hyperparameter cell) job -> result.json."""

from _setup import run_logged  # also puts src/ on sys.path for per-rule conda envs

import sys
from pathlib import Path

import torch

from xling.finetune import run_finetune
from xling.preprocess.tokenize import TokenizeSettings

snakemake = globals()["snakemake"]  # injected by Snakemake's script directive


def main(sm) -> None:
    p = sm.params
    torch.set_num_threads(max(1, int(sm.threads)))
    device = p.get("device") or ("cuda" if int(sm.resources.get("gpu", 0) or 0) > 0 and torch.cuda.is_available()
                                 else "cpu")
    # tokenise task text exactly as the pretraining corpus was (languages.<lang>, preprocess.*)
    settings = {lang: TokenizeSettings.from_config(sm.config, lang, stanford_home=p.get("stanford_home"))
                for lang in (p.src, p.tgt)}
    run_finetune(
        task=p.task,
        checkpoint=Path(sm.input.checkpoint),
        bpe_dir=Path(sm.input.bpe).parent,
        task_dir=Path(p.task_dir),
        src_lang=p.src,
        tgt_lang=p.tgt,
        hp=dict(p.hp),
        epochs=int(p.epochs),
        out_json=Path(sm.output.result),
        seed=int(p.seed),
        device=device,
        max_seq_len=int(p.max_seq_len),
        schedule=p.schedule,
        warmup_fraction=float(p.warmup_fraction),
        epoch_size=None if p.epoch_size is None else int(p.epoch_size),
        tokenize_settings=settings,
        data_dir=Path(sm.input.dictionary).parent,
        meta=dict(p.meta),
        task_dirs=tuple(p.task_dirs),
        max_train_examples=p.get("max_train_examples"),
        log=lambda msg: print(msg, file=sys.stderr, flush=True),
    )


run_logged(snakemake, main)
