"""The throughputs a budget plans with, and where each comes from.

Pretraining: model FLOP/s per device (GPU, or the CPU of a GPU-less job), turned into tokens/s by
a model's FLOPs per token (xling.pretrain.schedule), so one rate serves models of any size: the
paper's own V100 rate (its recipe over "around 3 days on 8 V100", in the fp16 the paper's "mixed
precision" means), a CPU rate measured on the demo, or a ``bench/bench_pretrain.py --json`` result
in the config's precision.

Fine-tuning: every job trains the cells of one batch size of a task's grid together
(xling.finetune.run_grid); its rate is cell-examples/s. A ``bench/bench_finetune.py --json`` row
gives it (``examples_per_s.grid``, measured with the config's cells per batch size); a row with a
one-cell rate only (``one_cell``, or ``train_epochs`` in files from before every job was a grid
job) gives a floor: a grid job is at least as fast as its cells one after another.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from xling.errors import ConfigError, InputError
from xling.pretrain.schedule import model_flops_per_token, schedule

# Section 3.1: "We train it with 8 NVIDIA V100 GPUs ... and mixed precision. It takes around 3 days
# to train one model", with the model and recipe below (80k joint BPE merges: ~80k entries).
PAPER_RECIPE: dict[str, Any] = {
    "model": {"layers": 8, "dim": 768, "ffn_dim": 3072, "tokens_per_sample": 256},
    "pretrain": {"batch_size_per_gpu": 96, "batch_gpus": 8, "streams_per_epoch_per_gpu": 200_000, "max_epoch": 200,
                 "mask_prob": 0.15},
    "vocab": 80_000,
    "gpus": 8,
    "hours": 72.0,
    "precision": "fp16",  # a V100 has no bf16
}

# Measured here: the demo's pretraining jobs (8 layers, 64 dims, 64-token streams, ~3.5k vocabulary)
# ran at 6.6k tokens/s each on the slowest 2-core machine seen (two jobs sharing two cores).
CPU_MEASURED: dict[str, Any] = {"model": {"layers": 8, "dim": 64, "ffn_dim": 256, "tokens_per_sample": 64},
                "pretrain": {"mask_prob": 0.15}, "vocab": 3_500, "tokens_per_s": 6_600}

# English training sets: MultiNLI (392,702 pairs; an XNLI epoch is finetune.xnli.epoch_size of
# them, as in XLM's fine-tuning), WikiAnn English train (Rahimi et al. 2019 split), UD
# English-EWT v2.3 train sentences.
DEFAULT_TRAIN_EXAMPLES = {"xnli": 392_702, "ner": 20_000, "parsing": 12_543}
# Assumed fine-tuning throughput of one cell of an 8-layer 768-d encoder on one V100 (fp16),
# where nothing was measured: a grid job of it trains its cells one after another at this rate
DEFAULT_EXAMPLES_PER_SECOND = {"xnli": 100.0, "ner": 100.0, "parsing": 80.0}


@dataclass(frozen=True)
class Rate:
    """Achieved model FLOP/s of one device, and where the number comes from."""

    flops_per_s: float
    basis: str

    def tokens_per_s(self, flops_per_token: float) -> float:
        return self.flops_per_s / flops_per_token


def paper_v100_rate() -> Rate:
    """What one V100 sustained in the paper: the recipe's tokens and FLOPs over 3 days x 8 GPUs."""
    r = PAPER_RECIPE
    sched = schedule(r["pretrain"], r["model"])
    flops = sched.tokens * model_flops_per_token(r["model"], r["pretrain"], r["vocab"])
    return Rate(flops / (r["hours"] * 3600 * r["gpus"]),
                f"V100: the paper's own rate ({sched.tokens:.2e} tokens in ~3 days on 8 V100, fp16)")


def cpu_rate() -> Rate:
    m = CPU_MEASURED
    flops = m["tokens_per_s"] * model_flops_per_token(m["model"], m["pretrain"], m["vocab"])
    return Rate(flops, f"CPU: measured on the demo ({m['tokens_per_s']:,} tokens/s per job)")


def default_rate(device: str, precision: str) -> Rate:
    """``cpu``, ``v100``, or another GPU model. GPUs without a measurement are planned at the
    V100's rate: newer GPUs only finish earlier (measure them to plan tighter). A V100 has no
    bf16 (the paper's V100 recipe is config/v100.yaml)."""
    if device == "cpu":
        return cpu_rate()
    v100 = paper_v100_rate()
    if device == "v100":
        if precision == "bf16":
            raise ConfigError("pretrain.precision bf16 on V100 GPUs (cluster.gpu_model: v100), which have no bf16: "
                              "read config/v100.yaml after the paper config (fp16, as the paper)")
        return v100
    return Rate(v100.flops_per_s, f"{device or 'any GPU'}: planned at the V100 rate (no measurement given)")


