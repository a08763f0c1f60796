"""Snakemake script of rules wu2020_figure<N>: one Section 5 figure of Wu et al. alone, from exactly
the results it shows (xling.report.analysis_figures, xling.report.transfer_figures,
xling.report.word_figures), under R/report/figures/.

input:  results = the figure's result JSON files
params: figure (4, 5, 6, 7 or 8), note
output: the figure's PNG, PDF and CSV (its plotted points; Figure 4: 4a's and 4b's, and figure4.csv
        with both directions)
"""

import json
from pathlib import Path

from _setup import run_logged

from xling.report.analysis_figures import figure6, figure7, write_figure6_csv, write_figure7_csv
from xling.report.transfer_figures import figure5, figure8, write_figure5_csv, write_figure8_csv
from xling.report.word_figures import figure4a, figure4b, write_figure4_csv, write_figure4a_csv, write_figure4b_csv


def main(sm) -> dict:
    results = [json.loads(Path(f).read_text(encoding="utf-8")) for f in sm.input.results]
    o, note = sm.output, sm.params.note or None
    n = str(sm.params.figure)
    if n == "4":
        figure4a(results, Path(o.fig4a_png), Path(o.fig4a_pdf), title=note)
        figure4b(results, Path(o.fig4b_png), Path(o.fig4b_pdf), title=note)
        write_figure4a_csv(results, Path(o.fig4a_csv))
        write_figure4b_csv(results, Path(o.fig4b_csv))
        write_figure4_csv(results, Path(o.csv))
    else:
        draw, write = {"5": (figure5, write_figure5_csv), "6": (figure6, write_figure6_csv),
                       "7": (figure7, write_figure7_csv), "8": (figure8, write_figure8_csv)}[n]
        draw(results, Path(o.png), Path(o.pdf), title=note)
        write(results, Path(o.csv))
    return {"figure": n, "results": len(results)}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
