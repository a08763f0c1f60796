"""Run a regime probe (config/probes/*.yaml) and tabulate what it is chosen on: English only.

Each point is the probe's ``configfiles`` plus one overlay (``common`` merged with the point's
settings, run name ``probe_<point>``), built with Snakemake up to ``target``. What the table reads:
fairseq's English validation perplexity at every validation of the pretraining log
(``valid_en_ppl``) and the English dev score of every fine-tuning result (``en_dev``). The same
jobs also score the target language; the probe never opens those numbers, so a setting cannot be
chosen on transfer. Over several pretraining seeds (``common: seeds``) it gives each number's
mean and the spread over the seeds of the mean English dev score.

    python scripts/probe_regime.py config/probes/regime_xlm.yaml [POINT ...] [--jobs 2]

Points run ``--jobs`` at a time, each Snakemake on one core (--nolock: their outputs are disjoint,
each point with its own run directory and testbed). Writes
results/probe_regime/<probe>/table.md and table.json; a rerun only runs what is missing.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from xling.config import merge  # noqa: E402
from xling.io import atomic_write  # noqa: E402

VALID = re.compile(r'"valid_(?P<lang>[a-z_]+)_ppl": "(?P<ppl>[0-9.]+)".*"valid_(?P=lang)_num_updates": "(?P<upd>\d+)"')


def english_ppl(train_log: Path, lang: str = "en") -> dict[int, float]:
    """Update -> English validation perplexity, from a pretraining job's train.log."""
    out = {}
    for line in train_log.read_text(encoding="utf-8").splitlines():
        m = VALID.search(line)
        if m and m["lang"] == lang:
            out[int(m["upd"])] = float(m["ppl"])
    return out


def cpu_minutes(benchmarks: list[Path]) -> float | None:
    """CPU minutes of jobs from their Snakemake benchmark files (``cpu_time``, seconds): a job's cost
    whatever else ran beside it, where its wall time doubles when two jobs share a core."""
    if not benchmarks:
        return None
    total = 0.0
    for path in benchmarks:
        head, row = path.read_text(encoding="utf-8").splitlines()[:2]
        total += float(dict(zip(head.split("\t"), row.split("\t")))["cpu_time"])
    return total / 60


def english_dev(finetune_root: Path) -> dict[str, float]:
    """Task -> English dev score of each result.json under ``finetune_root`` (one cell and seed
    per task in a probe); only the ``en_dev`` key is read."""
    out = {}
    for path in sorted(finetune_root.glob("*/*/seed*/result.json")):
        task = path.parents[2].name
        out[task] = float(json.loads(path.read_text(encoding="utf-8"))["en_dev"])
    return out


def overlay(probe: dict, point: str) -> dict:
    """The point's config overlay: its own run name and testbed mirror (or the probe's ``mirror``,
    one for every point, for real data), ``common``, its settings."""
    run = f"results/probe_{point}"
    own: dict = {"run_name": f"probe_{point}", "download": {"mirror": f"{run}/testbed/mirror"},
                 "licensed": {"conll2003_en": {"path": f"{run}/testbed/mirror/licensed/conll2003"},
                              "levow_zh": {"path": f"{run}/testbed/mirror/licensed/levow"}}}
    if probe.get("mirror"):
        own = {"run_name": f"probe_{point}", "download": {"mirror": probe["mirror"]}}
    return merge(merge(own, probe.get("common") or {}), probe["points"][point] or {})


def run_point(probe: dict, point: str, work: Path, log_dir: Path) -> int:
    path = work / f"{point}.yaml"
    path.write_text(yaml.safe_dump(overlay(probe, point), sort_keys=False), encoding="utf-8")
    cmd = [sys.executable, "-m", "snakemake", "--profile", "profiles/local", "--cores", "1", "--nolock",
           "--configfile", *probe["configfiles"], str(path), "--", probe["target"]]
    with open(log_dir / f"{point}.log", "w", encoding="utf-8") as log:
        return subprocess.run(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT).returncode


