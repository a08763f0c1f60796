"""How many pretraining seeds a contrast of Table 1 rows needs, from a pilot's finished results.

Reads the pilot's result.json files as Table 1 does (each model's score: the mean target score of its
``top_k`` grid cells best on English dev, over its fine-tuning seeds), takes each row's standard
deviation over its pretraining seeds, and gives the fewest seeds a row (at least ``--least``) for
which the contrast ``sum weight x row mean`` would have a 95% Welch interval of at most
``±--half-width`` if those spreads hold (xling.metrics.intervals.seeds_for_half_width). Claim 3 of
the real study (config/real.yaml's pilot rule):

    python scripts/seeds_needed.py results/real/finetune --pair en-fr --task parsing \\
        --rows no_anchors default sep_l1_6 --weights 1 -0.5 -0.5 --half-width 10 --least 5

Prints one JSON object: each row's per-seed scores and spread, the pilot's own interval of the
contrast, and the number of seeds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from xling.metrics.intervals import contrast_interval, seeds_for_half_width  # noqa: E402
from xling.report.aggregate import aggregate  # noqa: E402
from xling.report.collect import collect_results  # noqa: E402


def seeds_needed(finetune: Path, pair: str, task: str, rows: list[str], weights: list[float], half_width: float,
                 least: int, top_k: int = 1) -> dict:
    agg = aggregate(collect_results(finetune), top_k)
    missing = [r for r in rows if (r, pair, task) not in agg]
    if missing:
        raise SystemExit(f"{finetune}: no {task} results on {pair} for {', '.join(missing)}")
    reps = {r: list(agg[(r, pair, task)].replicates) for r in rows}
    short = [r for r, xs in reps.items() if len(xs) < 2]
    if short:
        raise SystemExit(f"{finetune}: {', '.join(short)} has one pretraining seed on {pair}: no spread to read")
    sds = [statistics.stdev(reps[r]) for r in rows]
    pilot = contrast_interval([reps[r] for r in rows], weights)
    n = seeds_for_half_width(sds, weights, half_width, least=least)
    return {"pair": pair, "task": task, "weights": dict(zip(rows, weights)), "half_width": half_width,
            "rows": {r: {"scores": reps[r], "sd": sd} for r, sd in zip(rows, sds)},
            "pilot_contrast": {"estimate": pilot.estimate, "bounds": pilot.bounds},
            "seeds": n}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("finetune", type=Path, help="the run's finetune directory (results/<run>/finetune)")
    ap.add_argument("--pair", required=True)
    ap.add_argument("--task", required=True)
    ap.add_argument("--rows", nargs="+", required=True)
    ap.add_argument("--weights", nargs="+", type=float, required=True)
    ap.add_argument("--half-width", type=float, required=True)
    ap.add_argument("--least", type=int, default=2)
    ap.add_argument("--top-k", type=int, default=1)
    args = ap.parse_args(argv)
    if len(args.rows) != len(args.weights):
        ap.error("one weight per row")
    out = seeds_needed(args.finetune, args.pair, args.task, args.rows, args.weights, args.half_width, args.least,
                       args.top_k)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
