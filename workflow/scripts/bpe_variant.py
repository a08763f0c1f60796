"""Snakemake script for the `bpe_variant` rule: segment a code-switched copy of the training text
with the codes of its BPE directory (xling.bpe.apply_bpe_dir).

input:  manifest = <bpe dir>/bpe.json, text = the copy's tokenised training text
params: lang
output: output[0] = <bpe dir>/<lang>.train.v<k>.bpe
"""

from pathlib import Path

from _setup import run_logged  # also puts src/ on sys.path for per-rule conda envs

from xling.bpe import apply_bpe_dir


def main(sm) -> None:
    apply_bpe_dir(Path(sm.input.manifest).parent, sm.params.lang, Path(sm.input.text), Path(sm.output[0]),
                  workers=sm.threads)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
