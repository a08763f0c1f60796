"""Snakemake script of rule liu_xnli_mbert: Table 4 on m-BERT itself, fine-tuned above its first
layers on the source language's XNLI and scored on every language with and without the mean
difference shift (xling.liu.mbert.run_mbert_xnli).

input:  model = m-BERT's files (download rules); train = the source language's XNLI train;
        dev_<lang>, test_<lang> = XNLI files; text_<lang> = tokenised sample lines (the means);
        stanford (optional)
params: job = the xling.finetune.FinetuneJob fields; meta (model, size); languages; freeze; alphas;
        sentences; batch_size; all_layers
output: result = JSON
"""

from pathlib import Path

from _setup import log_line, run_logged, torch_device

from xling.finetune import FinetuneJob
from xling.liu.mbert import run_mbert_xnli


def main(sm) -> dict:
    i, p = sm.input, sm.params
    langs = list(p.languages)
    res = run_mbert_xnli(
        FinetuneJob.from_tracked(p.job), {Path(f).name: Path(f) for f in i.model}, Path(i.train),
        {l: Path(i[f"dev_{l}"]) for l in langs}, {l: Path(i[f"test_{l}"]) for l in langs},
        {l: Path(i[f"text_{l}"]) for l in langs}, int(p.freeze), [float(a) for a in p.alphas], int(p.sentences),
        Path(sm.output.result), dict(p.meta), batch_size=int(p.batch_size), device=torch_device(sm),
        log=log_line, stanford_home=i.get("stanford"), all_layers=bool(p.all_layers))
    return {l: round(s["test"], 2) for l, s in res["languages"].items()}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