def collect(probe: dict, point: str, pair: str = "en-fr", results: Path = REPO / "results",
            benchmarks: Path = REPO / "benchmarks") -> dict:
    """The point's English numbers per pretraining seed, and over its seeds: the mean perplexity at
    each validation, each task's mean English dev score, and the mean over the three tasks (its
    mean over the seeds and their standard deviation: one seed's spread)."""
    run = results / f"probe_{point}"
    setting = probe["target"].removeprefix("table1_row_")
    seeds = {}
    for log in sorted((run / "pretrain" / setting / pair).glob("seed*/train.log")):
        seed = int(log.parent.name.removeprefix("seed"))
        bench = benchmarks / f"probe_{point}"
        pretrain = bench / "pretrain" / setting / pair / f"seed{seed}.tsv"
        seeds[seed] = {"valid_en_ppl": english_ppl(log),
                       "en_dev": english_dev(run / "finetune" / setting / pair / f"seed{seed}"),
                       "pretrain_cpu_min": cpu_minutes([pretrain] if pretrain.is_file() else []),
                       "finetune_cpu_min": cpu_minutes(sorted((bench / "finetune" / setting / pair / f"seed{seed}")
                                                              .glob("*/*/*.tsv")))}
    updates = sorted(set.intersection(*(set(s["valid_en_ppl"]) for s in seeds.values()))) if seeds else []
    tasks = sorted(set.intersection(*(set(s["en_dev"]) for s in seeds.values()))) if seeds else []
    per_seed = [statistics.mean(s["en_dev"][t] for t in tasks) for s in seeds.values()] if tasks else []
    return {"point": point, "overlay": probe["points"][point] or {}, "seeds": seeds,
            "valid_en_ppl": {u: statistics.mean(s["valid_en_ppl"][u] for s in seeds.values()) for u in updates},
            "en_dev": {t: statistics.mean(s["en_dev"][t] for s in seeds.values()) for t in tasks},
            "mean_en_dev": statistics.mean(per_seed) if per_seed else None,
            "mean_en_dev_sd": statistics.stdev(per_seed) if len(per_seed) > 1 else None,
            "cpu_min_per_model": _mean_cost(seeds)}


def _mean_cost(seeds: dict) -> float | None:
    """Mean CPU minutes of one model: its pretraining and its fine-tuning jobs."""
    costs = [s["pretrain_cpu_min"] + (s["finetune_cpu_min"] or 0.0) for s in seeds.values()
             if s["pretrain_cpu_min"] is not None]
    return statistics.mean(costs) if costs else None


def markdown(rows: list[dict]) -> str:
    updates = sorted({u for r in rows for u in r["valid_en_ppl"]})
    if len(updates) > 8:  # the curve every 1,000 updates (table.json has every validation)
        updates = [u for u in updates if u % 1000 == 0]
    tasks = sorted({t for r in rows for t in r["en_dev"]})
    head = ["point", "seeds", *(f"ppl @{u}" for u in updates), *(f"{t} en dev" for t in tasks),
            "mean en dev (sd over seeds)", "CPU min a model"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        mean = r["mean_en_dev"]
        sd = f" ({r['mean_en_dev_sd']:.2f})" if r["mean_en_dev_sd"] is not None else ""
        cells = [r["point"], str(len(r["seeds"])),
                 *(f"{r['valid_en_ppl'][u]:.2f}" if u in r["valid_en_ppl"] else "–" for u in updates),
                 *("–" if t not in r["en_dev"] else f"{r['en_dev'][t]:.1f}" for t in tasks),
                 "–" if mean is None else f"{mean:.2f}{sd}",
                 "–" if r.get("cpu_min_per_model") is None else f"{r['cpu_min_per_model']:.1f}"]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("probe", type=Path)
    ap.add_argument("points", nargs="*", help="default: every point of the probe")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--collect-only", action="store_true", help="tabulate finished points, run nothing")
    args = ap.parse_args(argv)
    probe = yaml.safe_load(args.probe.read_text(encoding="utf-8"))
    points = args.points or list(probe["points"])
    unknown = [p for p in points if p not in probe["points"]]
    if unknown:
        ap.error(f"{', '.join(unknown)}: not a point of {args.probe} ({', '.join(probe['points'])})")
    work = REPO / "results" / "probe_regime" / args.probe.stem
    work.mkdir(parents=True, exist_ok=True)
    failed = []
    if not args.collect_only:
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            rc = dict(zip(points, pool.map(lambda p: run_point(probe, p, work, work), points)))
        failed = [p for p, code in rc.items() if code]
    rows = [collect(probe, p) for p in points]
    with atomic_write(work / "table.json") as fh:
        json.dump(rows, fh, indent=2)
    with atomic_write(work / "table.md") as fh:
        fh.write(markdown(rows))
    print(markdown(rows))
    if failed:
        print(f"failed: {', '.join(failed)} (logs in {work})", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
