"""Snakemake script of rule tokenize_shard: one shard through the Moses chain or the Chinese
segmenter, one line per line (xling.preprocess.shards.tokenize_shard).

input:  shard; stanford (optional) = the Stanford segmenter
params: tokenize = the language's xling.preprocess.TokenizeSettings fields
output: tok
"""

from _setup import run_logged

from xling.preprocess.shards import tokenize_shard
from xling.preprocess.tokenize import TokenizeSettings


def main(sm) -> dict:
    settings = TokenizeSettings(**sm.params.tokenize, stanford_home=sm.input.get("stanford"))
    return {"lines": tokenize_shard(sm.input.shard, sm.output.tok, settings, threads=sm.threads),
            "settings": repr(settings)}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
