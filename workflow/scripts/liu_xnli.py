"""Snakemake script of rule liu_xnli: XNLI fine-tuning of one of the study's MLMs, scored on every
language with and without the mean difference shift (xling.liu.xnli_job).

input:  checkpoint, dictionary, bpe (the model's files); train = the source language's XNLI train;
        dev_<lang>, test_<lang> = XNLI files; text_<lang> = BPE training texts (the means);
        stanford (optional)
params: job = the xling.finetune.FinetuneJob fields; meta (model, size); languages; freeze; alphas;
        sentences; batch_size; all_layers
output: result = JSON
"""

from pathlib import Path

from _setup import log_line, run_logged, torch_device

from xling.finetune import FinetuneJob
from xling.liu.xnli_job import run_liu_xnli


def main(sm) -> dict:
    i, p = sm.input, sm.params
    langs = list(p.languages)
    res = run_liu_xnli(
        FinetuneJob.from_tracked(p.job), Path(i.checkpoint), Path(i.dictionary), Path(i.bpe), Path(i.train),
        {l: Path(i[f"dev_{l}"]) for l in langs}, {l: Path(i[f"test_{l}"]) for l in langs},
        {l: Path(i[f"text_{l}"]) for l in langs}, int(p.freeze), [float(a) for a in p.alphas], int(p.sentences),
        Path(sm.output.result), dict(p.meta), batch_size=int(p.batch_size), device=torch_device(sm),
        log=log_line, stanford_home=i.get("stanford"), all_layers=bool(p.all_layers))
    return {l: round(s["test"], 2) for l, s in res["languages"].items()}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
