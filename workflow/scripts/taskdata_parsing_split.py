"""Snakemake script of rules taskdata_parsing_file and taskdata_parsing_extra: one task file of a
treebank's UD split, validated (xling.taskdata.ud.build_ud_split).

input:  conllu = the split's single downloaded file (taskdata.ud_files), or ud = the extracted archive
params: treebank, ud_split (the UD file that stands for the task file)
output: <lang>/<split or extra test set>.conllu
"""

from _setup import run_logged

from xling.taskdata.ud import build_ud_split


def main(sm) -> dict:
    return build_ud_split(sm.output[0], sm.params.treebank, sm.params.ud_split, conllu=sm.input.get("conllu"),
                          ud_root=sm.input.get("ud"))


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
