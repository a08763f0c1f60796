"""Snakemake script for the `binarize_prime_pair` rule: the monolingual data of a language under a
second language id (xling.binarize.alias_language), for Figure 7's bilingual en-en′ model.

input:  mono_dict = <mono bin dir>/dict.txt (its language data live beside it)
params: lang, alias
output: shared_dict = <pair bin dir>/dict.txt
"""

from pathlib import Path

from _setup import run_logged  # also puts src/ on sys.path for per-rule conda envs

from xling.binarize import alias_language


def main(sm) -> None:
    alias_language(Path(sm.input.mono_dict).parent, sm.params.lang, sm.params.alias,
                   Path(sm.output.shared_dict).parent)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
