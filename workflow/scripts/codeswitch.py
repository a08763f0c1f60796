"""Snakemake script for the `codeswitch` rule (Extra anchors): code-switch both languages of a pair.

input:  named `<lang>_train` (tokenised train text) and `<lang>_dict` (TSV from <lang> to the
        other language) for both languages
params: languages (ordered), variant (which switched copy), seed, replace_prob, max_fraction,
        batch_words, max_phrase_words, lowercase_fallback
output: report = R/codeswitch/<pair>/report.json (the <lang>.train.txt files live beside it)
"""

from pathlib import Path

try:
    import _setup  # noqa: F401
except ImportError:
    pass

from xling.codeswitch import codeswitch_pair
from xling.preprocess.logs import log_result  # one JSON summary line in the rule's log


def main(sm) -> None:
    p = sm.params
    langs = list(p.languages)
    report = codeswitch_pair(
        {lang: Path(sm.input[f"{lang}_train"]) for lang in langs},
        {lang: Path(sm.input[f"{lang}_dict"]) for lang in langs},
        Path(sm.output.report).parent, seed=int(p.seed), replace_prob=float(p.replace_prob),
        max_fraction=float(p.max_fraction), batch_words=int(p.batch_words),
        max_phrase_words=int(p.get("max_phrase_words", 4)),
        lowercase_fallback=bool(p.get("lowercase_fallback", True)), variant=int(p.variant))
    log_result(sm, {lang: {k: st[k] for k in ("words", "replaced_words", "rate_of_dictionary_words",
                                              "capped_batches")}
                    for lang, st in report["languages"].items()})


if "snakemake" in globals():
    main(snakemake)  # noqa: F821
