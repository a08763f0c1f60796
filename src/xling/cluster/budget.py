"""Compute budget of a run, derived from its config: what each pretraining job computes (updates x
streams x tokens, xling.pretrain.schedule), how long that takes at a throughput, and whether it
fits the job's ``runtime`` resource; plus the fine-tuning grids.

Throughput is model FLOP/s per device (GPU, or the CPU of a GPU-less job), turned into tokens/s by
the configured model's FLOPs per token, so one rate serves models of any size. In order of
preference it comes from ``planning.pretrain_tokens_per_s_per_device`` (measured tokens/s of
this config's model), from a ``bench/bench_pretrain.py --json`` result (``planning.pretrain_benchmark``
or ``--rate-from``), or from a documented default per device (``DEFAULT_RATES``).

Planning (the workflow's start) calls :func:`check_pretrain_runtime`, which refuses a config
whose pretraining jobs cannot finish within their runtime: a job that runs out of time on a
cluster is killed, and resumed only as often as Snakemake retries it.

``python -m xling.cluster.budget`` prints the tables of docs/cluster.md.
"""

from __future__ import annotations

import argparse
import json
import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from xling import config as xcfg
from xling.config import liu2020
from xling.errors import ConfigError, InputError
from xling.pretrain.schedule import model_flops_per_token, schedule
from xling.pretrain.tokens import match_recipe

# Section 3.1: "We train it with 8 NVIDIA V100 GPUs ... It takes around 3 days to train one model",
# with the model and recipe below (80k joint BPE merges: a vocabulary of about 80k entries).
PAPER_RECIPE = {
    "model": {"layers": 8, "dim": 768, "ffn_dim": 3072, "tokens_per_sample": 256},
    "pretrain": {"batch_size_per_gpu": 96, "batch_gpus": 8, "streams_per_epoch_per_gpu": 200_000, "max_epoch": 200,
                 "mask_prob": 0.15},
    "vocab": 80_000,
    "gpus": 8,
    "hours": 72.0,
}


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
                f"V100: the paper's own rate ({sched.tokens:.2e} tokens in ~3 days on 8 V100)")


# Measured here: the demo's pretraining jobs (8 layers, 64 dims, 64-token streams, ~3.5k vocabulary)
# ran at 6.6k tokens/s each on the slowest 2-core machine seen (two jobs sharing two cores).
CPU_MEASURED = {"model": {"layers": 8, "dim": 64, "ffn_dim": 256, "tokens_per_sample": 64},
                "pretrain": {"mask_prob": 0.15}, "vocab": 3_500, "tokens_per_s": 6_600}


def cpu_rate() -> Rate:
    m = CPU_MEASURED
    flops = m["tokens_per_s"] * model_flops_per_token(m["model"], m["pretrain"], m["vocab"])
    return Rate(flops, f"CPU: measured on the demo ({m['tokens_per_s']:,} tokens/s per job)")


def default_rate(device: str) -> Rate:
    """``cpu``, ``v100``, or another GPU model. GPUs without a measurement are planned at the
    V100's rate: newer GPUs only finish earlier (measure them to plan tighter)."""
    if device == "cpu":
        return cpu_rate()
    v100 = paper_v100_rate()
    if device == "v100":
        return v100
    return Rate(v100.flops_per_s, f"{device or 'any GPU'}: planned at the V100 rate (no measurement given)")


def rate_from_benchmark(path: str | Path) -> Rate:
    """The achieved FLOP/s of a ``bench/bench_pretrain.py --json`` result (our fairseq step)."""
    path = Path(path)
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, None, "a bench/bench_pretrain.py --json result", "no such file") from None
    except json.JSONDecodeError as err:
        raise InputError(path, err.lineno, "a bench/bench_pretrain.py --json result", err.msg) from None
    flops = rec.get("achieved_flops_per_s")
    if not isinstance(flops, (int, float)) or flops <= 0:
        raise InputError(path, None, "a positive number in 'achieved_flops_per_s'", repr(flops))
    return Rate(float(flops), f"measured by bench/bench_pretrain.py on {rec.get('device', '?')} ({path})")


