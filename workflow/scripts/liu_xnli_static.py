"""Snakemake script of rule liu_xnli_static: XNLI of one of the study's static models, a
BiLSTM-max classifier over its fixed vectors trained on the source language and scored on every
language (xling.liu.static_xnli).

input:  vectors (.vec), bpe (the BPE the vectors are of); train = the source language's XNLI train;
        dev_<lang>, test_<lang> = XNLI files; stanford (optional)
params: meta (model, size); languages (the source first); tokenize; classifier (hidden, batch_size,
        lr, epochs, max_train_examples, max_eval_examples, max_seq_len, seed)
output: result = JSON
"""

from pathlib import Path

from _setup import log_line, run_logged, tokenize_settings, torch_device

from xling.liu.static_xnli import run_static_xnli
from xling.liu.translation_job import bpe_pieces


def main(sm) -> dict:
    i, p = sm.input, sm.params
    langs, settings, c = list(p.languages), tokenize_settings(sm), dict(p.classifier)

    def pieces(lang: str, sentences: list[str]) -> list[list[str]]:
        return bpe_pieces(sentences, settings[lang], Path(i.bpe), lang)

    res = run_static_xnli(
        Path(i.vectors), pieces, Path(i.train), {l: Path(i[f"dev_{l}"]) for l in langs},
        {l: Path(i[f"test_{l}"]) for l in langs}, langs[0], Path(sm.output.result), dict(p.meta),
        hidden=int(c["hidden"]), epochs=int(c["epochs"]), batch_size=int(c["batch_size"]), lr=float(c["lr"]),
        max_train_examples=c["max_train_examples"], max_eval_examples=c["max_eval_examples"],
        max_seq_len=int(c["max_seq_len"]), seed=int(c["seed"]), device=torch_device(sm), log=log_line)
    return {l: round(s["test"], 2) for l, s in res["languages"].items()}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
