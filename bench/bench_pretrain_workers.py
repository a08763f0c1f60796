"""Benchmark: a whole pretraining job (the rule's pretrain_job: fairseq-train with the plugin, on
the toy data) with data-loader workers against the same job loading in its main process
(``--num-workers 0``, the reference), in alternating blocks.

    python bench/bench_pretrain_workers.py                          # CPU, 0/1/2 workers, 5 blocks
    python bench/bench_pretrain_workers.py --gpus 1 --workers 0 1 2 4 --json out.json   # one GPU

Per job: ``wall_s`` (start to end of the launcher), ``train_s`` (first to last update, as the
log lines arrive), ``exit_s`` (last update to the end: last validation, checkpoint, fairseq's
exit, done.json), ``longest_gap_s`` (the longest wait between two updates: an epoch start, a
validation or a checkpoint between them) and ``processes`` (the most processes of the job seen
at once). Printed as min/median/max over the blocks, with wall and train time as ratios to the
reference. Persistent data-loader workers, which fairseq asks for and which the task now turns
off, showed here as exit_s and longest_gap_s of 5 s per worker and processes growing by the worker
count every epoch."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.pretrain_job import job_spec, run_watched
from support.toy_data import write_toy_data


def run_job(data: Path, out: Path, workers: int, gpus: int, pretrain: dict, model: dict) -> dict:
    spec = job_spec(out.parent / f"{out.name}.json", data, out, gpus=gpus, num_workers=workers, pretrain=pretrain,
                    model=model)
    t0 = time.monotonic()
    run = run_watched(spec, out)
    if run.job.returncode != 0:
        raise RuntimeError(f"job failed:\n{run.job.communicate()[0]}")
    updates = run.watch.times_of("train_inner")
    done = json.loads((out / "done.json").read_text())
    return {"wall_s": run.ended - t0, "train_s": updates[-1] - updates[0], "exit_s": run.ended - updates[-1],
            "longest_gap_s": max(b - a for a, b in zip(updates, updates[1:])), "processes": run.most,
            "tokens_per_s": done["tokens_per_s"], "updates": done["updates"]}


def summary(values: list[float]) -> dict:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--gpus", type=int, default=0)
    ap.add_argument("--sentences", type=int, default=100, help="toy training sentences per language")
    ap.add_argument("--updates-per-epoch", type=int, default=10)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if 0 not in args.workers:
        ap.error("--workers must include 0, the reference")
    pretrain = {"batch_size_per_gpu": args.batch, "streams_per_epoch_per_gpu": args.batch * args.updates_per_epoch,
                "max_epoch": args.epochs, "save_interval_updates": args.updates_per_epoch}
    model = {"dim": args.dim, "ffn_dim": 4 * args.dim, "layers": args.layers}
    runs: dict[int, list[dict]] = {w: [] for w in args.workers}
    with tempfile.TemporaryDirectory() as tmp:
        data = write_toy_data(Path(tmp) / "data", ["en", "fr"], n_train=args.sentences, seed=3)
        run_job(data, Path(tmp) / "warmup", 0, args.gpus, pretrain, model)  # page cache, .pyc files
        for block in range(args.blocks):
            order = args.workers if block % 2 == 0 else args.workers[::-1]
            for w in order:
                runs[w].append(run_job(data, Path(tmp) / f"b{block}_w{w}", w, args.gpus, pretrain, model))
    ref = {k: statistics.median(r[k] for r in runs[0]) for k in ("wall_s", "train_s")}
    result = {"gpus": args.gpus, "blocks": args.blocks, "pretrain": pretrain, "model": model, "workers": {}}
    for w, rs in runs.items():
        row = {k: summary([r[k] for r in rs]) for k in rs[0]}
        row["wall_ratio_to_0"] = row["wall_s"]["median"] / ref["wall_s"]
        row["train_ratio_to_0"] = row["train_s"]["median"] / ref["train_s"]
        result["workers"][w] = row
        print(f"workers={w}: " + "  ".join(
            f"{k} {row[k]['median']:.2f} [{row[k]['min']:.2f}, {row[k]['max']:.2f}]"
            for k in ("wall_s", "train_s", "exit_s", "longest_gap_s", "processes"))
            + f"  wall x{row['wall_ratio_to_0']:.2f}  train x{row['train_ratio_to_0']:.2f} of 0 workers")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
