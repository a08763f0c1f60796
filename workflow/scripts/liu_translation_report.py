"""Snakemake script of rule liu_translation_report: Table 2 of every MLM of the study beside
m-BERT's with the token sets beside Table 3's, and Figures 7-8 for one direction
(xling.report.liu_translation).

input:  the liu_translation JSON files, m-BERT's last when configured (the first of the
        largest size is drawn)
params: labels, layers (the models' L), figure_direction, note
output: table_md, table_csv, fig_png, fig_pdf, fig_csv (the figure's points)
"""

import json
from pathlib import Path

from _setup import run_logged

from xling.report.liu_translation import figure7_8, table2_rows, token_set_rows, write_figure7_8_csv, write_table2


def main(sm) -> dict:
    results = [json.loads(Path(f).read_text()) for f in sm.input]
    p, o = sm.params, sm.output
    rows = table2_rows(results, int(p.layers))
    write_table2(rows, dict(p.labels), Path(o.table_md), Path(o.table_csv), note=p.note,
                 token_sets=token_set_rows(results))
    trained = [r for r in results if r["size"] is not None]  # ours; m-BERT is in the table only
    largest = max(int(r["size"]) for r in trained)
    drawn = next(r for r in trained if int(r["size"]) == largest)
    figure7_8(drawn, p.figure_direction, Path(o.fig_png), Path(o.fig_pdf), title=p.note or None)
    write_figure7_8_csv(drawn, p.figure_direction, Path(o.fig_csv))
    return {"rows": len(rows), "figure": f"{drawn['model']} n{largest}"}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
