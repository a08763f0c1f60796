"""Snakemake script of rule tei_extract: a language's TEI novels -> one sentence a line, its main
corpus (xling.preprocess.tei.tei_sentences).

input:  tei = the language's TEI files, in the config's order
params: lang, splitter (preprocess.sentence_splitter)
output: txt
"""

from pathlib import Path

from _setup import run_logged

from xling.preprocess.tei import tei_sentences


def main(sm) -> dict:
    return tei_sentences([Path(p) for p in sm.input.tei], Path(sm.output.txt), sm.params.lang, sm.params.splitter)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
