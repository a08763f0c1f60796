"""Chosen steps of the shared fine-tuning anchor (``finetune_anchor.py`` of the project's
gpu-anchors, imported unchanged), timed like bench/bench_finetune.py: min / median / max over
``--rounds`` timings after its own warm-up. The anchor's own ``__main__`` runs all its variants for
both batch sizes, more compilations than one device command leaves room for beside the benchmark;
this runs the ones asked for at one batch size.

    python bench/finetune_anchor_run.py --anchor .anchors/finetune_anchor.py --batch 4 \\
        --variants eager_fp32 compile ensemble9_compile --json anchor_b4.json

Variants: eager_fp32, eager_bf16, compile, compile_graphs (one model), ensemble<M> and
ensemble<M>_compile (M models as one batched model); rates in (cell-)examples per second."""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import time
from pathlib import Path

import torch


def load_anchor(path: Path):
    spec = importlib.util.spec_from_file_location("finetune_anchor", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--anchor", type=Path, required=True, help="the anchor's finetune_anchor.py")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--length", type=int, default=64, help="padded tokens per example (the anchor's T)")
    ap.add_argument("--variants", nargs="+", default=["eager_fp32", "compile", "ensemble9_compile"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=40, help="steps per timing")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    a = load_anchor(args.anchor)
    data = a.batches(args.batch, args.length, 16)
    out = []
    for variant in args.variants:
        t0 = time.perf_counter()
        row = {"variant": variant, "batch_size": args.batch}
        try:
            if variant.startswith("ensemble"):
                cells = int(variant.removeprefix("ensemble").removesuffix("_compile"))
                feed = [(torch.stack([x] * cells), torch.stack([p] * cells), torch.stack([y] * cells))
                        for x, p, y in data]
                step = a.ensemble(cells, args.batch, args.length, variant.endswith("_compile"))
            else:
                cells, feed = 1, data
                step = a.single(variant, args.batch, args.length)
            a.timeit(step, feed, warm=10, n=1)  # warm-up: compilation, allocations
            row["warmup_s"] = time.perf_counter() - t0
            rates = [cells * args.batch / a.timeit(step, feed, warm=0, n=args.steps) for _ in range(args.rounds)]
            row.update(cells=cells, cell_examples_per_s={"min": min(rates), "median": statistics.median(rates),
                                                         "max": max(rates)})
            del step
        except Exception as err:  # noqa: BLE001 - a variant this GPU or torch cannot run is recorded
            row["error"] = repr(err)[:300]
        print(json.dumps(row), flush=True)
        out.append(row)
        torch.cuda.empty_cache()
        if args.json:
            args.json.write_text(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                                             "rows": out}, indent=2) + "\n")
    return out


if __name__ == "__main__":
    main()
