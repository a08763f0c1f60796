"""Snakemake script of rules binarize and binarize_mono: a BPE directory's texts -> fairseq data
(xling.binarize.binarize).

input:  <lang>_<split> = the BPE texts; <lang>_train_v<k> = code-switched copies of the training text
params: languages (language-id order), copies (copy numbers beyond the first)
output: shared_dict = <bin dir>/dict.txt (the language folders and dictionaries beside it)
"""

from pathlib import Path

from _setup import run_logged

from xling.binarize import binarize

SPLITS = ("train", "valid", "test")


def main(sm) -> dict:
    langs = list(sm.params.languages)
    texts = {lang: {s: Path(sm.input[f"{lang}_{s}"]) for s in SPLITS} for lang in langs}
    copies = {lang: [Path(sm.input[f"{lang}_train_v{k}"]) for k in sm.params.copies] for lang in langs}
    info = binarize(texts, Path(sm.output.shared_dict).parent, workers=sm.threads, copies=copies)
    return {"dict": sm.output.shared_dict, **info}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
