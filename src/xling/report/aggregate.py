"""Table 1 numbers from grid cells: per (setting, pair, task) the mean target score of the best
``top_k`` cells by English dev (paper: "average of best two set of hyperparameters"), and the Delta
column (average over the target languages minus the baseline's)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from xling.report.collect import Cell


def top_k_mean(cells: Sequence[tuple[float, float]], k: int) -> float | None:
    """Mean of the second element over the ``k`` cells with the highest first element (ties: input order).

    None when there are no cells; fewer than k cells are averaged as they are."""
    if k < 1:
        raise ValueError("top_k must be >= 1")
    if not cells:
        return None
    ranked = sorted(range(len(cells)), key=lambda i: -cells[i][0])[:k]
    return sum(cells[i][1] for i in ranked) / len(ranked)


@dataclass(frozen=True)
class Aggregate:
    value: float
    n_cells: int
    used: tuple[str, ...]  # hp_ids of the selected cells


def aggregate(cells: Iterable[Cell], top_k: int) -> dict[tuple[str, str, str], Aggregate]:
    groups: dict[tuple[str, str, str], list[Cell]] = defaultdict(list)
    for c in cells:
        groups[(c.setting, c.pair, c.task)].append(c)
    out = {}
    for key, group in groups.items():
        group = sorted(group, key=lambda c: c.hp_id)  # deterministic tie order
        value = top_k_mean([(c.en_dev, c.tgt_test) for c in group], top_k)
        used = sorted(group, key=lambda c: -c.en_dev)[:top_k]
        out[key] = Aggregate(value, len(group), tuple(c.hp_id for c in used))
    return out


def target_language(pair: str, source: str = "en") -> str:
    a, b = pair.split("-")
    return b if a == source else a


@dataclass
class Table1:
    settings: list[str]
    labels: dict[str, str]
    tasks: list[str]
    targets: list[str]  # target language per pair, in pair order
    values: dict[tuple[str, str, str], float | None]  # (setting, task, target) -> score
    deltas: dict[tuple[str, str], float | None]  # (setting, task) -> Delta
    n_cells: dict[tuple[str, str, str], int]
    # (task, target) -> why the column was not run (e.g. a licensed corpus is missing); its Delta
    # averages the other targets
    unavailable: dict[tuple[str, str], str] = field(default_factory=dict)

    def delta_targets(self, task: str) -> list[str]:
        return [lang for lang in self.targets if (task, lang) not in self.unavailable]


def _mean(xs: list[float | None]) -> float | None:
    return None if not xs or any(x is None for x in xs) else sum(xs) / len(xs)


def build_table1(
    agg: dict[tuple[str, str, str], Aggregate],
    settings: Sequence[str],
    labels: dict[str, str],
    pairs: Sequence[str],
    tasks: Sequence[str],
    baseline: str = "default",
    source: str = "en",
    unavailable: dict[tuple[str, str], str] | None = None,
) -> Table1:
    """Rows in ``settings`` order; a cell without results stays None (shown as missing).
    ``unavailable``: (task, target) columns that were not run, and why; Delta leaves them out."""
    targets = [target_language(p, source) for p in pairs]
    unavailable = dict(unavailable or {})
    values, counts = {}, {}
    for s in settings:
        for t in tasks:
            for p, lang in zip(pairs, targets):
                a = agg.get((s, p, t))
                values[(s, t, lang)] = a.value if a else None
                counts[(s, t, lang)] = a.n_cells if a else 0
    deltas = {}
    for t in tasks:
        langs = [lang for lang in targets if (t, lang) not in unavailable]
        base = _mean([values[(baseline, t, lang)] for lang in langs]) if baseline in settings else None
        for s in settings:
            avg = _mean([values[(s, t, lang)] for lang in langs])
            deltas[(s, t)] = None if avg is None or base is None else avg - base
    return Table1(list(settings), dict(labels), list(tasks), targets, values, deltas, counts, unavailable)
