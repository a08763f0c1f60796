"""Snakemake script of rule pud_rows (analysis.parallel: pud): the PUD treebanks' sentences,
aligned by sent_id, as one TSV in XNLI-15way's format, which Section 5's jobs read as they read
15-way's (xling.taskdata.parallel_text.write_pud_rows).

input:  pud_<lang> = each Section 5 language's PUD treebank (.conllu), the source language's first
output: rows = the TSV (a header of language codes, a sentence per column)
"""

from pathlib import Path

from _setup import run_logged

from xling.taskdata.parallel_text import write_pud_rows


def main(sm) -> dict:
    files = {name.removeprefix("pud_"): Path(path) for name, path in sm.input.items()}
    return write_pud_rows(files, Path(sm.output.rows))


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