def _read_json(path: Path, what: str) -> dict:
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, None, what, "no such file") from None
    except json.JSONDecodeError as err:
        raise InputError(path, err.lineno, what, err.msg) from None
    if not isinstance(rec, dict):
        raise InputError(path, None, what, type(rec).__name__)
    return rec


def rate_from_benchmark(path: str | Path, precision: str | None = None) -> Rate:
    """The achieved FLOP/s of a ``bench/bench_pretrain.py --json`` result (our fairseq step);
    ``precision``: the config's ``pretrain.precision``, which the benchmark must have measured."""
    path = Path(path)
    rec = _read_json(path, "a bench/bench_pretrain.py --json result")
    flops = rec.get("achieved_flops_per_s")
    if not isinstance(flops, (int, float)) or flops <= 0:
        raise InputError(path, None, "a positive number in 'achieved_flops_per_s'", repr(flops))
    measured = rec.get("precision")
    device = rec.get("device", "?")
    if precision and measured and measured != precision and not str(device).startswith("cpu"):
        raise InputError(path, None, f"a rate measured in the config's pretrain.precision ({precision})",
                         f"{measured} on {device}")
    return Rate(float(flops), f"measured by bench/bench_pretrain.py on {device}"
                + (f" ({measured})" if measured else "") + f" ({path})")


@dataclass(frozen=True)
class GridRate:
    """Cell-examples/s of one fine-tuning job (a batch size's cells trained together), and how it
    was obtained: ``measured`` (grid jobs of the config's cells), ``floor`` (the rate of one cell,
    which a grid job of them is at least), ``assumed``."""

    examples_per_s: float
    kind: str
    source: str = ""


def grid_rows(path: str | Path) -> list[dict]:
    path = Path(path)
    rec = _read_json(path, "a bench/bench_finetune.py --json result")
    if not isinstance(rec.get("rows"), list):
        raise InputError(path, None, "a bench/bench_finetune.py --json result (a 'rows' list)")
    return rec["rows"]


def finetune_rates(paths: list[str | Path], finetune: Mapping[str, Any]) -> dict[str, dict[int, GridRate]]:
    """Task -> batch size -> the rate of its grid jobs, from ``bench/bench_finetune.py --json``
    results (a later file's row replaces an earlier's of the same task and batch size). A grid
    measured with another number of cells than the config's grid has at that batch size is refused
    (its rate depends on it); a one-cell rate is a floor."""
    out: dict[str, dict[int, GridRate]] = {}
    for p in paths:
        path = Path(p)
        for row in grid_rows(path):
            try:
                task, batch, rates = row["task"], int(row["batch_size"]), row["examples_per_s"]
            except (KeyError, TypeError, ValueError):
                raise InputError(path, None, "bench/bench_finetune.py rows with task, batch_size and examples_per_s",
                                 repr(row)[:200]) from None
            if task not in finetune["tasks"]:
                continue
            spec = finetune[task]
            per_job = grid_size(spec["grid"]) // len(spec["grid"]["batch_size"])
            if "grid" in rates:
                if int(row.get("cells", -1)) != per_job:
                    raise InputError(path, None, f"{task} batch {batch}: grid jobs of {per_job} cells, as the "
                                     "config's grid has", f"{row.get('cells')} cells measured")
                rate = GridRate(float(rates["grid"]), "measured", f"{path} ({row.get('device') or _device(path)})")
            else:
                one = rates.get("one_cell", rates.get("train_epochs"))
                if one is None:
                    raise InputError(path, None, f"{task} batch {batch}: examples_per_s.grid or one_cell",
                                     repr(rates)[:200])
                rate = GridRate(float(one), "floor", f"{path} ({row.get('device') or _device(path)})")
            out.setdefault(task, {})[batch] = rate
    return out


def _device(path: Path) -> str:
    return str(_read_json(path, "a bench/bench_finetune.py --json result").get("device", "?"))


def plan_batch_rates(task: str, finetune: Mapping[str, Any], measured: Mapping[int, GridRate]
                     ) -> dict[int, GridRate]:
    """The rate of each batch size of ``task``'s grid: its own, else the largest smaller batch
    size's (a grid's step costs hardly more at twice the batch, so this bounds its hours from
    above), else the assumed per-cell rate."""
    out = {}
    for b in sorted(int(x) for x in finetune[task]["grid"]["batch_size"]):
        if b in measured:
            out[b] = measured[b]
            continue
        smaller = [s for s in measured if s < b]
        if smaller:
            s = max(smaller)
            out[b] = GridRate(measured[s].examples_per_s, measured[s].kind,
                              f"batch {s}'s rate ({measured[s].source})")
        else:
            out[b] = GridRate(DEFAULT_EXAMPLES_PER_SECOND[task], "assumed", "assumed per-cell rate")
    return out


def grid_size(grid: Mapping[str, list]) -> int:
    """Number of hyperparameter combinations of a grid (the product of its value lists)."""
    n = 1
    for values in grid.values():
        n *= len(values)
    return n
