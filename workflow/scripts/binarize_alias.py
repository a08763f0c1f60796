"""Snakemake script of rule binarize_prime_pair: one language's binarised data under a second
language id as well (xling.binarize.alias_language), for Figure 7's bilingual en-en′ model.

input:  mono_dict, lang_dict = the monolingual dictionaries; data = its .bin/.idx files
params: lang, alias
output: shared_dict = <pair bin dir>/dict.txt
"""

from pathlib import Path

from _setup import run_logged

from xling.binarize import alias_language


def main(sm) -> None:
    alias_language(Path(sm.input.mono_dict), Path(sm.input.lang_dict), [Path(f) for f in sm.input.data],
                   sm.params.lang, sm.params.alias, Path(sm.output.shared_dict).parent)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
