"""Snakemake script of rule taskdata_parsing: one treebank's UD v2.3 splits, validated
(xling.taskdata.ud.build_ud).

input:  ud = the extracted archive;  params: treebank, splits (which UD file stands for each)
output: <dir>/{train,dev,test}.conllu
"""

from pathlib import Path

from _setup import run_logged

from xling.taskdata.ud import build_ud


def main(sm) -> dict:
    return build_ud(sm.input.ud, sm.params.treebank, dict(sm.params.splits), Path(sm.output[0]).parent)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
