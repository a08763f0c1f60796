"""Snakemake script of rule bilingual_dict_freedict: R/dict/<src>-<tgt>.tsv and its reverse from
FreeDict's dictionaries (dictd, as Debian's packages extract), entries tokenised exactly as the
corpus (xling.codeswitch.build_dictionary, kind freedict).

input:  source = FreeDict's src -> tgt dictionary (an extracted package); reverse_source (optional) = its
        tgt -> src one; stanford (optional) = the Stanford segmenter
params: src, tgt, tokenize = both languages' TokenizeSettings fields
output: fwd = <src>-<tgt>.tsv, rev = <tgt>-<src>.tsv
"""

from pathlib import Path

from _setup import run_logged, tokenize_settings

from xling.codeswitch import build_dictionary
from xling.preprocess.tokenize import LineTokenizer


def main(sm) -> dict:
    p = sm.params
    toks = {lang: LineTokenizer(settings).batch for lang, settings in tokenize_settings(sm).items()}
    reverse = Path(sm.input.reverse_source) if "reverse_source" in sm.input.keys() else None
    info = build_dictionary("freedict", Path(sm.input.source), p.src, p.tgt, Path(sm.output.fwd),
                            Path(sm.output.rev), reverse=reverse, src_tok=toks[p.src], tgt_tok=toks[p.tgt])
    return {"dict": sm.output.fwd, **info}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
