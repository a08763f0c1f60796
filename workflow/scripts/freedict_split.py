"""Snakemake script of rule freedict_split (analysis.words.dictionary: freedict): Figure 4's train
and test dictionaries of one pair, a seeded split of a FreeDict dictionary's headwords in MUSE's
format (xling.analysis.dictionaries.write_freedict_split).

input:  dictd = the extracted download holding the dictionary's .index and .dict.dz
params: train_words, test_words, seed
output: train, test = MUSE-format files (`src tgt` a line), no headword in both
"""

from pathlib import Path

from _setup import run_logged

from xling.analysis.dictionaries import write_freedict_split


def main(sm) -> dict:
    p = sm.params
    return write_freedict_split(Path(sm.input.dictd), Path(sm.output.train), Path(sm.output.test),
                                int(p.train_words), int(p.test_words), int(p.seed))


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
