"""Snakemake script of rule taskdata_ner_levow: the Levow (2006) Chinese NER set, its character
labels realigned to the corpus' word segmentation (xling.taskdata.ner.build_levow).

input:  licensed = the corpus' files; stanford (optional) = the Stanford segmenter
params: levow_dir = where the files are; tokenize = the language's TokenizeSettings fields (its
        segmenter); dev_fraction
output: <dir>/{train,dev,test}.bio
"""

from pathlib import Path

from _setup import run_logged

from xling.preprocess.segment import segmenter
from xling.taskdata.ner import build_levow


def main(sm) -> dict:
    tok = sm.params.tokenize
    seg = segmenter(tok["segmenter"], home=sm.input.get("stanford"), model=tok["stanford_model"])
    return build_levow(sm.params.levow_dir, Path(sm.output[0]).parent, seg, dev_fraction=float(sm.params.dev_fraction))


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
