"""Snakemake script of rule liu_sample: N sentences of a language's training split, its lines cut
into sentences and the sentences drawn at random with a seed (xling.liu.sample.sample_sentences).

input:  the language's wiki.train.txt
params: sentences (N), lang, splitter (sentencex | lines), seed
output: the sample
"""

from pathlib import Path

from _setup import run_logged

from xling.liu.sample import sample_sentences


def main(sm) -> dict:
    p = sm.params
    return sample_sentences(Path(sm.input[0]), Path(sm.output[0]), int(p.sentences), str(p.lang), int(p.seed),
                            split=str(p.splitter))


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
