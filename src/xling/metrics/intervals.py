"""95% intervals over seeds: Student's t for one mean, Welch-Satterthwaite for a contrast of the
means of independent groups (a difference of two rows, or a weighted combination of several).

Seeds are few (3 is typical), so a bootstrap would only ever see a handful of distinct resamples
and give intervals that are too narrow; the t intervals are wide at n = 3, which is the honest
answer. A group of one value has no interval (None bounds)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

LEVEL = 0.95


def _ppf(dist: str, q: float, *args: float) -> float:
    """The ``q`` quantile of scipy.stats' ``dist``. scipy.stats takes about a second to import, and
    every dry run imports this module (the planner checks bundles through xling.report) without
    computing an interval: it is imported when the first interval is."""
    from scipy import stats

    return float(getattr(stats, dist).ppf(q, *args))


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float | None  # None: too few values for an interval
    high: float | None
    n: int  # values behind the estimate (the smallest group's, for a contrast)

    @property
    def bounds(self) -> tuple[float, float] | None:
        """(low, high); None without an interval (both bounds are None together)."""
        return None if self.low is None or self.high is None else (self.low, self.high)

    @property
    def half_width(self) -> float | None:
        return None if self.bounds is None else (self.bounds[1] - self.bounds[0]) / 2

    def excludes(self, value: float = 0.0) -> bool:
        """Whether the whole interval lies on one side of ``value`` (never, without an interval)."""
        return self.bounds is not None and (self.bounds[0] > value or self.bounds[1] < value)


def _mean_var(xs: Sequence[float]) -> tuple[float, float, int]:
    xs = [float(x) for x in xs]
    if not xs:
        raise ValueError("an interval needs at least one value")
    n = len(xs)
    m = sum(xs) / n
    var = sum((x - m) ** 2 for x in xs) / (n - 1) if n > 1 else math.nan
    return m, var, n


def t_interval(xs: Sequence[float], level: float = LEVEL) -> Interval:
    """Mean of ``xs`` with its two-sided Student-t interval (n - 1 degrees of freedom): the
    contrast of one group, whose Welch-Satterthwaite degrees of freedom are n - 1."""
    return contrast_interval([xs], [1.0], level)


def contrast_interval(groups: Sequence[Sequence[float]], weights: Sequence[float],
                      level: float = LEVEL) -> Interval:
    """sum_i weights[i] * mean(groups[i]) for independent groups, with a Welch-Satterthwaite
    interval: variance sum_i w_i^2 s_i^2 / n_i, degrees of freedom (sum_i v_i)^2 / sum_i v_i^2 / (n_i - 1).
    No interval when a weighted group has a single value. ``contrast_interval([a, b], [1, -1])`` is
    Welch's interval for mean(a) - mean(b)."""
    if len(groups) != len(weights) or not groups:
        raise ValueError("one weight per group, at least one group")
    parts = [(w, *_mean_var(g)) for g, w in zip(groups, weights)]
    est = sum(w * m for w, m, _, _ in parts)
    used = [(w, var, n) for w, _, var, n in parts if w != 0]
    n_min = min(n for _, _, n in used) if used else 0
    if not used or n_min < 2:
        return Interval(est, None, None, n_min)
    v = [w * w * var / n for w, var, n in used]
    total = sum(v)
    if total == 0:
        return Interval(est, est, est, n_min)
    df = total ** 2 / sum(vi * vi / (n - 1) for vi, (_, _, n) in zip(v, used))
    half = _ppf("t", 0.5 + level / 2, df) * math.sqrt(total)
    return Interval(est, est - half, est + half, n_min)


def _wilson(successes: int, trials: int, level: float) -> tuple[float, float, float]:
    """The proportion and its Wilson score bounds, in %."""
    if trials < 1:
        raise ValueError("a proportion needs at least one trial")
    z = _ppf("norm", 0.5 + level / 2)
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return 100 * p, 100 * (centre - half), 100 * (centre + half)


