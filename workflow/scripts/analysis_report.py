"""Snakemake script of rule analysis_report: Figures 4, 6 and 7 and their tables from the analysis
result JSON files (no GPU, no model; xling.report.analysis_figures, xling.report.word_figures).

input:  words, retrieval, cka = the pairs' JSON files; transfer = Figure 5's (task, pair, layer) files
params: note (the demo's caption)
output: fig4a_png, fig4a_pdf, fig4a_csv, fig4b_png, fig4b_pdf, fig4b_csv, fig4_csv, fig6_png, fig6_pdf,
        fig6_csv, fig7_png, fig7_pdf, fig7_csv, tables_md; with Figure 5 configured fig5_png, fig5_pdf,
        fig5_csv, fig8_png, fig8_pdf, fig8_csv (each figure's CSV: its plotted points)
"""

import json
from pathlib import Path

from _setup import run_logged

from xling.io import atomic_write
from xling.report.analysis_figures import analysis_tables_md, figure6, figure7, write_figure6_csv, write_figure7_csv
from xling.report.transfer_figures import figure5, figure8, transfer_markdown, write_figure5_csv, write_figure8_csv
from xling.report.word_figures import (
    figure4_markdown,
    figure4a,
    figure4b,
    write_figure4_csv,
    write_figure4a_csv,
    write_figure4b_csv,
)


def _read(files) -> list[dict]:
    return [json.loads(Path(f).read_text()) for f in files]


def main(sm) -> None:
    fig4, fig6, fig7 = _read(sm.input.words), _read(sm.input.retrieval), _read(sm.input.cka)
    note = sm.params.note or None
    o = sm.output
    figure4a(fig4, Path(o.fig4a_png), Path(o.fig4a_pdf), title=note)
    figure4b(fig4, Path(o.fig4b_png), Path(o.fig4b_pdf), title=note)
    write_figure4a_csv(fig4, Path(o.fig4a_csv))
    write_figure4b_csv(fig4, Path(o.fig4b_csv))
    write_figure4_csv(fig4, Path(o.fig4_csv))
    fig5 = _read(sm.input.transfer)
    if fig5:
        figure5(fig5, Path(o.fig5_png), Path(o.fig5_pdf), title=note)
        figure8(fig5, Path(o.fig8_png), Path(o.fig8_pdf), title=note)
        write_figure5_csv(fig5, Path(o.fig5_csv))
        write_figure8_csv(fig5, Path(o.fig8_csv))
    figure6(fig6, Path(o.fig6_png), Path(o.fig6_pdf), title=note)
    figure7(fig7, Path(o.fig7_png), Path(o.fig7_pdf), title=note)
    write_figure6_csv(fig6, Path(o.fig6_csv))
    write_figure7_csv(fig7, Path(o.fig7_csv))
    text = "# Section 5: alignment of monolingual models (Figures 4-8)\n\n"
    if note:
        text += f"{note}\n\n"
    with atomic_write(o.tables_md) as fh:
        fh.write(text + figure4_markdown(fig4) + "\n" + (transfer_markdown(fig5) + "\n" if fig5 else "")
                 + analysis_tables_md(fig6, fig7))


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
