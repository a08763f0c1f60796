"""Snakemake script of rule taskdata_ner_wikiann: one language's WikiAnn (panx) NER splits
(xling.taskdata.ner.build_wikiann).

input:  panx = the extracted archive;  params: lang;  output: <dir>/{train,dev,test}.bio
"""

from pathlib import Path

from _setup import run_logged

from xling.taskdata.ner import build_wikiann


def main(sm) -> dict:
    return build_wikiann(sm.input.panx, sm.params.lang, Path(sm.output[0]).parent)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
