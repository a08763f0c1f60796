"""Benchmark: the time the main process of fairseq-train spends preparing one training batch
(``--num-workers 0``: reading, masking and collating through the plugin's datasets) against the
time one GPU update of that batch takes (the tokens/s of the GPU check's pretraining step on an H100,
bench/measured/gpu_check/2026-11-26_h100_9e3340f/pretrain.json),
for the paper's stream batch and the testbed's sentence batch.

    python bench/bench_pretrain_loading.py              # 5 blocks per shape, min/median/max

A ratio near or above 1 means a job without data-loader workers waits for its data (fairseq's
background thread overlaps loading with the step, but shares the GIL with it): the reason
``pretrain.num_workers: null`` gives a GPU process one worker per spare core."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.inprocess import build
from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data
from xling.pretrain.command import fairseq_train_command
from xling.pretrain.job import PretrainJob

MEASURED = Path(__file__).resolve().parent / "measured" / "gpu_check" / "2026-11-26_h100_9e3340f" / "pretrain.json"
# (name, tokens per sample, batch, sample break mode): the paper model's benchmark batch, make demo-full's
SHAPES = [("paper streams", 256, 96, "none"), ("demo-full sentences", 64, 64, "eos")]


def batch_seconds(data: Path, tmp: Path, tokens: int, batch: int, mode: str, batches: int) -> list[float]:
    model = dict(TINY_MODEL, tokens_per_sample=tokens)
    pretrain = dict(TINY_PRETRAIN, batch_size_per_gpu=batch, streams_per_epoch_per_gpu=batch * batches,
                    sample_break_mode=mode)
    job = PretrainJob.build(data, {"separate": {"embeddings": False, "layers": 0}}, model, pretrain, ["en", "fr"], 1)
    cmd = fairseq_train_command(job, tmp / "save")
    _, task, _, _ = build(cmd)
    task.load_dataset("train", epoch=1)
    itr = task.get_batch_iterator(task.dataset("train"), max_sentences=batch, max_positions=tokens,
                                  ignore_invalid_inputs=True, seed=1, num_workers=0, epoch=1)
    times, t = [], time.perf_counter()
    for _ in itr.next_epoch_itr(shuffle=True):
        now = time.perf_counter()
        times.append(now - t)
        t = now
    return times[1:]  # the first includes starting the iterator


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--batches", type=int, default=20, help="batches per block")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    gpu = json.loads(MEASURED.read_text())
    gpu_step_s = gpu["batch"] * gpu["model"]["tokens_per_sample"] / gpu["tokens_per_s"]["fairseq"]
    result = {"gpu_step_s_paper_batch": gpu_step_s, "gpu": gpu["device"], "shapes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        data = write_toy_data(Path(tmp) / "data", ["en", "fr"], n_train=3000, min_len=5, max_len=60, seed=1)
        for name, tokens, batch, mode in SHAPES:
            blocks = [statistics.median(batch_seconds(data, Path(tmp), tokens, batch, mode, args.batches))
                      for _ in range(args.blocks)]
            row = {"tokens_per_sample": tokens, "batch": batch, "seconds_per_batch":
                   {"min": min(blocks), "median": statistics.median(blocks), "max": max(blocks)}}
            if (tokens, batch) == (gpu["model"]["tokens_per_sample"], gpu["batch"]):
                row["ratio_to_gpu_step"] = row["seconds_per_batch"]["median"] / gpu_step_s
            result["shapes"][name] = row
            s = row["seconds_per_batch"]
            print(f"{name} ({batch} x {tokens}): {1e3 * s['median']:.1f} ms per batch "
                  f"[{1e3 * s['min']:.1f}, {1e3 * s['max']:.1f}]"
                  + (f", x{row['ratio_to_gpu_step']:.2f} of a {gpu['device']} update ({1e3 * gpu_step_s:.0f} ms)"
                     if "ratio_to_gpu_step" in row else ""))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
