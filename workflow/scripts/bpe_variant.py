"""Snakemake script of rule bpe_variant: a code-switched copy of the training text segmented with
the codes of its BPE directory (xling.bpe.apply_bpe).

input:  manifest = <bpe dir>/bpe.json, text = the copy's tokenised training text
params: lang
output: output[0] = <bpe dir>/<lang>.train.v<k>.bpe
"""

from pathlib import Path

from _setup import run_logged

from xling.bpe import apply_bpe


def main(sm) -> None:
    apply_bpe(Path(sm.input.manifest), sm.params.lang, Path(sm.input.text), Path(sm.output[0]), workers=sm.threads)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
