"""Snakemake script of rule codeswitch (Extra anchors): one code-switched copy of both languages'
training text (xling.codeswitch.codeswitch_pair).

input:  <lang>_train = tokenised train text, <lang>_dict = TSV from <lang> to the other language
params: languages (source, target), variant (which copy), codeswitch = the switching settings
output: report = the realised rates; src_text, tgt_text = the switched texts
"""

from pathlib import Path

from _setup import run_logged

from xling.codeswitch import codeswitch_pair


def main(sm) -> dict:
    src, tgt = sm.params.languages
    cs = sm.params.codeswitch
    report = codeswitch_pair(
        {lang: Path(sm.input[f"{lang}_train"]) for lang in (src, tgt)},
        {lang: Path(sm.input[f"{lang}_dict"]) for lang in (src, tgt)},
        {src: Path(sm.output.src_text), tgt: Path(sm.output.tgt_text)}, Path(sm.output.report),
        seed=int(cs["seed"]), replace_prob=float(cs["replace_prob"]), max_fraction=float(cs["max_fraction"]),
        batch_words=int(cs["batch_words"]), max_phrase_words=int(cs["max_phrase_words"]),
        lowercase_fallback=bool(cs["lowercase_fallback"]), variant=int(sm.params.variant))
    keys = ("words", "replaced_words", "rate_of_dictionary_words", "capped_batches")
    return {lang: {k: st[k] for k in keys} for lang, st in report["languages"].items()}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
