"""Imported first by every workflow script: puts the package in src/ on sys.path, so scripts also
run in per-rule conda environments (`--sdm conda`) where xling itself is not installed."""

import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")
if SRC not in sys.path:
    sys.path.insert(0, SRC)


def run_logged(sm, main) -> None:
    """Call ``main(sm)`` with stderr going to the rule's log file when the rule has one."""
    import contextlib

    log = list(getattr(sm, "log", []) or [])
    if not log:
        main(sm)
        return
    Path(log[0]).parent.mkdir(parents=True, exist_ok=True)
    with open(log[0], "w") as fh, contextlib.redirect_stderr(fh):
        main(sm)
