"""Snakemake script for the task-data rules (params.task picks the builder): thin wrapper over
xling.taskdata."""

import contextlib
import json
import sys
from pathlib import Path

try:
    import _setup  # noqa: F401
except ImportError:
    pass

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
        seg = segmenter(p.segmenter, home=getattr(p, "stanford_home", None), model=getattr(p, "stanford_model", "ctb"))
        counts = build_levow(p.levow_dir, Path(sm.output[0]).parent, seg, dev_fraction=float(p.dev_fraction))
    elif task == "parsing":
        counts = build_ud(sm.input.ud, p.treebank, dict(p.splits), Path(sm.output[0]).parent)
    else:
        raise ValueError(f"unknown task-data builder {task!r}")
    print(json.dumps({"task": task, "counts": counts}), file=sys.stderr)


def run(sm) -> None:
    """main() with stderr going to the rule's log file when it has one."""
    log = list(getattr(sm, "log", []) or [])
    if not log:
        main(sm)
        return
    Path(log[0]).parent.mkdir(parents=True, exist_ok=True)
    with open(log[0], "w") as fh, contextlib.redirect_stderr(fh):
        main(sm)


if "snakemake" in globals():
    run(snakemake)  # noqa: F821 - injected by Snakemake