def _read_finetune_benchmark(path: Path) -> list:
    what = "a bench/bench_finetune.py --json result"
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, None, what, "no such file") from None
    except json.JSONDecodeError as err:
        raise InputError(path, err.lineno, what, err.msg) from None
    if not isinstance(rec, dict) or not isinstance(rec.get("rows"), list):
        raise InputError(path, None, f"{what} (a 'rows' list)")
    return rec["rows"]


def finetune_grid_rates_from_benchmark(path: str | Path, finetune: Mapping[str, Any]) -> dict[str, dict[int, float]]:
    """Task -> batch size -> cell-examples/s of one grid job (all the grid's cells of that batch
    size trained together, ``examples_per_s.grid`` of a ``bench/bench_finetune.py --json``
    result). Tasks the benchmark did not measure as grids are left out; a grid job measured with
    another number of cells than the config's grid has at that batch size is refused (its rate
    depends on it)."""
    path = Path(path)
    what = "bench/bench_finetune.py rows with task, batch_size, cells and examples_per_s.grid"
    measured: dict[tuple[str, int], tuple[int, float]] = {}
    for row in _read_finetune_benchmark(path):
        if not isinstance(row, dict) or "grid" not in (row.get("examples_per_s") or {}):
            continue
        try:
            measured[(row["task"], int(row["batch_size"]))] = (int(row["cells"]), float(row["examples_per_s"]["grid"]))
        except (KeyError, TypeError, ValueError):
            raise InputError(path, None, what, repr(row)) from None
    rates: dict[str, dict[int, float]] = {}
    for task in finetune["tasks"]:
        spec = finetune[task]
        batches = [int(b) for b in spec["grid"]["batch_size"]]
        found = {b: measured[(task, b)] for b in batches if (task, b) in measured}
        if not found:
            continue
        if len(found) < len(batches):
            raise InputError(path, None, f"{task} grid jobs measured at every batch size of its grid {batches}",
                             f"none for {[b for b in batches if b not in found]}")
        per_job = grid_size(spec["grid"]) // len(batches)
        for b, (cells, _) in found.items():
            if cells != per_job:
                raise InputError(path, None, f"{task} batch {b}: grid jobs of {per_job} cells, as the config's "
                                 "grid has", f"{cells} cells measured")
        rates[task] = {b: rate for b, (_, rate) in found.items()}
    return rates


def finetune_rates_from_benchmark(path: str | Path, finetune: Mapping[str, Any]) -> dict[str, float]:
    """Examples/s per task from a ``bench/bench_finetune.py --json`` result: the harmonic mean of
    the measured train_epochs rates over the batch sizes of the task's grid, since every grid
    cell is one job (hours average as 1/rate). Tasks the benchmark did not run are left out."""
    path = Path(path)
    what = "a bench/bench_finetune.py --json result"
    measured: dict[tuple[str, int], float] = {}
    for row in _read_finetune_benchmark(path):
        try:
            measured[(row["task"], int(row["batch_size"]))] = float(row["examples_per_s"]["train_epochs"])
        except (KeyError, TypeError, ValueError):
            raise InputError(path, None, f"{what}: rows with task, batch_size and examples_per_s.train_epochs",
                             repr(row)) from None
    rates = {}
    for task in finetune["tasks"]:
        batches = list(finetune[task]["grid"]["batch_size"])
        found = [measured.get((task, int(b))) for b in batches]
        if not any(found):
            continue
        if not all(found):
            missing = [b for b, r in zip(batches, found) if not r]
            raise InputError(path, None, f"{task} measured at every batch size of its grid {batches}",
                             f"none for {missing}")
        rates[task] = len(found) / sum(1 / r for r in found)
    return rates


# ---------------------------------------------------------------------------------------------
# Pretraining jobs


