"""Snakemake script of rule wiki_extract: a Wikipedia dump -> plain text lines (WikiExtractor,
xling.preprocess.extract.extract_wiki).

input:  dump;  output: txt
"""

from _setup import run_logged

from xling.preprocess.extract import extract_wiki


def main(sm) -> dict:
    return {"lines": extract_wiki(sm.input.dump, sm.output.txt, processes=sm.threads)}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
