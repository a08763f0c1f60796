"""Shared test setup."""

import sys
from pathlib import Path

# Snakemake puts a script's directory on sys.path before running it (workflow/scripts/_setup.py
# is imported that way); tests that run the scripts with runpy need the same.
SCRIPTS = str(Path(__file__).resolve().parents[1] / "workflow" / "scripts")
if SCRIPTS not in sys.path:
    sys.path.insert(0, SCRIPTS)