@dataclass(frozen=True)
class PlannedJob:
    """A pretraining job as the budget plans it: its name, vocabulary and sections (the job that
    trains is :class:`xling.pretrain.job.PretrainJob`)."""

    name: str  # "default/en-fr" ("default/en-fr/seed2" with several seeds), "mono/en_prime", "liu/n200000/full"
    vocab: int  # estimated vocabulary (the softmax's share of the FLOPs)
    model: str = ""  # what the replicates of one model share: "default/en-fr"; "" = the name
    # the job's own model: and pretrain: sections (Liu et al.'s models); None: the config's
    model_cfg: Mapping | None = field(default=None, compare=False, hash=False)
    pretrain_cfg: Mapping | None = field(default=None, compare=False, hash=False)

    def __post_init__(self):
        if not self.model:
            object.__setattr__(self, "model", self.name)

    def sections(self, config: Mapping[str, Any]) -> tuple[Mapping, Mapping]:
        return self.model_cfg or config["model"], self.pretrain_cfg or config["pretrain"]


def _vocab(mode: str, merges: int, n_languages: int) -> int:
    """Vocabulary estimate from the BPE setting: a joint BPE of m merges has about m entries,
    per-language BPEs about m per language (their union; prefixed: disjoint)."""
    return merges if mode == "joint" else merges * n_languages


def pretrain_jobs(config: Mapping[str, Any]) -> list[PlannedJob]:
    """Every pretraining job of the run: Table 1's (one per seed), Figure 7's extra bilingual
    models and the monolingual models of Section 5."""
    jobs = []
    mono_merges = int(config["monolingual"]["bpe_merges"])
    replicated = len(config["seeds"]["pretrain"]) > 1
    for setting, pair, seed in xcfg.bilingual_models(config):
        s = config["settings"][setting]
        vocab = mono_merges if xcfg.is_prime(pair) else _vocab(s["bpe"], int(s["merges"]), 2)
        model = f"{setting}/{pair}"
        jobs.append(PlannedJob(f"{model}/seed{seed}" if replicated else model, vocab, model))
    jobs += [PlannedJob(f"mono/{m}", mono_merges) for m in xcfg.monolingual_models(config)]
    return jobs


def liu_pretrain_jobs(config: Mapping[str, Any]) -> list[PlannedJob]:
    """Liu et al.'s MLMs (target ``liu2020``): one per data size and context window, with the study's
    model and pretrain sections. A windowed model reads samples of at most its window's tokens, so
    it is planned at that length (an upper bound: a shorter sentence is one shorter sample). Matched
    in tokens to the full model (``liu2020.window_tokens``), it is planned for the full model's
    tokens: its job measures the ratio that makes them equal, and the full model's planned tokens
    bound its real ones."""
    liu = config["liu2020"]
    if not liu["languages"]:
        return []
    model = liu2020.model_section(config)
    jobs = []
    for size in liu["sizes"]:
        for window in liu["windows"]:
            wid = liu2020.window_id(window)
            length = model["tokens_per_sample"] if window == "full" else min(int(window), model["tokens_per_sample"])
            m = {**model, "tokens_per_sample": length}
            pretrain = liu2020.pretrain_section(config, wid)
            if pretrain.get("match_tokens"):
                pretrain = match_recipe(pretrain, model["tokens_per_sample"] / length, pretrain["match_tokens"]["by"])
            jobs.append(PlannedJob(f"liu/n{size}/{wid}", int(liu["bpe_merges"]), model_cfg=m, pretrain_cfg=pretrain))
    return jobs


@dataclass(frozen=True)
class Device:
    kind: str  # "cpu" or a GPU model ("v100", "a100", ...; "" when not given)
    count: int  # GPUs of the job (1 for a CPU job)

    @property
    def label(self) -> str:
        return "CPU" if self.kind == "cpu" else f"{self.count} x {self.kind or 'GPU'}"


def pretrain_device(config: Mapping[str, Any]) -> Device:
    res = config["rule_resources"]["pretrain"]
    gpus = int(res["gpus"])
    if gpus == 0:
        return Device("cpu", 1)
    model = res.get("gpu_model") or config["cluster"]["gpu_model"] or ""
    return Device(str(model).lower(), gpus)


