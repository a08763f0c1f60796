"""Snakemake script of rules table1_row and table1_column: one part of Table 1 beside the paper's
numbers (xling.report.build_part).

input:  results = the part's result.json files
params: title, and Table 1's aggregation (settings, labels, pairs, tasks, top_k, baseline, source,
        note, unavailable) restricted to the part
output: md, csv
"""

from pathlib import Path

from _setup import run_logged

from xling.report import build_part


def main(sm) -> dict:
    p = sm.params
    res = build_part(
        results=[Path(x) for x in sm.input.results],
        out_md=Path(sm.output.md),
        out_csv=Path(sm.output.csv),
        title=p.title,
        settings=list(p.settings),
        labels=dict(p.labels),
        pairs=list(p.pairs),
        tasks=list(p.tasks),
        top_k=int(p.top_k),
        baseline=p.baseline,
        source=p.source,
        note=p.note or None,
        unavailable={task: dict(cells) for task, cells in dict(p.unavailable).items()},
    )
    return {"cells": res["cells"]}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
