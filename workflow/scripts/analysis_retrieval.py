"""Snakemake script of rule analysis_retrieval (Figure 6): align the target's monolingual model
onto English on XNLI-15way rows, then retrieve Tatoeba translations; the same with both models
untrained (each architecture initialised with random_seed), the random-encoder baseline
(xling.analysis.run).

input:  <model>_checkpoint/_dictionary/_bpe of both monolingual models; way15, tatoeba_x,
        tatoeba_en; stanford (optional) = the Stanford segmenter
params: source, target, tokenize (both languages' TokenizeSettings fields), rows, norm_steps,
        random_seed (the untrained encoder's; no model trains with it), max_seq_len, batch_size
output: result = the pair's JSON (P@1 per layer, with and without the map; the random encoder's)
"""

from pathlib import Path

from _setup import log_line, model_spec, run_logged, tokenize_settings, torch_device

from xling.analysis.run import run_retrieval


def main(sm) -> dict:
    p = sm.params
    res = run_retrieval(model_spec(sm, p.source, p.source), model_spec(sm, p.target, p.target),
                        Path(sm.input.way15), (Path(sm.input.tatoeba_x), Path(sm.input.tatoeba_en)),
                        tokenize_settings(sm),
                        int(p.rows), int(p.norm_steps), Path(sm.output.result), max_seq_len=int(p.max_seq_len),
                        batch_size=int(p.batch_size), device=torch_device(sm), log=log_line,
                        random_seed=int(p.random_seed))
    return {"p_at_1": res["p_at_1"]}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