def planned_rate(config: Mapping[str, Any], device: Device, rate_from: str | Path | None = None,
                 tokens_per_s: float | None = None) -> Rate:
    """The throughput planning uses: arguments first, then the config's ``planning:``, then the default."""
    planning = config["planning"]
    tokens_per_s = tokens_per_s or planning["pretrain_tokens_per_s_per_device"]
    if tokens_per_s:
        # a tokens/s of this config's model, converted once with the Table 1 default's vocabulary
        ref = xcfg.bilingual_models(config)[0]
        s = config["settings"][ref[0]]
        f = model_flops_per_token(config["model"], config["pretrain"], _vocab(s["bpe"], int(s["merges"]), 2))
        return Rate(float(tokens_per_s) * f, f"given: {float(tokens_per_s):,.0f} tokens/s per device")
    rate_from = rate_from or planning["pretrain_benchmark"]
    if rate_from:
        return rate_from_benchmark(rate_from)
    return default_rate(device.kind)


@dataclass(frozen=True)
class PretrainEstimate:
    job: PlannedJob
    updates: int
    tokens: int
    tokens_per_s: float  # of the whole job (all its devices)
    hours: float
    runtime_hours: float  # the job's runtime resource
    streams: int = 0  # per update
    tokens_per_sample: int = 0

    @property
    def fits(self) -> bool:
        return self.hours <= self.runtime_hours


def pretrain_estimates(config: Mapping[str, Any], rate: Rate, margin: float | None = None,
                       jobs: list[PlannedJob] | None = None) -> list[PretrainEstimate]:
    """Hours of every pretraining job (default: Table 1's and Section 5's) at ``rate``, times
    ``margin`` (planning.runtime_margin: the per-epoch validation and checkpoints, start-up, a
    slower node)."""
    margin = float(margin if margin is not None else config["planning"]["runtime_margin"])
    device = pretrain_device(config)
    runtime_h = int(config["rule_resources"]["pretrain"]["runtime"]) / 60
    out = []
    for job in pretrain_jobs(config) if jobs is None else jobs:
        model, pretrain = job.sections(config)
        sched = schedule(pretrain, model)
        tps = rate.tokens_per_s(model_flops_per_token(model, pretrain, job.vocab)) * device.count
        out.append(PretrainEstimate(job, sched.max_updates, sched.tokens, tps, margin * sched.tokens / tps / 3600,
                                    runtime_h, sched.global_batch_streams, sched.tokens_per_sample))
    return out


def check_pretrain_runtime(config: Mapping[str, Any]) -> None:
    """Raise ConfigError naming every pretraining job that cannot finish within its runtime."""
    device = pretrain_device(config)
    rate = planned_rate(config, device)
    jobs = pretrain_jobs(config) + liu_pretrain_jobs(config)
    unfit = [e for e in pretrain_estimates(config, rate, jobs=jobs) if not e.fits]
    if not unfit:
        return
    margin = float(config["planning"]["runtime_margin"])
    lines = [
        f"pretrain {e.job.name}: {e.updates:,} updates x {e.streams} streams x "
        f"{e.tokens_per_sample} tokens = {e.tokens:.2e} tokens at {e.tokens_per_s:,.0f} tokens/s "
        f"({device.label}) needs {e.hours:.1f} h (x{margin:g} margin) > runtime {e.runtime_hours:g} h"
        for e in unfit]
    raise ConfigError(
        "pretraining jobs cannot finish within their runtime:\n  " + "\n  ".join(lines)
        + f"\n  throughput: {rate.basis}.\n  Raise rule_resources.pretrain.runtime, give the jobs more or "
        "faster GPUs with a measured rate (planning.pretrain_benchmark: a bench/bench_pretrain.py --json "
        "result, or planning.pretrain_tokens_per_s_per_device), or train fewer updates (pretrain.max_epoch; "
        "liu2020.pretrain.max_epoch for the liu/ jobs).")


# ---------------------------------------------------------------------------------------------
# The budget table


@dataclass(frozen=True)
class StageBudget:
    stage: str
    jobs: int
    gpus_per_job: int
    hours_per_job: float
    basis: str

    @property
    def gpu_hours(self) -> float:
        return self.jobs * self.gpus_per_job * self.hours_per_job


def grid_size(grid: Mapping[str, list]) -> int:
    """Number of hyperparameter combinations of a grid (the product of its value lists)."""
    return math.prod(len(v) for v in grid.values())


