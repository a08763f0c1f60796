"""A script of the checkout that is not a package module (``bench/*.py``, ``scripts/*.py``), imported
by its path so that a test can call its functions."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from xling.config import REPO


def load(relative: str) -> ModuleType:
    """The module of ``REPO / relative`` (e.g. ``"bench/bench_mst.py"``), executed once per call."""
    path = REPO / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
