"""Snakemake script of rule liu_sample: the first N sentences of a language's training split
(xling.liu.sample.copy_first_lines).

input:  the language's wiki.train.txt
params: lines (N)
output: the sample
"""

from pathlib import Path

from _setup import run_logged

from xling.liu.sample import copy_first_lines


def main(sm) -> dict:
    return {"lines": copy_first_lines(Path(sm.input[0]), Path(sm.output[0]), int(sm.params.lines))}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