def finetune_hours(train_examples: int, epochs: int, examples_per_second: float) -> float:
    """Hours for one fine-tuning cell: every epoch sees ``train_examples`` examples."""
    return train_examples * epochs / examples_per_second / 3600


def epoch_examples(finetune: Mapping[str, Any], task: str, train_set: int) -> int:
    """Examples one fine-tuning epoch sees: the task's epoch_size if set, else its (capped)
    training set."""
    spec = finetune[task]
    if spec["epoch_size"]:
        return int(spec["epoch_size"])
    cap = spec["max_train_examples"]
    return min(train_set, int(cap)) if cap else train_set


def budget_rows(config: Mapping[str, Any], rate: Rate, train_examples: Mapping[str, int],
                examples_per_second: Mapping[str, float],
                grid_rates: Mapping[str, Mapping[int, float]] | None = None) -> list[StageBudget]:
    """Pretraining (every model, hours derived from the config) and one row per fine-tuning task
    (Table 1's bilingual models): one job per grid cell at ``examples_per_second``, or, for a task
    in ``grid_rates`` (batch size -> cell-examples/s of a grid job), one job per batch size
    training that batch size's cells together (xling.finetune.run_grid)."""
    est = pretrain_estimates(config, rate, margin=1.0)
    device = pretrain_device(config)
    gpus = device.count if device.kind != "cpu" else 0
    sched = schedule(config["pretrain"], config["model"])
    rows = [StageBudget(
        "pretrain", len(est), gpus, sum(e.hours for e in est) / len(est),
        f"{len(est)} models x {sched.max_updates:,} updates x {sched.global_batch_streams} streams x "
        f"{sched.tokens_per_sample} tokens = {sched.tokens:.2e} tokens each; {rate.basis}")]
    ft_gpus = int(config["rule_resources"]["finetune"]["gpus"])
    n_models = len(config["settings"]) * len(config["pairs"])
    for task in config["finetune"]["tasks"]:
        spec = config["finetune"][task]
        cells = grid_size(spec["grid"])
        examples = epoch_examples(config["finetune"], task, train_examples[task])
        if grid_rates and task in grid_rates:
            per_job = cells // len(spec["grid"]["batch_size"])
            hours = [finetune_hours(per_job * examples, spec["epochs"], r) for r in grid_rates[task].values()]
            shown = " / ".join(f"{r:,.0f}" for r in grid_rates[task].values())
            rows.append(StageBudget(
                f"finetune {task}", n_models * len(hours), ft_gpus, sum(hours) / len(hours),
                f"{n_models} models x {len(hours)} grid jobs (one per batch size, {per_job} cells each); "
                f"{spec['epochs']} epochs x {examples:,} examples a cell at {shown} cell-ex/s"))
            continue
        hours = finetune_hours(examples, spec["epochs"], examples_per_second[task])
        rows.append(StageBudget(
            f"finetune {task}", n_models * cells, ft_gpus, hours,
            f"{n_models} models x {cells} grid cells; {spec['epochs']} epochs x {examples:,} "
            f"examples at {examples_per_second[task]:,.0f} ex/s"))
    return rows


def markdown_table(rows: list[StageBudget]) -> str:
    lines = [
        "| stage | jobs | GPUs/job | hours/job | GPU-hours | basis |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.stage} | {r.jobs} | {r.gpus_per_job} | {r.hours_per_job:.2f} | {r.gpu_hours:,.0f} | {r.basis} |"
        )
    total = sum(r.gpu_hours for r in rows)
    lines.append(f"| **total** | {sum(r.jobs for r in rows)} | | | **{total:,.0f}** | |")
    return "\n".join(lines) + "\n"


def schedule_summary(config: Mapping[str, Any]) -> str:
    s = schedule(config["pretrain"], config["model"])
    return (f"pretraining, per model: {s.updates_per_epoch:,} updates per epoch x {s.max_epoch} epochs = "
            f"{s.max_updates:,} updates x {s.global_batch_streams} streams x {s.tokens_per_sample} tokens = "
            f"{s.tokens:.2e} tokens\n")


