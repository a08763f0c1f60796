"""Snakemake script of rule taskdata_ner_conll2003: English CoNLL-2003 (a licensed corpus) as BIO
splits (xling.taskdata.ner.build_conll2003).

input:  the corpus' files;  params: conll_dir = where they are;  output: <dir>/{train,dev,test}.bio
"""

from pathlib import Path

from _setup import run_logged

from xling.taskdata.ner import build_conll2003


def main(sm) -> dict:
    return build_conll2003(sm.params.conll_dir, Path(sm.output[0]).parent)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
