"""Snakemake script of rule external_report: the external rows' Figure 6 and 7 points, tables and
the Section 5 claims checked on each row (xling.report.external).

input:  retrieval, cka = the rows' JSON results (xling.analysis.external)
output: figure6_csv, figure7_csv, section5_md, findings_md, findings_csv
"""

import json
from pathlib import Path

from _setup import run_logged

from xling.report.external import write_external_report


def main(sm) -> dict:
    def read(files):
        return [json.loads(Path(f).read_text(encoding="utf-8")) for f in files]

    o = sm.output
    found = write_external_report(read(sm.input.retrieval), read(sm.input.cka), Path(o.figure6_csv),
                                  Path(o.figure7_csv), Path(o.section5_md), Path(o.findings_md),
                                  Path(o.findings_csv))
    return {f.claim: f.status for f in found}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
