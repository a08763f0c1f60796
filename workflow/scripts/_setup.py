"""Imported first by every workflow script (and by the Snakefile): the one place that puts the
package in src/ on sys.path, so scripts also run in per-rule conda environments (`--sdm conda`)
where xling itself is not installed; and the one way a script runs, ``run_logged``.

Every script reads as::

    from _setup import run_logged
    from xling.<stage> import <function>

    def main(sm) -> dict | None:
        return <function>(<sm.input / sm.output / sm.params as the package's arguments>)

    run_logged(snakemake, main)
"""

import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")
# First, even when it is on the path already: Snakemake appends its own process's sys.path (this
# src/ among it) to a job's, after site-packages, where an editable install of another checkout
# of xling would otherwise win.
if SRC in sys.path:
    sys.path.remove(SRC)
sys.path.insert(0, SRC)


def run_logged(sm, main, append: bool = False) -> None:
    """Call ``main(sm)`` with stderr going to the rule's log file: its progress lines, the
    traceback of a failure, and last a one-line JSON summary (the rule, its wildcards and what
    ``main`` returned). ``append``: keep earlier runs' lines (a resumed pretraining job)."""
    import contextlib
    import json
    import traceback

    log = list(getattr(sm, "log", []) or [])
    if not log:  # a rule without a log file: everything stays on stderr
        result = main(sm)
        if result is not None:
            print(json.dumps(_summary(sm, result), default=str), file=sys.stderr)
        return
    Path(log[0]).parent.mkdir(parents=True, exist_ok=True)
    with open(log[0], "a" if append else "w", encoding="utf-8") as fh, contextlib.redirect_stderr(fh):
        try:
            result = main(sm)
        except BaseException:
            traceback.print_exc(file=fh)
            raise
        if result is not None:
            print(json.dumps(_summary(sm, result), default=str), file=fh, flush=True)


def _summary(sm, result: dict) -> dict:
    wildcards = dict(getattr(sm, "wildcards", {}) or {})
    return {"rule": getattr(sm, "rule", None), **({"wildcards": wildcards} if wildcards else {}), **result}


def torch_device(sm) -> str:
    """``cuda`` when the job was given a GPU (resource ``gpu``) and one is visible, else ``cpu``;
    torch's CPU threads are the job's threads."""
    import torch

    torch.set_num_threads(max(1, int(sm.threads)))
    gpus = int(sm.resources.get("gpu", 0) or 0)
    return "cuda" if gpus > 0 and torch.cuda.is_available() else "cpu"


def log_line(msg: str) -> None:
    """A progress line for the job's log (stderr, which run_logged sends there)."""
    print(msg, file=sys.stderr, flush=True)


def tokenize_settings(sm) -> dict:
    """Language -> xling.preprocess.TokenizeSettings from a rule's ``params.tokenize`` (how each
    language's corpus was tokenised) and its ``stanford`` input (the segmenter, where needed)."""
    from xling.preprocess.tokenize import TokenizeSettings

    home = sm.input.get("stanford")
    return {lang: TokenizeSettings(**fields, stanford_home=home) for lang, fields in sm.params.tokenize.items()}


def model_spec(sm, model: str, lang: str, text_lang: str | None = None, random_init_seed: int | None = None):
    """xling.model.ModelSpec of the model whose files are the rule's inputs ``<model>_checkpoint``,
    ``<model>_dictionary`` and ``<model>_bpe``, read as ``lang`` (``random_init_seed``: the same
    architecture, untrained)."""
    from xling.model import ModelSpec, PretrainedModel

    i = sm.input
    model_files = PretrainedModel.xling(i[f"{model}_checkpoint"], i[f"{model}_dictionary"], i[f"{model}_bpe"],
                                        random_init_seed)
    return ModelSpec(model_files, lang, text_lang)