# The rates the README's budget plans with on an H100 (docs/cluster.md: how they were measured):
# bench/gpu_check.sh's pretraining step and XNLI grid job, and the single-cell fine-tuning loop
# of the tasks whose grid jobs were not measured
H100_CHECK = Path("bench/measured/gpu_check/2026-11-26_h100_9e3340f")
H100_PRETRAIN = H100_CHECK / "pretrain.json"
H100_GRID = H100_CHECK / "grid.json"
H100_FINETUNE = Path("bench/measured/h100_finetune_paper_model.json")
README_BEGIN = "<!-- budget: generated by python -m xling.cluster.budget --readme; a test compares -->"
README_END = "<!-- /budget -->"


def readme_section(config: Mapping[str, Any], h100_pretrain: str | Path = H100_PRETRAIN,
                   h100_finetune: str | Path = H100_FINETUNE, h100_grid: str | Path = H100_GRID) -> str:
    """The README's compute budget: the table at the paper's V100 rate beside the one measured on an
    H100, one pretraining row per vocabulary size (its softmax sets the hours), one row per
    fine-tuning task (one job per batch size where ``h100_grid`` measured the task's grid jobs,
    else one per cell), and the numbers the text around it quotes, all from the config and the
    three benchmark files."""
    from xling.download.licensed import unavailable_ner_targets

    device = pretrain_device(config)
    v100, h100 = planned_rate(config, device), rate_from_benchmark(h100_pretrain)
    h100_ft = {**DEFAULT_EXAMPLES_PER_SECOND, **finetune_rates_from_benchmark(h100_finetune, config["finetune"])}
    grid_rates = finetune_grid_rates_from_benchmark(h100_grid, config["finetune"])
    grid_settings = {row["task"]: row.get("settings", "") for row in _read_finetune_benchmark(Path(h100_grid))
                     if "grid" in (row.get("examples_per_s") or {})}
    bench = json.loads(Path(h100_pretrain).read_text(encoding="utf-8"))
    mfu = bench.get("mfu")
    rows = []  # (stage, jobs, gpus, hours V100, hours H100)
    est = {"v": pretrain_estimates(config, v100, margin=1.0), "h": pretrain_estimates(config, h100, margin=1.0)}
    for vocab in sorted({e.job.vocab for e in est["v"]}, reverse=True):
        ev = [e for e in est["v"] if e.job.vocab == vocab]
        eh = [e for e in est["h"] if e.job.vocab == vocab]
        rows.append((f"pretrain, {vocab / 1000:g}k vocabulary", len(ev), device.count,
                     sum(e.hours for e in ev) / len(ev), sum(e.hours for e in eh) / len(eh)))
    tasks = config["finetune"]["tasks"]
    per_job = {t: grid_size(config["finetune"][t]["grid"]) // len(config["finetune"][t]["grid"]["batch_size"])
               for t in tasks}
    ft_v = budget_rows(config, v100, DEFAULT_TRAIN_EXAMPLES, DEFAULT_EXAMPLES_PER_SECOND)[1:]
    ft_h = budget_rows(config, h100, DEFAULT_TRAIN_EXAMPLES, h100_ft, grid_rates)[1:]
    for task, a, b in zip(tasks, ft_v, ft_h):
        if task in grid_rates:  # the V100's grid job trains its cells one after another at the assumed rate
            rows.append((f"{a.stage} (one job per batch size, {per_job[task]} cells)", b.jobs, b.gpus_per_job,
                         per_job[task] * a.hours_per_job, b.hours_per_job))
        else:
            rows.append((f"{a.stage} (one job per grid cell)", a.jobs, a.gpus_per_job, a.hours_per_job,
                         b.hours_per_job))
    lines = ["| stage | jobs | GPUs/job | hours/job, V100 / H100 | GPU-hours at the paper's V100 rate "
             "| GPU-hours at the measured H100 rate |", "|---|---:|---:|---:|---:|---:|"]
    for stage, jobs, gpus, hv, hh in rows:
        lines.append(f"| {stage} | {jobs} | {gpus} | {hv:.2f} / {hh:.2f} | {jobs * gpus * hv:,.0f} "
                     f"| {jobs * gpus * hh:,.0f} |")
    total_v = sum(j * g * hv for _, j, g, hv, _ in rows)
    total_h = sum(j * g * hh for _, j, g, _, hh in rows)
    lines.append(f"| **total** | {sum(r[1] for r in rows)} | | | **{total_v:,.0f}** | **{total_h:,.0f}** |")

    sched = schedule(config["pretrain"], config["model"])
    models = xcfg.bilingual_models(config)
    table1 = len(config["settings"]) * len(config["pairs"]) * len(config["seeds"]["pretrain"])
    mono = len(xcfg.monolingual_models(config))
    ref = next(e for e in est["v"] if e.job.model == f"{models[0][0]}/{models[0][1]}")
    ref_h = next(e for e in est["h"] if e.job.model == ref.job.model)
    label = config["settings"][models[0][0]]["label"]
    runtime_days = int(config["rule_resources"]["pretrain"]["runtime"]) / 1440
    n_models = len(config["settings"]) * len(config["pairs"])
    grid_jobs = {t: n_models * len(config["finetune"][t]["grid"]["batch_size"]) for t in tasks}
    left_out = sorted(unavailable_ner_targets(config)) if "ner" in tasks else []
    src = config["source_language"]
    ner_out = len(config["settings"]) * len(left_out) * len(config["finetune"]["ner"]["grid"]["batch_size"]) \
        if left_out else 0
    grid_total = sum(grid_jobs.values())
    text = [
        README_BEGIN,
        f"**Compute budget** (`python -m xling.cluster.budget`, derived from the config; each pretraining model is "
        f"{sched.max_updates:,} updates x {sched.global_batch_streams} streams x {sched.tokens_per_sample} tokens "
        f"= {sched.tokens:.2e} tokens):",
        "",
        *lines,
        "",
        f"- The {len(models) + mono} models are Table 1's {table1}, Figure 7's {len(models) - table1} bilingual and "
        f"{mono} monolingual ones; the vocabulary (the softmax's share of the compute) sets their hours. The V100 "
        "column plans pretraining at the rate the paper's \"around 3 days on 8 V100\" implies "
        f"({ref.tokens_per_s / device.count / 1000:.1f}k tokens/s per V100: a {label} model takes {ref.hours:.1f} h) "
        "and fine-tuning at assumed rates "
        f"({', '.join(f'{DEFAULT_EXAMPLES_PER_SECOND[t]:g}' for t in tasks)} ex/s for {', '.join(tasks)}).",
        "- The H100 column uses rates measured on one H100 (`bench/measured/`): the paper's model pretrains at "
        f"{ref_h.tokens_per_s / device.count / 1000:.0f}k tokens/s"
        + (f" ({mfu:.1%} MFU" + (f", {bench['precision']}" if bench.get("precision") else "")
           + (", compiled" if bench.get("compile") else "") + ")" if mfu else "")
        + f", {h100.flops_per_s / v100.flops_per_s:.1f}x the paper's V100 rate, so a {label} model takes "
        f"{ref_h.hours:.1f} h on {device.count} H100; scaled linearly from one GPU, since no multi-GPU run was "
        "measured.",
        f"- Planning refuses a config whose pretraining jobs cannot finish within their `runtime` "
        f"(x {float(config['planning']['runtime_margin']):g} margin); the paper config asks for "
        f"{runtime_days:g} days per pretraining job.",
        f"- Jobs ({sum(r[1] for r in rows)} in the table): one per pretrained model; "
        + "; ".join(
            f"for {t} one per model and batch size, its {per_job[t]} cells trained together as the workflow "
            f"does (`finetune_grid_{t}`), at the rates such a job reached on one H100 "
            f"({' / '.join(f'{r:,.0f}' for r in grid_rates[t].values())} cell-examples/s at batch "
            f"{' / '.join(str(b) for b in grid_rates[t])}"
            + (f", {grid_settings[t]}" if grid_settings.get(t) else "") + ")"
            for t in tasks if t in grid_rates)
        + ("; " if grid_rates else "")
        + "for " + " and ".join(t for t in tasks if t not in grid_rates)
        + " one per grid cell, at the rates of one cell a job (their grid jobs are not measured yet, so "
        "these rows plan high). The workflow runs "
        + " + ".join(f"{grid_jobs[t]} {t}" for t in tasks) + f" = {grid_total} fine-tuning jobs"
        + (f", {grid_total - ner_out} until NER {', '.join(src + '-' + lang for lang in left_out)} "
           f"({ner_out} jobs) has its licensed corpora" if left_out else "")
        + ".",
        README_END,
    ]
    wrapped = [textwrap.fill(line, width=100, subsequent_indent="  " if line.startswith("- ") else "",
                             break_long_words=False, break_on_hyphens=False)
               if line.startswith(("- ", "**")) else line for line in text]
    return "\n".join(wrapped) + "\n"


