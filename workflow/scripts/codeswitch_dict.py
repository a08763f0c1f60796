"""Snakemake script for the `bilingual_dict` rule: R/dict/<src>-<tgt>.tsv and its reverse.

input:  source = unpacked PanLex CSV snapshot folder, or a MUSE `src tgt` file (src -> tgt)
params: kind (panlex | muse), src, tgt, uids (language -> PanLex uid overrides),
        moses (language -> Moses language code, to tokenise entries like the corpus),
        lowercase (preprocess.lowercase_and_remove_accent)
output: fwd = <src>-<tgt>.tsv, rev = <tgt>-<src>.tsv
"""

from pathlib import Path

try:
    import _setup  # noqa: F401
except ImportError:
    pass

from xling.codeswitch import build_dictionary


def entry_tokenizer(moses_lang: str | None, lowercase: bool):
    """Tokenise dictionary entries as the preprocess stage tokenises the corpus."""
    if not moses_lang:
        return None
    try:
        from xling.preprocess.moses import lowercase_and_remove_accent, moses_pipeline
        pipe = moses_pipeline(moses_lang)
    except ImportError:  # same chain through sacremoses directly
        from sacremoses import MosesPunctNormalizer, MosesTokenizer
        norm, tok = MosesPunctNormalizer(moses_lang, pre_replace_unicode_punct=True,
                                         post_remove_control_chars=True), MosesTokenizer(moses_lang)
        lowercase_and_remove_accent = None

        def pipe(text: str) -> str:
            return tok.tokenize(norm.normalize(text), return_str=True, escape=False)

    def run(text: str) -> str:
        out = pipe(text)
        if lowercase:
            if lowercase_and_remove_accent is None:
                raise RuntimeError("lowercase_and_remove_accent needs xling.preprocess.moses")
            out = lowercase_and_remove_accent(out)
        return out

    return run


def main(sm) -> None:
    p = sm.params
    moses = dict(p.get("moses", {}) or {})
    lowercase = bool(p.get("lowercase", False))
    info = build_dictionary(p.kind, Path(sm.input.source), p.src, p.tgt, Path(sm.output.fwd), Path(sm.output.rev),
                            uids=dict(p.get("uids", {}) or {}),
                            src_tok=entry_tokenizer(moses.get(p.src), lowercase),
                            tgt_tok=entry_tokenizer(moses.get(p.tgt), lowercase))
    print(f"{sm.output.fwd}: {info}")


if "snakemake" in globals():
    main(snakemake)  # noqa: F821
