"""Snakemake script of rule taskdata_xnli: XNLI dev/test for every language and the source
language's MultiNLI train (xling.taskdata.nli.build_xnli).

input:  xnli, multinli = the extracted archives
params: languages, source
output: <tasks>/xnli/<lang>/{dev,test}.tsv; train = <tasks>/xnli/<source>/train.tsv
"""

from pathlib import Path

from _setup import run_logged

from xling.taskdata.nli import build_xnli


def main(sm) -> dict:
    out_root = Path(sm.output.train).parents[1]  # <tasks>/xnli, the root of every declared output
    return build_xnli(sm.input.xnli, sm.input.multinli, list(sm.params.languages), out_root, source=sm.params.source)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
