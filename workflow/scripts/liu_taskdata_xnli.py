"""Snakemake script of rule liu_taskdata_xnli: XNLI dev/test of the study's languages that Table 1
does not use (xling.taskdata.nli.build_xnli; the source language's train comes from taskdata_xnli).

input:  xnli, multinli = the extracted archives
params: languages, source
output: <tasks>/xnli/<lang>/{dev,test}.tsv
"""

from pathlib import Path

from _setup import run_logged

from xling.taskdata.nli import build_xnli


def main(sm) -> dict:
    out_root = Path(sm.output[0]).parents[1]  # <tasks>/xnli
    if sm.params.source in sm.params.languages:
        raise ValueError("the source language's XNLI files are rule taskdata_xnli's")
    return build_xnli(sm.input.xnli, sm.input.multinli, list(sm.params.languages), out_root, source=sm.params.source)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
