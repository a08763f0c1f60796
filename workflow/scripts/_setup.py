"""Imported first by every workflow script: puts the package in src/ on sys.path, so scripts also
run in per-rule conda environments (`--sdm conda`) where xling itself is not installed."""

import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")
if SRC not in sys.path:
    sys.path.insert(0, SRC)
