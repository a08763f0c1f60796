"""Snakemake script of rule bilingual_dict: R/dict/<src>-<tgt>.tsv and its reverse, entries
tokenised exactly as the corpus (xling.codeswitch.build_dictionary).

input:  source = the unpacked PanLex CSV snapshot, or a MUSE `src tgt` file (src -> tgt);
        stanford (optional) = the Stanford segmenter
params: kind (panlex | muse), src, tgt, uids (language -> PanLex uid), tokenize = both languages'
        TokenizeSettings fields
output: fwd = <src>-<tgt>.tsv, rev = <tgt>-<src>.tsv
"""

from pathlib import Path

from _setup import run_logged, tokenize_settings

from xling.codeswitch import build_dictionary
from xling.preprocess.tokenize import LineTokenizer


def main(sm) -> dict:
    p = sm.params
    toks = {lang: LineTokenizer(settings).batch for lang, settings in tokenize_settings(sm).items()}
    info = build_dictionary(p.kind, Path(sm.input.source), p.src, p.tgt, Path(sm.output.fwd), Path(sm.output.rev),
                            uids=dict(p.uids), src_tok=toks[p.src], tgt_tok=toks[p.tgt])
    return {"dict": sm.output.fwd, **info}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
