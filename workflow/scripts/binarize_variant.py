"""Snakemake script for the `binarize_variant` rule: a code-switched copy of the training text,
binarised with the pair's shared dictionary (xling.binarize.binarize_variant).

input:  shared_dict = <bin dir>/dict.txt, texts = <bpe dir>/<lang>.train.v<k>.bpe per language
params: languages (ordered), variant
output: <bin dir>/v<k>/<lang>/train.{bin,idx}
"""

from pathlib import Path

from _setup import run_logged  # also puts src/ on sys.path for per-rule conda envs

from xling.binarize import binarize_variant


def main(sm) -> None:
    out_dir = Path(sm.output[0]).parent.parent
    binarize_variant(Path(sm.input.shared_dict), Path(sm.input.texts[0]).parent, list(sm.params.languages),
                     int(sm.params.variant), out_dir, workers=sm.threads)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
