"""Snakemake script of rule analysis_cka (Figure 7): linear CKA per layer of parallel sentences
under the monolingual models, the pair's bilingual model and a random-init encoder, beside it the
length-controlled CKA, and each trained model's distance from its initial weights
(xling.analysis.run.run_cka); bootstrap intervals centred on the estimates (resampled rows bias
linear CKA upward: xling.analysis.cka.centred_interval).

input:  <model>_checkpoint/_dictionary/_bpe of both monolingual models; bi_checkpoint/_dictionary/
        _bpe (when the config trains a bilingual model for the pair); way15; paraphrase (en-en': the
        en' sentences); stanford (optional)
params: source, target (en_prime for en-en'), tokenize, rows, random_seed (no model's training seed:
        the config check refuses one), bootstrap (resamples),
        max_seq_len, batch_size
output: result = the pair's JSON
"""

from pathlib import Path

from _setup import log_line, model_spec, run_logged, tokenize_settings, torch_device

from xling.analysis.run import fifteen_way, read_lines, run_cka
from xling.config import data_language, is_prime
from xling.model import ModelSpec, PretrainedModel


def main(sm) -> dict:
    p, i = sm.params, sm.input
    src, target = p.source, p.target
    text_lang = data_language(target)  # en' is English text
    n = int(p.rows)
    if is_prime(target):
        src_rows, tgt_rows = fifteen_way(Path(i.way15), [src], n)[src], read_lines(Path(i.paraphrase), n)
    else:
        rows = fifteen_way(Path(i.way15), [src, target], n)
        src_rows, tgt_rows = rows[src], rows[target]
    bilingual = None
    if "bi_checkpoint" in i.keys():
        bi = PretrainedModel.xling(i.bi_checkpoint, i.bi_dictionary, i.bi_bpe)
        # the bilingual en-en' model reads en' under its second language id, with English BPE
        bilingual = (ModelSpec(bi, src), ModelSpec(bi, target, text_lang=text_lang))
    models = {
        "monolingual": (model_spec(sm, src, src), model_spec(sm, target, text_lang)),
        "bilingual": bilingual,
        # the paper uses a random encoder for the non-English side only
        "random": (model_spec(sm, src, src), model_spec(sm, target, text_lang, random_init_seed=int(p.random_seed))),
    }
    res = run_cka(f"{src}-{target}", (src_rows, tgt_rows), models, tokenize_settings(sm), Path(sm.output.result),
                  max_seq_len=int(p.max_seq_len), batch_size=int(p.batch_size), device=torch_device(sm), log=log_line,
                  bootstrap=int(p.bootstrap), bootstrap_seed=int(p.random_seed))
    return {"cka": res["cka"]}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
