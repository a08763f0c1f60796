"""Snakemake script of rule findings: the paper's claims checked against Table 1 (with intervals
over the seeds) and the Section 5 analyses (xling.report.findings).

input:  results = Table 1's result.json files; words, transfer, retrieval, cka = the Section 5 JSON
        files of Figures 4, 5, 6 and 7 (each may be empty)
params: settings, labels, pairs, tasks, top_k, baseline, source, unavailable (as rule report's),
        separate (each setting's `separate` entry), cka_order (pairs closest first), note,
        language_twins ({rows_have, twins}: rows that differ only in language embeddings),
        by_pair (only where report.findings_by_pair is set: Table 1's claims on each pair's column)
output: findings_md = findings.md, findings_csv = findings.csv
"""

import json
from pathlib import Path

from _setup import run_logged

from xling.report import table1_from_results
from xling.report.findings import write_findings


def _by_pair(files) -> dict:
    out = {}
    for f in files:
        rec = json.loads(Path(f).read_text(encoding="utf-8"))
        out[rec["pair"]] = rec
    return out


def main(sm) -> dict:
    p = sm.params
    results = [Path(x) for x in sm.input.results]
    unavailable = {task: dict(cells) for task, cells in dict(p.unavailable).items()}

    def table1(pairs):
        return table1_from_results(results, list(p.settings), dict(p.labels), list(pairs), list(p.tasks),
                                   int(p.top_k), p.baseline, p.source, unavailable)[1]
    table = table1(p.pairs)
    by_pair = {pair: table1([pair]) for pair in p.pairs} if p.get("by_pair") else None
    o = sm.output
    found = write_findings(table, {k: dict(v) for k, v in dict(p.separate).items()}, Path(o.findings_md),
                           Path(o.findings_csv), retrieval=_by_pair(sm.input.retrieval), cka=_by_pair(sm.input.cka),
                           cka_order=list(p.cka_order), words=_by_pair(sm.input.words),
                           transfer=[json.loads(Path(f).read_text(encoding="utf-8")) for f in sm.input.transfer],
                           baseline=p.baseline, note=p.note or None, language_twins=dict(p.language_twins),
                           by_pair=by_pair)
    return {f.claim: f.status for f in found}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
