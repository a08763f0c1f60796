"""Snakemake script of rule word_links (Figure 5): one-to-one links of a pair's 15-way rows
(xling.analysis.transfer.run_links).

input:  way15 = XNLI-15way; fast_align, atools; stanford (optional) = the segmenter
params: pair (src-tgt), rows, aligner (fast_align | eflomal), tokenize (both languages' TokenizeSettings fields)
output: the links file (source tokens, target tokens, links per row)
"""

from pathlib import Path

from _setup import log_line, run_logged, tokenize_settings

from xling.analysis.transfer import run_links


def main(sm) -> dict:
    tools = {"fast_align": Path(sm.input.fast_align), "atools": Path(sm.input.atools)}
    return run_links(sm.params.pair, Path(sm.input.way15), int(sm.params.rows), tokenize_settings(sm), tools,
                     Path(sm.output[0]), aligner=sm.params.aligner, log=log_line)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
