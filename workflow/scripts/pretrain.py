"""Snakemake script of rule pretrain / pretrain_mono: one MLM pretraining job."""

import _setup  # noqa: F401  (puts src/ on sys.path for per-rule conda envs)

from pathlib import Path

from xling.pretrain.run import pretrain_job

snakemake = globals()["snakemake"]  # injected by Snakemake's script directive

pretrain_job(
    data_dir=[Path(d) for d in snakemake.params.data_dirs],
    done_path=snakemake.output.done,
    setting=dict(snakemake.params.setting),
    model=dict(snakemake.params.model),
    pretrain=dict(snakemake.params.pretrain),
    languages=list(snakemake.params.languages),
    # `gpu`: the name res() gives it for snakemake-executor-plugin-slurm
    gpus=int(getattr(snakemake.resources, "gpu", 0) or getattr(snakemake.resources, "gpus", 0) or 0),
    seed=snakemake.params.seed,
    threads=int(snakemake.threads),
    job_log=snakemake.log[0] if snakemake.log else None,
)
