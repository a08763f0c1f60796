"""Snakemake script of rules table1_extra_<table>: Table 1 on an extra parsing test set
(xling.report.build_extra_table).

input:  results = the parsing result.json files of the table's pairs
params: table = Table 1's aggregation (settings, labels, pairs, tasks, top_k, baseline, source, note,
        unavailable), the result.json key it reports (score), the columns (null: the pairs' targets),
        title and about (what the test set is)
output: md, csv
"""

from pathlib import Path

from _setup import run_logged

from xling.report import build_extra_table


def main(sm) -> dict:
    table = {**sm.params.table}
    table["note"] = table["note"] or None
    res = build_extra_table([Path(x) for x in sm.input.results], Path(sm.output.md), Path(sm.output.csv), **table)
    return {"cells": res["cells"]}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
