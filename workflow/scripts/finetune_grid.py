"""Snakemake script of rule finetune_grid: the grid cells of one (setting, pair, pretraining seed,
task, batch size, fine-tuning seed), trained together in one process -> each cell's result.json,
the same file its own finetune job writes (xling.finetune.run_grid).

input:  train, en_dev, tgt_dev, tgt_test = the task files; tgt_extra_<name>, src_extra_<name> = the
        extra test sets of the target and of the source, where the job has any; checkpoint,
        dictionary, bpe (its bpe.json) = the pretrained model; stanford = the segmenter, where a
        language needs it
params: jobs = one xling.finetune.FinetuneJob's fields per cell; metas = each cell's wildcards for
        its record; grid = xling.finetune.GridSettings fields (how the step runs)
output: the cells' result.json, in the order of jobs
"""

from pathlib import Path

from _setup import log_line, run_logged, torch_device

from xling.finetune import FinetuneJob, GridSettings, TaskFiles, run_grid
from xling.finetune.examples import EXTRA_SIDES


def main(sm) -> dict:
    i = sm.input
    extra = {side: {k.removeprefix(f"{side}_"): Path(v) for k, v in i.items() if k.startswith(f"{side}_")}
             for side in EXTRA_SIDES}
    files = TaskFiles(train=Path(i.train), en_dev=Path(i.en_dev), tgt_dev=Path(i.tgt_dev), tgt_test=Path(i.tgt_test),
                      **extra)
    jobs = [FinetuneJob.from_tracked(job) for job in sm.params.jobs]
    results = run_grid(jobs, Path(i.checkpoint), Path(i.dictionary), Path(i.bpe), files, [Path(p) for p in sm.output],
                       device=torch_device(sm), metas=[dict(m) for m in sm.params.metas], log=log_line,
                       stanford_home=i.get("stanford"), settings=GridSettings.from_params(sm.params.grid))
    return {"cells": [{"hp": r["hp"], "en_dev": r["en_dev"], "tgt_test": r["tgt_test"], "best_epoch": r["best_epoch"],
                       **{side: r[side] for side in EXTRA_SIDES if side in r}} for r in results]}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
