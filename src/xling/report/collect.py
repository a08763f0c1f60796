"""Reading the fine-tuning jobs' result.json files
(R/finetune/<setting>/<pair>/seed<p>/<task>/<hp_id>/seed<f>/result.json): the English dev score
that selects a cell and the test score a table reports (``tgt_test``, Table 1's; or an extra test
set's, ``tgt_extra.<name>``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from xling.errors import InputError


@dataclass(frozen=True)
class Cell:
    """One grid cell's outcome on one replicate (pretraining seed, fine-tuning seed): selection
    score (English dev) and the test score the table reports (``read_result``'s ``score``)."""

    setting: str
    pair: str
    task: str
    hp_id: str
    en_dev: float
    score: float
    pretrain_seed: int = 1
    finetune_seed: int = 1


_SEED = re.compile(r"seed(\d+)")


def _seed(path: Path, part: Path) -> int:
    m = _SEED.fullmatch(part.name)
    if not m:
        raise InputError(path, None, "a path <setting>/<pair>/seed<N>/<task>/<hp_id>/seed<N>/result.json",
                         f"{part.name!r} where a seed<N> directory belongs")
    return int(m.group(1))


def score_of(rec: dict, key: str) -> object:
    """The value at ``key`` of a record, a dotted path into nested mappings (``tgt_extra.pud``)."""
    value: object = rec
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def read_result(path: Path, score: str = "tgt_test") -> Cell:
    """A Cell from ``<setting>/<pair>/seed<p>/<task>/<hp_id>/seed<f>/result.json`` (the path names
    the job), its test score the record's ``score`` (a dotted key: ``tgt_extra.pud``)."""
    path = Path(path)
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise InputError(path, err.lineno, "a JSON result record", err.msg) from err
    values = {}
    for key in ("en_dev", score):
        value = score_of(rec, key)
        if not isinstance(value, (int, float)):
            raise InputError(path, None, f"a number in '{key}'", repr(value))
        values[key] = float(value)
    up = path.parents  # seed<f>, hp_id, task, seed<p>, pair, setting
    if len(up) < 7:
        raise InputError(path, None, "a path <setting>/<pair>/seed<N>/<task>/<hp_id>/seed<N>/result.json",
                         "a shorter path")
    return Cell(up[5].name, up[4].name, up[2].name, up[1].name, values["en_dev"], values[score],
                _seed(path, up[3]), _seed(path, up[0]))


def collect_results(paths, score: str = "tgt_test") -> list[Cell]:
    """Cells of the given result.json paths, or of every result.json under a finetune directory,
    each with the record's ``score``."""
    if isinstance(paths, (str, Path)):
        paths = sorted(Path(paths).glob("*/*/seed*/*/*/seed*/result.json"))
    return [read_result(Path(p), score) for p in paths]
