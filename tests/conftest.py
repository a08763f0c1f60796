"""Shared test setup."""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# tests/ holds the test-support package (`from support.toy_data import ...`) and helper modules
# such as tiny_checkpoint: put it on sys.path explicitly rather than rely on pytest's rootdir
# insertion. Snakemake puts a script's directory on sys.path before running it
# (workflow/scripts/_setup.py is imported that way); tests that run the scripts with runpy need
# the same, ahead of tests/.
for path in (str(TESTS), str(TESTS.parent / "workflow" / "scripts")):
    if path not in sys.path:
        sys.path.insert(0, path)
