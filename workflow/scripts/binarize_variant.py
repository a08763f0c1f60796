"""Snakemake script of rule binarize_variant: a code-switched copy of the training text, binarised
with the pair's shared dictionary (xling.binarize.binarize_variant).

input:  shared_dict = <bin dir>/dict.txt; src_text, tgt_text = the copy's BPE texts
params: languages (source, target)
output: <bin dir>/v<k>/<lang>/train.{bin,idx}
"""

from pathlib import Path

from _setup import run_logged

from xling.binarize import binarize_variant


def main(sm) -> None:
    src, tgt = sm.params.languages
    out_dir = Path(sm.output[0]).parents[1]  # <bin dir>/v<k>
    binarize_variant(Path(sm.input.shared_dict), {src: Path(sm.input.src_text), tgt: Path(sm.input.tgt_text)},
                     out_dir, workers=sm.threads)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
