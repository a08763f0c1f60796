"""Snakemake script for the `bilingual_dict` rule: R/dict/<src>-<tgt>.tsv and its reverse.

input:  source = unpacked PanLex CSV snapshot folder, or a MUSE `src tgt` file (src -> tgt);
        stanford (optional) = the Stanford segmenter folder when a language uses it
params: kind (panlex | muse), src, tgt, uids (language -> PanLex uid, e.g. en: eng-000)
output: fwd = <src>-<tgt>.tsv, rev = <tgt>-<src>.tsv
Dictionary entries are tokenised exactly as the preprocess stage tokenises the corpus
(languages.<lang>.moses / segmenter, preprocess.lowercase_and_remove_accent of the config).
"""

from pathlib import Path

try:
    import _setup  # noqa: F401
except ImportError:
    pass

from xling.codeswitch import build_dictionary
from xling.preprocess.tokenize import LineTokenizer, TokenizeSettings
from xling.preprocess.logs import log_result  # one JSON summary line in the rule's log


def main(sm) -> None:
    p = sm.params
    stanford = sm.input.get("stanford")
    toks = {lang: LineTokenizer(TokenizeSettings.from_config(sm.config, lang, stanford_home=stanford)).batch
            for lang in (p.src, p.tgt)}
    info = build_dictionary(p.kind, Path(sm.input.source), p.src, p.tgt, Path(sm.output.fwd), Path(sm.output.rev),
                            uids=dict(p.uids), src_tok=toks[p.src], tgt_tok=toks[p.tgt])
    log_result(sm, {"dict": str(sm.output.fwd), **info})


if "snakemake" in globals():
    main(snakemake)  # noqa: F821
