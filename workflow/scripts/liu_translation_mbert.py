"""Snakemake script of rule liu_translation_mbert: token translation by the mean difference shift
on multilingual BERT itself, every direction, layer and alpha (xling.liu.mbert).

input:  model = m-BERT's files (download rules); text_<lang> = tokenised sample lines (the means);
        way15 = XNLI-15way
params: meta (model, size), directions, alphas, rows, sentences, token_sets (evaluated | training:
        the convert rate's V_lang), max_seq_len, batch_size
output: result = JSON
"""

from pathlib import Path

from _setup import log_line, run_logged, torch_device

from xling.analysis.run import fifteen_way
from xling.liu.mbert import run_mbert_translation


def main(sm) -> dict:
    p = sm.params
    directions = [tuple(d) for d in p.directions]
    langs = sorted({lang for d in directions for lang in d})
    files = {Path(f).name: Path(f) for f in sm.input.model}
    texts = {lang: Path(sm.input[f"text_{lang}"]) for lang in langs}
    res = run_mbert_translation(
        files, texts, fifteen_way(Path(sm.input.way15), langs, int(p.rows)),
        directions, None, [float(a) for a in p.alphas], int(p.sentences), Path(sm.output.result), dict(p.meta),
        max_seq_len=int(p.max_seq_len), batch_size=int(p.batch_size), device=torch_device(sm), log=log_line,
        token_sets=str(p.token_sets))
    return {"scores": len(res["scores"])}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
