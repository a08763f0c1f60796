"""Snakemake script of rule liu_xnli_report: XNLI transfer of every MLM of the study (Figures 2, 4,
6) and the mean difference shift beside m-BERT's Table 4 (xling.report.liu_xnli).

input:  the liu_xnli and liu_xnli_static JSON files, m-BERT's last when configured
params: labels, note
output: table_md, table_csv, fig_png, fig_pdf, fig_csv (the figure's bars)
"""

import json
from pathlib import Path

from _setup import run_logged

from xling.report.liu_xnli import write_table4, write_xnli_figure_csv, xnli_figure, xnli_rows


def main(sm) -> dict:
    rows = xnli_rows([json.loads(Path(f).read_text()) for f in sm.input])
    p, o = sm.params, sm.output
    write_table4(rows, dict(p.labels), Path(o.table_md), Path(o.table_csv), note=p.note)
    xnli_figure(rows, dict(p.labels), Path(o.fig_png), Path(o.fig_pdf), title=p.note or None)
    write_xnli_figure_csv(rows, Path(o.fig_csv))
    return {"rows": len(rows)}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
