"""Snakemake script of rule compute_ledger: the run's cost per rule and per model
(xling.report.ledger.write_ledger).

input:  the declared outputs of the counted jobs (so that the ledger runs after them)
params: entries (rule, setting, pair, gpus, benchmark file of each job), planned (budget hours per
        model), planning_basis, labels (setting -> Table 1 label), note
output: ledger_md, ledger_csv
"""

from pathlib import Path

from _setup import run_logged

from xling.report.ledger import write_ledger


def main(sm) -> dict:
    p = sm.params
    return write_ledger(p.entries, p.planned, p.planning_basis, p.labels, Path(sm.output.ledger_md),
                        Path(sm.output.ledger_csv), note=p.note)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
