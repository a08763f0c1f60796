"""The budget table: every stage's jobs, GPUs, hours per job and GPU-hours at given rates
(pretraining from xling.cluster.budget's estimates, fine-tuning one job per model, task and batch
size), as ``python -m xling.cluster.budget`` prints it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from xling.cluster.budget import pretrain_device, pretrain_estimates
from xling.cluster.rates import DEFAULT_TRAIN_EXAMPLES, GridRate, Rate, grid_size, plan_batch_rates
from xling.pretrain.schedule import schedule


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


def _rates_basis(rates: Mapping[int, GridRate]) -> str:
    kinds = {"measured": "measured", "floor": "a floor: one cell's rate", "assumed": "assumed, one cell at a time"}
    return " / ".join(f"{r.examples_per_s:,.0f}" for r in rates.values()) + " cell-ex/s (" + "; ".join(
        f"batch {b}: {kinds[r.kind]}" for b, r in rates.items()) + ")"


def budget_rows(config: Mapping[str, Any], rate: Rate, train_examples: Mapping[str, int] = DEFAULT_TRAIN_EXAMPLES,
                measured: Mapping[str, Mapping[int, GridRate]] | None = None) -> list[StageBudget]:
    """Pretraining (every model, hours derived from the config) and one row per fine-tuning task
    (Table 1's bilingual models): one job per model and batch size, training that batch size's
    cells together, at ``measured`` rates (task -> batch size -> GridRate; see
    ``rates.plan_batch_rates`` for the batch sizes without one)."""
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
        per_job = grid_size(spec["grid"]) // len(spec["grid"]["batch_size"])
        examples = epoch_examples(config["finetune"], task, train_examples[task])
        rates = plan_batch_rates(task, config["finetune"], (measured or {}).get(task, {}))
        hours = [finetune_hours(per_job * examples, spec["epochs"], r.examples_per_s) for r in rates.values()]
        rows.append(StageBudget(
            f"finetune {task}", n_models * len(hours), ft_gpus, sum(hours) / len(hours),
            f"{n_models} models x {len(hours)} jobs (one per batch size, {per_job} cells each); "
            f"{spec['epochs']} epochs x {examples:,} examples a cell at {_rates_basis(rates)}"))
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
