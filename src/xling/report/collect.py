"""Reading the fine-tuning jobs' result.json files (R/finetune/<setting>/<pair>/<task>/<hp_id>/)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from xling.errors import InputError


@dataclass(frozen=True)
class Cell:
    """One grid cell's outcome: selection score (English dev) and the zero-shot target test score."""

    setting: str
    pair: str
    task: str
    hp_id: str
    en_dev: float
    tgt_test: float


def read_result(path: Path) -> Cell:
    """A Cell from ``<setting>/<pair>/<task>/<hp_id>/result.json`` (the path names the job)."""
    path = Path(path)
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise InputError(path, err.lineno, "a JSON result record", err.msg) from err
    for key in ("en_dev", "tgt_test"):
        if not isinstance(rec.get(key), (int, float)):
            raise InputError(path, None, f"a number in '{key}'", repr(rec.get(key)))
    hp_dir = path.parent
    return Cell(hp_dir.parent.parent.parent.name, hp_dir.parent.parent.name, hp_dir.parent.name, hp_dir.name,
                float(rec["en_dev"]), float(rec["tgt_test"]))


def collect_results(paths) -> list[Cell]:
    """Cells of the given result.json paths, or of every result.json under a finetune directory."""
    if isinstance(paths, (str, Path)):
        paths = sorted(Path(paths).glob("*/*/*/*/result.json"))
    return [read_result(Path(p)) for p in paths]
