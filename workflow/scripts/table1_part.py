"""Snakemake script of rules table1_row and table1_column: one part of Table 1 beside the paper's
numbers (xling.report.build_part).

input:  results = the part's result.json files
params: part = the title and Table 1's aggregation (settings, labels, pairs, tasks, top_k, baseline,
        source, note, unavailable) restricted to the part
output: md, csv
"""

from pathlib import Path

from _setup import run_logged

from xling.report import build_part


def main(sm) -> dict:
    part = {**sm.params.part}
    part["note"] = part["note"] or None
    res = build_part([Path(x) for x in sm.input.results], Path(sm.output.md), Path(sm.output.csv), **part)
    return {"cells": res["cells"]}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
