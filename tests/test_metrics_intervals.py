"""Intervals over seeds against their textbook definitions and against simulation."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from xling.metrics.intervals import contrast_interval, t_interval, wilson_interval


def test_t_interval_by_hand():
    # mean 2, sd 1, n 3: half-width t(0.975, 2) * 1 / sqrt(3) = 4.302653 / 1.732051
    iv = t_interval([1.0, 2.0, 3.0])
    assert iv.estimate == pytest.approx(2.0)
    assert iv.half_width == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    assert iv.n == 3 and iv.excludes(5.0) and iv.excludes(-1.0) and not iv.excludes(0.0)


def test_one_value_has_no_interval():
    iv = t_interval([5.0])
    assert iv.estimate == 5.0 and iv.low is None and iv.half_width is None and not iv.excludes(0)
    assert contrast_interval([[1.0], [2.0, 3.0]], [1, -1]).low is None


def test_welch_by_hand():
    a, b = [10.0, 12.0, 14.0], [1.0, 2.0, 3.0, 4.0, 5.0]
    va, vb = 4.0, 2.5
    se2 = va / 3 + vb / 5
    df = se2 ** 2 / ((va / 3) ** 2 / 2 + (vb / 5) ** 2 / 4)
    from scipy import stats
    iv = contrast_interval([a, b], [1, -1])
    assert iv.estimate == pytest.approx(9.0)
    assert iv.half_width == pytest.approx(stats.t.ppf(0.975, df) * math.sqrt(se2))


def test_a_weighted_contrast_is_the_weighted_difference():
    # No anchors minus the midpoint of Default and Sep: 5 - (6 + 1) / 2 = 1.5
    iv = contrast_interval([[5.0, 5.2, 4.8], [6.0, 6.1, 5.9], [1.0, 0.5, 1.5]], [1, -0.5, -0.5])
    assert iv.estimate == pytest.approx(1.5) and iv.low < 1.5 < iv.high


def test_t_interval_covers_the_mean_about_95_percent_of_the_time():
    rng = random.Random(0)
    hits = sum(t_interval([rng.gauss(3.0, 2.0) for _ in range(3)]).excludes(3.0) is False for _ in range(4000))
    assert 0.935 < hits / 4000 < 0.965


def test_welch_covers_the_difference_about_95_percent_of_the_time():
    rng = random.Random(1)
    n, hits = 3000, 0
    for _ in range(n):
        a = [rng.gauss(1.0, 1.0) for _ in range(3)]
        b = [rng.gauss(0.0, 3.0) for _ in range(4)]
        iv = contrast_interval([a, b], [1, -1])
        hits += iv.low <= 1.0 <= iv.high
    assert 0.93 < hits / n < 0.975


def test_wilson_by_hand():
    # 50 of 100 at 95%: centre 0.5, half-width z sqrt(0.25/100 + z^2/40000) / (1 + z^2/100)
    z = 1.959964
    half = z * math.sqrt(0.0025 + z * z / 40000) / (1 + z * z / 100)
    iv = wilson_interval(50, 100)
    assert iv.estimate == pytest.approx(50.0)
    assert iv.low == pytest.approx(100 * (0.5 - half), rel=1e-5)
    assert iv.high == pytest.approx(100 * (0.5 + half), rel=1e-5)
    assert wilson_interval(0, 1000).low == pytest.approx(0.0, abs=1e-9) and wilson_interval(0, 1000).high > 0


def test_newcombe_from_its_wilson_parts_and_coverage():
    from xling.metrics.intervals import newcombe_interval

    a, b = wilson_interval(56, 70), wilson_interval(48, 80)
    iv = newcombe_interval(56, 70, 48, 80)
    assert iv.estimate == pytest.approx(80.0 - 60.0)
    assert iv.low == pytest.approx(20.0 - math.hypot(80.0 - a.low, b.high - 60.0))
    assert iv.high == pytest.approx(20.0 + math.hypot(a.high - 80.0, 60.0 - b.low))
    assert 0 < iv.low < 20 < iv.high  # Newcombe (1998), Table II: 0.0524 to 0.3339
    assert iv.low == pytest.approx(5.24, abs=0.05) and iv.high == pytest.approx(33.39, abs=0.05)
    rng = random.Random(2)
    hits = 0
    for _ in range(3000):
        s1 = sum(rng.random() < 0.3 for _ in range(50))
        s2 = sum(rng.random() < 0.2 for _ in range(60))
        c = newcombe_interval(s1, 50, s2, 60)
        hits += c.low <= 10.0 <= c.high
    assert 0.93 < hits / 3000 < 0.98


def test_paired_newcombe_from_its_parts_and_coverage():
    """Newcombe's method 10 for paired proportions: phi = 0 gives the unpaired interval on the same
    margins; correlated outcomes narrow it; over simulated paired outcomes it covers the true
    difference about 95% of the time."""
    from xling.metrics.intervals import newcombe_interval, paired_newcombe_interval

    # ad - bc = 0: no correlation, the same bounds as two independent proportions of n each
    iv = paired_newcombe_interval(20, 20, 10, 10)
    un = newcombe_interval(40, 60, 30, 60)
    assert (iv.estimate, iv.n) == (pytest.approx(un.estimate), 60)
    assert iv.low == pytest.approx(un.low) and iv.high == pytest.approx(un.high)
    # Altman et al. (2000), Table 6.2: 14 both, 5 first only, 0 second only, 22 neither; phi by hand
    iv = paired_newcombe_interval(14, 5, 0, 22)
    n, (p1, l1, u1), (p2, l2, u2) = 41, wilson_parts(19, 41), wilson_parts(14, 41)
    phi = (14 * 22 - 0 - n / 2) / math.sqrt(19 * 22 * 14 * 27)
    assert iv.estimate == pytest.approx(100 * 5 / 41)
    delta = math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    epsilon = math.sqrt((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2)
    assert iv.low == pytest.approx(p1 - p2 - delta) and iv.high == pytest.approx(p1 - p2 + epsilon)
    assert iv.high - iv.low < newcombe_interval(19, 41, 14, 41).high - newcombe_interval(19, 41, 14, 41).low
    rng = random.Random(3)
    hits = 0
    for _ in range(2000):
        cells = [0, 0, 0, 0]  # a shared item difficulty makes the two outcomes correlated: P(first) .6, P(second) .5
        for _ in range(200):
            easy = rng.random() < 0.5
            first, second = rng.random() < (0.9 if easy else 0.3), rng.random() < (0.8 if easy else 0.2)
            cells[{(True, True): 0, (True, False): 1, (False, True): 2, (False, False): 3}[(first, second)]] += 1
        c = paired_newcombe_interval(*cells)
        hits += c.low <= 10.0 <= c.high
    assert 0.93 < hits / 2000 < 0.975
    with pytest.raises(ValueError, match="at least one item"):
        paired_newcombe_interval(0, 0, 0, 0)


def wilson_parts(successes: int, trials: int) -> tuple[float, float, float]:
    iv = wilson_interval(successes, trials)
    return iv.estimate, iv.low, iv.high


def test_how_many_seeds_a_contrast_needs():
    """contrast_half_width is contrast_interval's half-width for groups of those spreads (checked on
    groups built to have them exactly); seeds_for_half_width the fewest seeds that reach a target."""
    from xling.metrics.intervals import contrast_half_width, contrast_interval, seeds_for_half_width

    def group(sd: float, n: int) -> list[float]:  # n values of sample standard deviation sd
        base = [(-1.0) ** i for i in range(n)] if n % 2 == 0 else [(-1.0) ** i for i in range(n - 1)] + [0.0]
        s = statistics.stdev(base)
        return [sd * b / s for b in base]

    sds, weights = (30.0, 5.0, 8.0), (1.0, -0.5, -0.5)  # claim 3: No anchors minus the midpoint
    for n in (3, 5, 15):
        iv = contrast_interval([group(s, n) for s in sds], weights)
        assert contrast_half_width(sds, weights, n) == pytest.approx(iv.half_width)
    n = seeds_for_half_width(sds, weights, 10.0, least=5)
    assert contrast_half_width(sds, weights, n) <= 10.0 < contrast_half_width(sds, weights, n - 1)
    assert seeds_for_half_width((1.0, 1.0, 1.0), weights, 10.0, least=5) == 5  # at least the floor
    assert seeds_for_half_width(sds, weights, 0.1, most=50) is None
