"""scripts/seeds_needed.py: a pilot's result files -> each row's per-seed score (its grid cell best on
English dev), their spread, and the seeds a contrast needs, against the definitions computed here."""

import json
import statistics
from pathlib import Path

import pytest

from support import repo_module
from xling.metrics.intervals import contrast_half_width

seeds_needed = repo_module.load("scripts/seeds_needed.py")

# row -> per pretraining seed: (English dev, target test) of two grid cells; the first cell is best on
# English dev except for no_anchors' seed 2, where the second is
PILOT = {
    "default": {1: [(80, 50), (70, 99)], 2: [(81, 54), (60, 0)], 3: [(79, 49), (60, 0)]},
    "no_anchors": {1: [(80, 52), (60, 0)], 2: [(70, 99), (75, 20)], 3: [(80, 45), (60, 0)]},
    "sep_l1_6": {1: [(80, 30), (60, 0)], 2: [(80, 28), (60, 0)], 3: [(80, 35), (60, 0)]},
}


def _write(root: Path, pilot: dict, pair: str = "en-fr") -> None:
    for row, by_seed in pilot.items():
        for seed, cells in by_seed.items():
            for i, (dev, test) in enumerate(cells):
                path = root / row / pair / f"seed{seed}" / "parsing" / f"bs32_lr{i}" / "seed1" / "result.json"
                path.parent.mkdir(parents=True)
                path.write_text(json.dumps({"en_dev": dev, "tgt_test": test}), encoding="utf-8")


def test_seeds_from_a_pilot(tmp_path):
    _write(tmp_path, PILOT)
    rows, weights = ["no_anchors", "default", "sep_l1_6"], [1.0, -0.5, -0.5]
    out = seeds_needed.seeds_needed(tmp_path, "en-fr", "parsing", rows, weights, 10.0, 5)
    scores = {"no_anchors": [52, 20, 45], "default": [50, 54, 49], "sep_l1_6": [30, 28, 35]}
    assert {r: out["rows"][r]["scores"] for r in rows} == scores
    sds = [statistics.stdev(scores[r]) for r in rows]
    assert [out["rows"][r]["sd"] for r in rows] == pytest.approx(sds)
    means = {r: statistics.mean(xs) for r, xs in scores.items()}
    assert out["pilot_contrast"]["estimate"] == pytest.approx(
        means["no_anchors"] - (means["default"] + means["sep_l1_6"]) / 2)
    n = out["seeds"]
    # the fewest at least 5 whose half-width is within 10 at these spreads
    assert n >= 5 and contrast_half_width(sds, weights, n) <= 10
    assert n == 5 or contrast_half_width(sds, weights, n - 1) > 10
    assert n > 5  # No anchors' spread (~17) asks for more than the least
    # spreads of a point or two: the least number of seeds, not fewer
    calm = {r: {seed: [(80, 40 + seed + 10 * i)] for seed in (1, 2, 3)} for i, r in enumerate(rows)}
    _write(tmp_path / "calm", calm)
    assert seeds_needed.seeds_needed(tmp_path / "calm", "en-fr", "parsing", rows, weights, 10.0, 5)["seeds"] == 5
    # a row with one seed has no spread to read
    with pytest.raises(SystemExit, match="sep_l1_6 has one pretraining seed"):
        _write(tmp_path / "one", {"sep_l1_6": {1: [(80, 30)]}, "default": PILOT["default"],
                                  "no_anchors": PILOT["no_anchors"]})
        seeds_needed.seeds_needed(tmp_path / "one", "en-fr", "parsing", rows, weights, 10.0, 5)
