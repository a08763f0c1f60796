"""Snakemake script of rule liu_report: Liu et al.'s word-retrieval figure and CSV
(xling.report.liu_figures).

input:  the liu_retrieval JSON files
params: labels (model -> legend label), note (the demo's caption)
output: png, pdf, csv
"""

import json
from pathlib import Path

from _setup import run_logged

from xling.report.liu_figures import retrieval_figure, retrieval_rows, write_retrieval_csv


def main(sm) -> dict:
    rows = retrieval_rows([json.loads(Path(f).read_text()) for f in sm.input])
    o = sm.output
    retrieval_figure(rows, dict(sm.params.labels), Path(o.png), Path(o.pdf), title=sm.params.note or None)
    write_retrieval_csv(rows, Path(o.csv))
    return {"rows": len(rows)}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
