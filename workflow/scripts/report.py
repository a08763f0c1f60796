"""Snakemake script of rule report: Table 1, the paper-vs-reproduction table and Figure 3 from the
fine-tuning result.json files (no GPU, no model; xling.report.build_report).

input:  results = the result.json files
params: settings, labels, pairs, tasks, top_k, baseline, source, note, unavailable (task ->
        target language -> why that column was not run)
output: table1_md and the other report files beside it
"""

from pathlib import Path

from _setup import run_logged

from xling.report import build_report


def main(sm) -> dict:
    p = sm.params
    res = build_report(
        results=[Path(x) for x in sm.input.results],
        out_dir=Path(sm.output.table1_md).parent,
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
