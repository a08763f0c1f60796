"""Snakemake script of rule liu_translation: token translation by the mean difference shift for
one of the study's MLMs, every direction, layer and alpha (xling.liu.translation_job).

input:  checkpoint, dictionary, bpe (the model's files); text_<lang> = BPE training texts (the
        means); vocab_<lang> = dict.<lang>.txt (token_sets: training only); way15 = XNLI-15way;
        stanford (optional)
params: meta (model, size), directions, layers, alphas, rows, sentences, token_sets (evaluated |
        training: the convert rate's V_lang), tokenize, max_seq_len, batch_size
output: result = JSON
"""

from pathlib import Path

from _setup import log_line, run_logged, tokenize_settings, torch_device

from xling.liu.translation_job import parallel_pieces, run_liu_translation


def main(sm) -> dict:
    p = sm.params
    directions = [tuple(d) for d in p.directions]
    langs = sorted({lang for d in directions for lang in d})
    parallel = parallel_pieces(Path(sm.input.way15), langs, int(p.rows), tokenize_settings(sm), Path(sm.input.bpe))
    vocabs = {lang: Path(sm.input[f"vocab_{lang}"]) for lang in langs} if p.token_sets == "training" else None
    res = run_liu_translation(
        Path(sm.input.checkpoint), Path(sm.input.dictionary),
        {lang: Path(sm.input[f"text_{lang}"]) for lang in langs},
        parallel, directions, [int(x) for x in p.layers], [float(a) for a in p.alphas], int(p.sentences),
        Path(sm.output.result), dict(p.meta), vocabs=vocabs, max_seq_len=int(p.max_seq_len),
        batch_size=int(p.batch_size), device=torch_device(sm), log=log_line)
    return {"scores": len(res["scores"])}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
