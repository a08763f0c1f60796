"""Snakemake script of rule merge_split: tokenised shards -> train/valid/test
(xling.preprocess.split.merge_and_split).

input:  shards; match_train (Wiki-CC) = the same language's Wikipedia train split, whose size in
        tokens the CC train split takes
params: split = the xling.preprocess.split.SplitSettings fields
output: train, valid, test
"""

from _setup import run_logged

from xling.preprocess.split import SplitSettings, count_tokens, merge_and_split


def main(sm) -> dict:
    match = sm.input.get("match_train")
    return merge_and_split(list(sm.input.shards), sm.output.train, sm.output.valid, sm.output.test,
                           SplitSettings(**sm.params.split), train_tokens=count_tokens(match) if match else None)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
