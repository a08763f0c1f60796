"""Snakemake script of rule liu_static: word2vec or GloVe on every language's BPE training text of
one data size (xling.liu.static_job.train_static).

input:  texts = the BPE training texts
params: method (word2vec | glove), settings (liu2020.static), seed
output: vec = the pieces' vectors (fastText text format)
"""

from pathlib import Path

from _setup import run_logged

from xling.liu.static_job import train_static


def main(sm) -> dict:
    return train_static(sm.params.method, [Path(t) for t in sm.input.texts], Path(sm.output.vec),
                        dict(sm.params.settings), seed=int(sm.params.seed), threads=int(sm.threads))


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
