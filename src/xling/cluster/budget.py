"""Compute budget of the paper-scale run, per stage, from the config: how many jobs each stage
submits and the GPU-hours they need at a given throughput.

Pretraining follows the paper (Section 3.1: "8 NVIDIA V100 GPUs ... around 3 days to train one
model"); fine-tuning follows the grid sizes in config and a throughput (examples per second per
GPU) that is either an assumption or a measured rate. `python -m xling.cluster.budget` prints the
markdown table used in docs/cluster.md.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import yaml

PAPER_DAYS_PER_MODEL = 3
PAPER_GPUS_PER_MODEL = 8


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


def pretrained_models(config: Mapping[str, Any]) -> dict[str, int]:
    """Bilingual models (one per Table 1 setting and pair) and monolingual ones (Section 5,
    plus en' = English again with another seed)."""
    bilingual = len(config["settings"]) * len(config["pairs"])
    mono = len(config["monolingual"]["languages"])
    if "en_prime_seed" in config["monolingual"]:
        mono += 1
    return {"bilingual": bilingual, "monolingual": mono}


def grid_size(grid: Mapping[str, list]) -> int:
    """Number of hyperparameter combinations of a grid (the product of its value lists)."""
    return math.prod(len(v) for v in grid.values())


def finetune_hours(train_examples: int, epochs: int, examples_per_second: float) -> float:
    """Hours for one fine-tuning cell: every epoch sees the training set once."""
    return train_examples * epochs / examples_per_second / 3600


def paper_budget(
    config: Mapping[str, Any],
    train_examples: Mapping[str, int],
    examples_per_second: Mapping[str, float],
    pretrain_hours_per_model: float = PAPER_DAYS_PER_MODEL * 24,
) -> list[StageBudget]:
    """Budget rows: pretraining (all models) and one row per fine-tuning task (bilingual models
    only: the zero-shot transfer of Table 1)."""
    models = pretrained_models(config)
    n_models = models["bilingual"] + models["monolingual"]
    gpus = int(config["rule_resources"]["pretrain"]["gpus"]) or PAPER_GPUS_PER_MODEL
    rows = [
        StageBudget(
            "pretrain", n_models, gpus, pretrain_hours_per_model,
            f"{models['bilingual']} bilingual + {models['monolingual']} monolingual models; paper: "
            f"~{pretrain_hours_per_model / 24:g} days on {gpus} V100 each",
        )
    ]
    ft_gpus = int(config["rule_resources"]["finetune"]["gpus"]) or 1
    for task in config["finetune"]["tasks"]:
        spec = config["finetune"][task]
        cells = grid_size(spec["grid"])
        hours = finetune_hours(train_examples[task], spec["epochs"], examples_per_second[task])
        rows.append(
            StageBudget(
                f"finetune {task}", models["bilingual"] * cells, ft_gpus, hours,
                f"{models['bilingual']} models x {cells} grid cells; {spec['epochs']} epochs x "
                f"{train_examples[task]:,} examples at {examples_per_second[task]:g} ex/s",
            )
        )
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


# Training-set sizes and V100 throughputs used for the estimate in docs/cluster.md. Sizes: MultiNLI
# train (XNLI's English training set), WikiAnn English train split (Rahimi et al. 2019 split), UD
# English-EWT v2.3 train sentences. The XNLI "epoch" follows XLM's fine-tuning (epoch_size 20000
# examples), without which 200 epochs of MultiNLI would be ~80M examples per cell.
DEFAULT_TRAIN_EXAMPLES = {"xnli": 20_000, "ner": 20_000, "parsing": 12_543}
# Assumed fine-tuning throughput of an 8-layer 768-d encoder on one V100 (fp16): replace with
# measured rates (`--rate task=ex_per_s`).
DEFAULT_EXAMPLES_PER_SECOND = {"xnli": 100.0, "ner": 100.0, "parsing": 80.0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", type=Path, default=Path("config/config.yaml"))
    ap.add_argument("--pretrain-hours", type=float, default=PAPER_DAYS_PER_MODEL * 24,
                    help="wall-clock hours per pretraining job (default: the paper's 3 days)")
    ap.add_argument("--rate", action="append", default=[], metavar="TASK=EX_PER_S",
                    help="fine-tuning throughput per GPU, e.g. --rate xnli=250 (measured)")
    args = ap.parse_args(argv)
    config = yaml.safe_load(args.config.read_text())
    rates = dict(DEFAULT_EXAMPLES_PER_SECOND)
    for item in args.rate:
        task, _, value = item.partition("=")
        rates[task] = float(value)
    print(markdown_table(paper_budget(config, DEFAULT_TRAIN_EXAMPLES, rates, args.pretrain_hours)), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
