"""Snakemake script of rules pretrain and pretrain_mono: one MLM pretraining job, resumed from its
last checkpoint when it was stopped (xling.pretrain.run.pretrain_job).

input:  dictionary = <data dir>/dict.txt; copies = the code-switched copies' training data
params: data_dirs (the first holds dictionary and validation data), setting, model, pretrain,
        languages (source first), seed
output: done = done.json, best = checkpoint_best.pt
"""

from pathlib import Path

from _setup import run_logged

from xling.pretrain.run import pretrain_job


def main(sm) -> dict:
    summary = pretrain_job(
        data_dir=[Path(d) for d in sm.params.data_dirs],
        done_path=sm.output.done,
        setting=dict(sm.params.setting),
        model=dict(sm.params.model),
        pretrain=dict(sm.params.pretrain),
        languages=list(sm.params.languages),
        # `gpu`: the name res() gives it for snakemake-executor-plugin-slurm
        gpus=int(sm.resources.get("gpu", 0) or 0),
        seed=int(sm.params.seed),
        threads=int(sm.threads),
        job_log=sm.log[0] if sm.log else None,
    )
    return {k: summary[k] for k in ("updates", "tokens_per_s", "wall_s", "invocations") if k in summary}


# a resumed job keeps the log of its earlier invocations
run_logged(snakemake, main, append=True)  # noqa: F821 - injected by Snakemake
