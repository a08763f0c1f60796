"""Compute budget of a run, derived from its config: what each pretraining job computes (updates x
streams x tokens, xling.pretrain.schedule), how long that takes at a throughput
(xling.cluster.rates), and whether it fits the job's ``runtime`` resource; and the fine-tuning
jobs, one per model, task and batch size.

The pretraining rate comes, in order of preference, from ``planning.pretrain_tokens_per_s_per_device``
(measured tokens/s of this config's model), from a ``bench/bench_pretrain.py --json`` result in the
config's precision (``planning.pretrain_benchmark`` or ``--rate-from``), or from the device's
default (``rates.default_rate``).

Planning (the workflow's start) calls :func:`check_pretrain_runtime`, which refuses a config
whose pretraining jobs cannot finish within their runtime: a job that runs out of time on a
cluster is killed, and resumed only as often as Snakemake retries it.

``python -m xling.cluster.budget`` prints the tables of docs/cluster.md; the README's budget is
written from these numbers by scripts/budget_readme.py.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from xling import config as xcfg
from xling.cluster.rates import DEFAULT_TRAIN_EXAMPLES, Rate, default_rate, finetune_rates, rate_from_benchmark
from xling.config import liu2020
from xling.errors import ConfigError
from xling.pretrain.schedule import model_flops_per_token, schedule
from xling.pretrain.tokens import match_recipe

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
    replicated = any(len(xcfg.row_seeds(config, s)) > 1 for s in config["settings"])
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
    precision = config["pretrain"]["precision"]
    rate_from = rate_from or planning["pretrain_benchmark"]
    if rate_from:
        return rate_from_benchmark(rate_from, None if device.kind == "cpu" else precision)
    return default_rate(device.kind, precision)


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", type=Path, action="append", default=None,
                    help="config file(s), merged left to right (default: config/config.yaml)")
    ap.add_argument("--rate-from", type=Path, default=None,
                    help="a bench/bench_pretrain.py --json result: its achieved FLOP/s plans pretraining")
    ap.add_argument("--tokens-per-s", type=float, default=None,
                    help="measured pretraining tokens/s per device of this config's model")
    ap.add_argument("--finetune-rate-from", type=Path, action="append", default=[],
                    help="a bench/bench_finetune.py --json result: its grid jobs' cell-examples/s plan the "
                         "fine-tuning rows (a one-cell rate: a floor); repeated, a later file's row replaces an "
                         "earlier's of the same task and batch size")
    args = ap.parse_args(argv)
    config = xcfg.load(*(args.config or [Path("config/config.yaml")]))
    rate = planned_rate(config, pretrain_device(config), args.rate_from, args.tokens_per_s)
    measured = finetune_rates(args.finetune_rate_from, config["finetune"])
    from xling.cluster.budget_table import budget_rows, markdown_table, schedule_summary

    print(schedule_summary(config))
    print(markdown_table(budget_rows(config, rate, DEFAULT_TRAIN_EXAMPLES, measured)), end="")
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
