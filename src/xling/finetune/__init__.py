"""Zero-shot cross-lingual fine-tuning (paper 3.2): XNLI, NER and UD parsing on English, tested on
the pair's other language. A job trains the cells of a grid that share batch size and seed
(``run_grid``; one cell is a grid of one), through the one training loop (``loop``).

Planning reads ``job`` (the typed job, its cell's hyperparameters and the grid's cells), which
imports no torch; the training entry points are loaded from ``examples`` and ``grid`` when first
asked for, so that importing the package to plan does not load torch either."""

import importlib

from xling.finetune.job import FinetuneJob, Hyperparameters

_TRAINING = {"TaskFiles": "examples", "GridSettings": "grid", "finetune_grid": "grid", "run_grid": "grid"}

__all__ = ["FinetuneJob", "Hyperparameters", *_TRAINING]


def __getattr__(name: str):
    if name in _TRAINING:
        return getattr(importlib.import_module(f"xling.finetune.{_TRAINING[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
