"""Snakemake script of rule shared_space_report: the shared-space curve of every configured
bilingual model (xling.report.shared_space_figure).

input:  the models' shared_space JSON files
params: labels (setting -> Table 1 label), note (the demo's caption)
output: shared_png, shared_pdf, shared_csv
"""

import json
from pathlib import Path

from _setup import run_logged

from xling.report.shared_space_figure import curve_rows, shared_space_figure, write_curve_csv


def main(sm) -> dict:
    rows = curve_rows([json.loads(Path(f).read_text()) for f in sm.input])
    o = sm.output
    shared_space_figure(rows, dict(sm.params.labels), Path(o.shared_png), Path(o.shared_pdf),
                        title=sm.params.note or None)
    write_curve_csv(rows, Path(o.shared_csv))
    return {"points": len(rows)}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
