"""What a pytest session builds once for all its pytest-xdist workers: the shared slice, fast_align,
the GPU tests' CPU reference curves. The first worker to ask builds it under a file lock; the
others wait for that build instead of repeating it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable


def session_root(tmp_path_factory) -> Path:
    """The session's temporary directory, common to all xdist workers."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(tmp_path_factory, name: str, build: Callable[[Path], object]) -> Path:
    """``<session root>/<name>``, made by ``build(path)`` once per session."""
    from filelock import FileLock

    root = session_root(tmp_path_factory)
    path, done = root / name, root / f"{name}.done"
    with FileLock(root / f"{name}.lock"):
        if not done.exists():
            shutil.rmtree(path, ignore_errors=True)  # what a failed attempt left
            build(path)
            done.touch()
    return path
