"""Snakemake script of rule external_retrieval (Figure 6 on a transformers checkpoint): the
target language read by its model, mapped onto the source language's on XNLI-15way rows, then
Tatoeba retrieval, beside the same with the row's models untrained (the random-encoder baseline;
one multilingual model stays one); a multilingual model also without a map (raw, mean-difference shift)
(xling.analysis.run.run_retrieval, xling.analysis.external).

input:  source_config/_weights, target_config/_weights (which checkpoints); way15, tatoeba_x, tatoeba_en
params: row (name, role, label, models: language -> directory, sha256: the weights as planned),
        source, target, rows, norm_steps,
        random_seed (the untrained encoder's), max_seq_len, batch_size
output: result = the row's JSON for the pair (P@1 per layer; its models and their sha256)
"""

from pathlib import Path

from _setup import log_line, run_logged, torch_device

from xling.analysis.external import row_specs
from xling.analysis.run import run_retrieval


def main(sm) -> dict:
    p = sm.params
    src, tgt, meta = row_specs(dict(p.row), p.source, p.target)
    res = run_retrieval(src, tgt, Path(sm.input.way15), (Path(sm.input.tatoeba_x), Path(sm.input.tatoeba_en)), {},
                        int(p.rows), int(p.norm_steps), Path(sm.output.result), max_seq_len=int(p.max_seq_len),
                        batch_size=int(p.batch_size), device=torch_device(sm), log=log_line,
                        one_space=src.model == tgt.model, meta=meta, random_seed=int(p.random_seed))
    return {"p_at_1": res["p_at_1"]}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
