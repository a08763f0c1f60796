"""Snakemake script of rule external_cka (Figure 7 on a transformers checkpoint): linear CKA per
layer of parallel XNLI-15way sentences under a row's models (a monolingual pair: kind
`monolingual`; one multilingual model read as both languages: kind `bilingual`), beside the target
side read by an untrained model of the same architecture (kind `random`), the length-controlled
CKA beside it, bootstrap intervals over the sentences (xling.analysis.run.run_cka).

input:  source_config/_weights, target_config/_weights; way15
params: row (name, role, label, models, sha256: the weights as planned), source, target, rows,
        random_seed (the untrained model's and the bootstrap's), bootstrap, max_seq_len, batch_size
output: result = the row's JSON for the pair
"""

from pathlib import Path

from _setup import log_line, run_logged, torch_device

from xling.analysis.external import cka_models, row_specs
from xling.analysis.run import fifteen_way, run_cka


def main(sm) -> dict:
    p = sm.params
    src, tgt, meta = row_specs(dict(p.row), p.source, p.target)
    rows = fifteen_way(Path(sm.input.way15), [p.source, p.target], int(p.rows))
    res = run_cka(f"{p.source}-{p.target}", (rows[p.source], rows[p.target]),
                  cka_models(src, tgt, int(p.random_seed)), {}, Path(sm.output.result),
                  max_seq_len=int(p.max_seq_len), batch_size=int(p.batch_size), device=torch_device(sm),
                  log=log_line, bootstrap=int(p.bootstrap), bootstrap_seed=int(p.random_seed), meta=meta)
    return {"cka": res["cka"]}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
