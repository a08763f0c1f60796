"""Snakemake script of rule cc_extract: a CC-100 .txt.xz -> non-empty text lines
(xling.preprocess.extract.extract_cc).

input:  cc;  output: txt
"""

from _setup import run_logged

from xling.preprocess.extract import extract_cc


def main(sm) -> dict:
    return {"lines": extract_cc(sm.input.cc, sm.output.txt)}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
