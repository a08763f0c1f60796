"""Snakemake script of rule analysis_report: Figures 6 and 7 and their tables from the analysis
result JSON files (no GPU, no model; xling.report.analysis_figures).

input:  retrieval, cka = the pairs' JSON files
params: note (the demo's caption)
output: fig6_png, fig6_pdf, fig7_png, fig7_pdf, tables_md
"""

import json
from pathlib import Path

from _setup import run_logged

from xling.io import atomic_write
from xling.report.analysis_figures import analysis_tables_md, figure6, figure7


def main(sm) -> None:
    fig6 = [json.loads(Path(f).read_text()) for f in sm.input.retrieval]
    fig7 = [json.loads(Path(f).read_text()) for f in sm.input.cka]
    note = sm.params.note or None
    o = sm.output
    figure6(fig6, Path(o.fig6_png), Path(o.fig6_pdf), title=note)
    figure7(fig7, Path(o.fig7_png), Path(o.fig7_pdf), title=note)
    text = "# Section 5: alignment of monolingual models (Figures 6 and 7)\n\n"
    if note:
        text += f"{note}\n\n"
    with atomic_write(o.tables_md) as fh:
        fh.write(text + analysis_tables_md(fig6, fig7))


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
