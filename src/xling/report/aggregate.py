"""Table 1 numbers from grid cells: per (setting, pair, task) and replicate (pretraining seed x
fine-tuning seed) the mean target score of the best ``top_k`` cells by English dev (paper: "average
of best two set of hyperparameters"), their mean over the replicates with a 95% interval, and the
Delta column (average over the target languages minus the baseline's)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from xling.metrics.intervals import Interval, contrast_interval, t_interval
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
    value: float  # mean over the replicates
    n_cells: int  # result files behind it (grid cells x seeds)
    replicates: tuple[float, ...]  # one value per replicate unit (see replicate_values)


def replicate_values(by_seeds: dict[tuple[int, int], float]) -> tuple[float, ...]:
    """The independent replicates behind a cell, from its value per (pretraining seed, fine-tuning
    seed): with several pretraining seeds, one value per pretraining seed (the mean over its
    fine-tuning seeds: they share the pretrained model, so they are not independent of each other);
    with one, the fine-tuning seeds'."""
    pseeds = sorted({p for p, _ in by_seeds})
    if len(pseeds) == 1:
        return tuple(by_seeds[k] for k in sorted(by_seeds))
    out = []
    for p in pseeds:
        xs = [v for (q, _), v in sorted(by_seeds.items()) if q == p]
        out.append(sum(xs) / len(xs))
    return tuple(out)


def aggregate(cells: Iterable[Cell], top_k: int) -> dict[tuple[str, str, str], Aggregate]:
    """Per (setting, pair, task): on each replicate (pretraining seed, fine-tuning seed) the mean
    target score of the ``top_k`` cells best on English dev, then those replicates' mean."""
    groups: dict[tuple[str, str, str], dict[tuple[int, int], list[Cell]]] = defaultdict(lambda: defaultdict(list))
    for c in cells:
        groups[(c.setting, c.pair, c.task)][(c.pretrain_seed, c.finetune_seed)].append(c)
    out = {}
    for key, by_seeds in groups.items():
        values = {}
        for seeds, group in by_seeds.items():
            group = sorted(group, key=lambda c: c.hp_id)  # deterministic tie order
            value = top_k_mean([(c.en_dev, c.score) for c in group], top_k)
            assert value is not None  # a group is made by its first cell
            values[seeds] = value
        reps = replicate_values(values)
        out[key] = Aggregate(sum(reps) / len(reps), sum(len(g) for g in by_seeds.values()), reps)
    return out


def target_language(pair: str, source: str = "en") -> str:
    a, b = pair.split("-")
    return b if a == source else a


@dataclass
class Table1:
    settings: list[str]
    labels: dict[str, str]
    tasks: list[str]
    targets: list[str]  # target language per pair (or the column name given), in pair order
    values: dict[tuple[str, str, str], float | None]  # (setting, task, target) -> score
    deltas: dict[tuple[str, str], float | None]  # (setting, task) -> Delta
    n_cells: dict[tuple[str, str, str], int]
    # 95% intervals over the replicates (None where a cell has one replicate or no results)
    value_intervals: dict[tuple[str, str, str], Interval | None] = field(default_factory=dict)
    delta_intervals: dict[tuple[str, str], Interval | None] = field(default_factory=dict)
    # (setting, task) -> per replicate, the score averaged over the Delta's languages
    row_replicates: dict[tuple[str, str], tuple[float, ...] | None] = field(default_factory=dict)
    # (task, target) -> why the column was not run (e.g. a licensed corpus is missing); its Delta
    # averages the other targets
    unavailable: dict[tuple[str, str], str] = field(default_factory=dict)

    def delta_targets(self, task: str) -> list[str]:
        return [lang for lang in self.targets if (task, lang) not in self.unavailable]


def _mean(xs: Sequence[float | None]) -> float | None:
    present = [x for x in xs if x is not None]
    return None if not xs or len(present) != len(xs) else sum(present) / len(present)


def _row_replicates(agg: dict, setting: str, pairs: Sequence[str], task: str) -> tuple[float, ...] | None:
    """Per replicate, the mean over ``pairs`` (replicate i of every pair averaged together); None
    when a pair has no results or the pairs have different numbers of replicates."""
    if not pairs or any((setting, p, task) not in agg for p in pairs):
        return None
    reps = [agg[(setting, p, task)].replicates for p in pairs]
    if len({len(r) for r in reps}) != 1:
        return None
    return tuple(sum(col) / len(col) for col in zip(*reps))


def build_table1(
    agg: dict[tuple[str, str, str], Aggregate],
    settings: Sequence[str],
    labels: dict[str, str],
    pairs: Sequence[str],
    tasks: Sequence[str],
    baseline: str = "default",
    source: str = "en",
    unavailable: dict[tuple[str, str], str] | None = None,
    columns: Sequence[str] | None = None,
) -> Table1:
    """Rows in ``settings`` order; a cell without results stays None (shown as missing).
    ``unavailable``: (task, target) columns that were not run, and why; Delta leaves them out.
    ``columns``: each pair's column name (None: its target language; the source language's test
    set scored by every pair's model needs one per pair).
    Intervals: a cell's t interval over its replicates; Delta's, Welch's interval of the row's
    replicates (each averaged over the languages) against the baseline's."""
    targets = list(columns) if columns is not None else [target_language(p, source) for p in pairs]
    if len(targets) != len(pairs) or len(set(targets)) != len(targets):
        raise ValueError(f"one distinct column per pair: pairs {list(pairs)}, columns {targets}")
    unavailable = dict(unavailable or {})
    values, counts, intervals = {}, {}, {}
    for s in settings:
        for t in tasks:
            for p, lang in zip(pairs, targets):
                a = agg.get((s, p, t))
                values[(s, t, lang)] = a.value if a else None
                counts[(s, t, lang)] = a.n_cells if a else 0
                intervals[(s, t, lang)] = t_interval(a.replicates) if a else None
    deltas, delta_iv, rows = {}, {}, {}
    for t in tasks:
        langs = [lang for lang in targets if (t, lang) not in unavailable]
        used = [p for p, lang in zip(pairs, targets) if lang in langs]
        base = _mean([values[(baseline, t, lang)] for lang in langs]) if baseline in settings else None
        for s in settings:
            rows[(s, t)] = _row_replicates(agg, s, used, t)
        for s in settings:
            avg = _mean([values[(s, t, lang)] for lang in langs])
            deltas[(s, t)] = None if avg is None or base is None else avg - base
            mine, theirs = rows[(s, t)], rows.get((baseline, t))
            delta_iv[(s, t)] = (contrast_interval([mine, theirs], [1, -1])
                                if s != baseline and mine and theirs else None)
    return Table1(list(settings), dict(labels), list(tasks), targets, values, deltas, counts, unavailable=unavailable,
                  value_intervals=intervals, delta_intervals=delta_iv, row_replicates=rows)
