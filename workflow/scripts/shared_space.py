"""Snakemake script of rule shared_space: retrieval between a bilingual model's two languages at
each of its kept checkpoints (xling.analysis.shared_space.run_curve).

input:  done = the pretraining job's done.json (its fairseq/ folder beside it); dictionary, bpe;
        way15 = XNLI-15way; stanford (optional) = the segmenter
params: meta (setting, pair, seed), langs (the model's language ids, source first), tokenize (both
        languages' TokenizeSettings fields), rows, norm_steps, max_seq_len, batch_size
output: result = the model's JSON (P@1 per layer per checkpoint)
"""

from pathlib import Path

from _setup import log_line, run_logged, tokenize_settings, torch_device

from xling.analysis.run import fifteen_way
from xling.analysis.shared_space import run_curve


def main(sm) -> dict:
    p = sm.params
    langs = tuple(p.langs)
    rows = fifteen_way(Path(sm.input.way15), list(langs), int(p.rows))
    res = run_curve(Path(sm.input.done).parent, Path(sm.input.dictionary), Path(sm.input.bpe), langs,
                    (rows[langs[0]], rows[langs[1]]), tokenize_settings(sm), Path(sm.output.result), dict(p.meta),
                    norm_steps=int(p.norm_steps), max_seq_len=int(p.max_seq_len), batch_size=int(p.batch_size),
                    device=torch_device(sm), log=log_line)
    return {"checkpoints": [c["updates"] for c in res["checkpoints"]]}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
