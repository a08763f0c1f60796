"""Snakemake script of rule wiki_extract: a Wikipedia dump -> plain text lines (WikiExtractor,
xling.preprocess.extract.extract_wiki).

input:  dump;  output: txt
params: drop = the WikiExtractor lines dropped besides doc tags and empty lines (preprocess.wiki_drop)
"""

from _setup import run_logged

from xling.preprocess.extract import extract_wiki


def main(sm) -> dict:
    return {"lines": extract_wiki(sm.input.dump, sm.output.txt, processes=sm.threads, drop=sm.params.drop)}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
