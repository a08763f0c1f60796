"""Snakemake script of rule fasttext_vectors (analysis.words.fasttext: corpus): Figure 4's
baseline, fastText skip-gram vectors of one language trained on its preprocessed training text
(xling.analysis.fasttext.train_vectors).

input:  text = R/corpus/<lang>/wiki.train.txt (the text the language's MLM reads)
params: fasttext = fastText's options (xling.analysis.fasttext.FastTextSettings fields)
output: vec = the vectors in wiki.xx.vec's text format
"""

from pathlib import Path

from _setup import run_logged

from xling.analysis.fasttext import FastTextSettings, train_vectors


def main(sm) -> dict:
    return train_vectors(Path(sm.input.text), Path(sm.output.vec), FastTextSettings(**sm.params.fasttext))


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