# English training sets: MultiNLI (392,702 pairs; an XNLI epoch is finetune.xnli.epoch_size of
# them, as in XLM's fine-tuning), WikiAnn English train (Rahimi et al. 2019 split), UD
# English-EWT v2.3 train sentences.
DEFAULT_TRAIN_EXAMPLES = {"xnli": 392_702, "ner": 20_000, "parsing": 12_543}
# Assumed fine-tuning throughput of an 8-layer 768-d encoder on one V100 (fp16): replace with
# measured rates (`--rate task=ex_per_s`).
DEFAULT_EXAMPLES_PER_SECOND = {"xnli": 100.0, "ner": 100.0, "parsing": 80.0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", type=Path, action="append", default=None,
                    help="config file(s), merged left to right (default: config/config.yaml)")
    ap.add_argument("--rate", action="append", default=[], metavar="TASK=RATE",
                    help="measured throughput: pretrain=TOKENS_PER_S per device, or a fine-tuning task's "
                         "examples/s per GPU, e.g. --rate xnli=250")
    ap.add_argument("--rate-from", type=Path, default=None,
                    help="a bench/bench_pretrain.py --json result: its achieved FLOP/s plans pretraining")
    ap.add_argument("--finetune-rate-from", type=Path, action="append", default=[],
                    help="a bench/bench_finetune.py --json result: its examples/s plan the fine-tuning rows "
                         "(one job per batch size where it measured grid jobs, else one per cell); repeated, a "
                         "later file's rates replace an earlier's task by task, and a task measured as grid "
                         "jobs in any file is planned as grid jobs")
    ap.add_argument("--readme", action="store_true",
                    help="the README's budget: the V100 plan beside the H100 rates of bench/measured/")
    args = ap.parse_args(argv)
    config = xcfg.load(*(args.config or [Path("config/config.yaml")]))
    if args.readme:
        print(readme_section(config), end="")
        return 0
    rates = dict(DEFAULT_EXAMPLES_PER_SECOND)
    grid_rates = {}
    for path in args.finetune_rate_from:
        rates.update(finetune_rates_from_benchmark(path, config["finetune"]))
        grid_rates.update(finetune_grid_rates_from_benchmark(path, config["finetune"]))
    pretrain_tps = None
    for item in args.rate:
        task, _, value = item.partition("=")
        if task == "pretrain":
            pretrain_tps = float(value)
        else:
            rates[task] = float(value)
            grid_rates.pop(task, None)  # a rate given by hand plans one job per cell
    rate = planned_rate(config, pretrain_device(config), args.rate_from, pretrain_tps)
    print(schedule_summary(config))
    print(markdown_table(budget_rows(config, rate, DEFAULT_TRAIN_EXAMPLES, rates, grid_rates)), end="")
    margin = float(config["planning"]["runtime_margin"])
    unfit = [e for e in pretrain_estimates(config, rate, margin) if not e.fits]
    if unfit:
        worst = max(unfit, key=lambda e: e.hours)
        print(f"\nrefused: {len(unfit)} pretraining job(s) need more than their runtime "
              f"(e.g. {worst.job.name}: {worst.hours:.1f} h with the x{margin:g} margin > {worst.runtime_hours:g} h); "
              "raise rule_resources.pretrain.runtime or give a measured rate")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
