"""Snakemake script of rules split_shards_<lang>: raw text -> a fixed number of round-robin shards
(xling.preprocess.shards.split_shards).

input:  txt;  output: shards
"""

from _setup import run_logged

from xling.preprocess.shards import split_shards


def main(sm) -> dict:
    return {"lines_per_shard": split_shards(sm.input.txt, list(sm.output.shards))}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