def wilson_interval(successes: int, trials: int, level: float = LEVEL) -> Interval:
    """A proportion (in %) with Wilson's score interval: for accuracies over a test set, where the
    test sentences, not seeds, are the sample."""
    return Interval(*_wilson(successes, trials, level), trials)


def newcombe_interval(s1: int, n1: int, s2: int, n2: int, level: float = LEVEL) -> Interval:
    """p1 - p2 (in points) of two independent proportions with Newcombe's (1998, method 10) hybrid
    score interval, built from each proportion's Wilson interval. On proportions measured on the
    same items it is conservative (it ignores their positive correlation)."""
    (p1, low1, high1), (p2, low2, high2) = _wilson(s1, n1, level), _wilson(s2, n2, level)
    d = p1 - p2
    low = d - math.sqrt((p1 - low1) ** 2 + (high2 - p2) ** 2)
    high = d + math.sqrt((high1 - p1) ** 2 + (p2 - low2) ** 2)
    return Interval(d, low, high, min(n1, n2))


def paired_newcombe_interval(both: int, first_only: int, second_only: int, neither: int,
                             level: float = LEVEL) -> Interval:
    """p1 - p2 (in points) of two proportions measured on the same items (a 2x2 table of their
    outcomes: right under both, under the first only, under the second only, under neither), with
    Newcombe's (1998b, method 10) interval for paired data: the Wilson intervals of p1 and p2
    combined with the continuity-corrected phi between the two outcomes, as Altman et al. (2000,
    "Statistics with confidence", 6.2) give it. Narrower than :func:`newcombe_interval` when the
    outcomes are positively correlated; equal to it when phi is 0."""
    counts = (both, first_only, second_only, neither)
    if any(c < 0 for c in counts) or sum(counts) < 1:
        raise ValueError(f"a paired table needs counts >= 0 and at least one item, got {counts}")
    n = sum(counts)
    (p1, low1, high1), (p2, low2, high2) = _wilson(both + first_only, n, level), _wilson(both + second_only, n, level)
    margins = (both + first_only) * (second_only + neither) * (both + second_only) * (first_only + neither)
    cross = both * neither - first_only * second_only
    corrected = cross - n / 2 if cross > n / 2 else min(cross, 0)  # no correction below zero
    phi = corrected / math.sqrt(margins) if margins else 0.0
    d = p1 - p2
    low = d - math.sqrt(max((p1 - low1) ** 2 - 2 * phi * (p1 - low1) * (high2 - p2) + (high2 - p2) ** 2, 0.0))
    high = d + math.sqrt(max((p2 - low2) ** 2 - 2 * phi * (p2 - low2) * (high1 - p1) + (high1 - p1) ** 2, 0.0))
    return Interval(d, low, high, n)


def contrast_half_width(sds: Sequence[float], weights: Sequence[float], n: int, level: float = LEVEL) -> float:
    """The half-width :func:`contrast_interval` would give the contrast ``sum_i weights[i] *
    mean(group_i)`` with ``n`` values in each group, were each group's standard deviation
    ``sds[i]``: Welch's variance and Satterthwaite's degrees of freedom at those spreads."""
    if len(sds) != len(weights) or n < 2:
        raise ValueError("one standard deviation per weight, and at least two values a group")
    v = [w * w * s * s / n for s, w in zip(sds, weights) if w != 0]
    total = sum(v)
    if total == 0:
        return 0.0
    df = total ** 2 / sum(vi * vi / (n - 1) for vi in v)
    return _ppf("t", 0.5 + level / 2, df) * math.sqrt(total)


def seeds_for_half_width(sds: Sequence[float], weights: Sequence[float], target: float, least: int = 2,
                         most: int = 200, level: float = LEVEL) -> int | None:
    """The fewest values a group (at least ``least``) for which the contrast's interval is at most
    ``±target`` if the groups' spreads are ``sds`` (a pilot's: how many seeds a row needs); None when
    even ``most`` do not narrow it that far."""
    for n in range(max(2, least), most + 1):
        if contrast_half_width(sds, weights, n, level) <= target:
            return n
    return None
