"""Snakemake script for the task-data rules (params.task picks the builder): thin wrapper over
xling.taskdata."""

import json
import sys
from pathlib import Path

from _setup import run_logged  # also puts src/ on sys.path

from xling.taskdata.ner import build_conll2003, build_levow, build_wikiann
from xling.taskdata.nli import build_xnli
from xling.preprocess.segment import segmenter
from xling.taskdata.ud import build_ud


def main(sm) -> None:
    p = sm.params
    task = p.task
    if task == "xnli":
        counts = build_xnli(sm.input.xnli, sm.input.multinli, p.languages, p.out_root, source=p.source)
    elif task == "ner_wikiann":
        counts = build_wikiann(sm.input.panx, p.lang, Path(sm.output[0]).parent)
    elif task == "ner_conll2003":
        counts = build_conll2003(p.conll_dir, Path(sm.output[0]).parent)
    elif task == "ner_levow":
        # the same segmenter as the corpus preprocessing, so task words match pretraining words
        seg = segmenter(p.segmenter, home=getattr(p, "stanford_home", None), model=getattr(p, "stanford_model", "pku"))
        counts = build_levow(p.levow_dir, Path(sm.output[0]).parent, seg, dev_fraction=float(p.dev_fraction))
    elif task == "parsing":
        counts = build_ud(sm.input.ud, p.treebank, dict(p.splits), Path(sm.output[0]).parent)
    else:
        raise ValueError(f"unknown task-data builder {task!r}")
    print(json.dumps({"task": task, "counts": counts}), file=sys.stderr)


if "snakemake" in globals():
    run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
