"""Snakemake script of rule finetune: one (setting, pair, task, hyperparameter cell) job ->
result.json (xling.finetune.run_finetune).

input:  train, en_dev, tgt_dev, tgt_test = the task files; checkpoint, dictionary, bpe (its
        bpe.json) = the pretrained model; stanford = the segmenter, where a language needs it
params: job = the xling.finetune.FinetuneJob fields; meta = the job's wildcards for the record
output: result = result.json
"""

from pathlib import Path

from _setup import log_line, run_logged, torch_device

from xling.finetune import FinetuneJob, TaskFiles, run_finetune


def main(sm) -> dict:
    i = sm.input
    files = TaskFiles(train=Path(i.train), en_dev=Path(i.en_dev), tgt_dev=Path(i.tgt_dev), tgt_test=Path(i.tgt_test))
    res = run_finetune(FinetuneJob(**sm.params.job), Path(i.checkpoint), Path(i.dictionary), Path(i.bpe), files,
                       Path(sm.output.result), device=torch_device(sm), meta=dict(sm.params.meta), log=log_line,
                       stanford_home=i.get("stanford"))
    return {"en_dev": res["en_dev"], "tgt_test": res["tgt_test"], "best_epoch": res["best_epoch"]}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
