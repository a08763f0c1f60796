"""`make refit TARGET=<target>`: every fine-tuning job behind a target again (a batch size's cells in
one job, finetune_grid_<task>: the paper's three cells a job, the demo's one), and no other job
forced. Dry runs of the make target, as the docs give it, count the forced jobs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from xling import config as xcfg
from xling.config import REPO
from xling.download.licensed import unavailable_ner_targets
from xling.finetune.job import cells_by_batch_size, finetune_rules

PAPER = REPO / "config" / "config.yaml"
DEMO = REPO / "config" / "demo.yaml"


def test_the_finetune_rules_are_one_grid_rule_per_task():
    """Every fine-tuning job is a grid job, the demo's one-cell grids included."""
    grids = ["finetune_grid_xnli", "finetune_grid_ner", "finetune_grid_parsing"]
    assert finetune_rules(xcfg.load(PAPER, DEMO)["finetune"]) == grids
    assert finetune_rules(xcfg.load(PAPER)["finetune"]) == grids
    assert finetune_rules({**xcfg.load(PAPER)["finetune"], "tasks": ["ner"]}) == ["finetune_grid_ner"]


def expected_jobs(cfg: dict, settings: list[str]) -> dict[str, int]:
    """Fine-tuning rule -> its jobs for ``settings``' rows, counted from the config: one per batch
    size of a task's grid, for every pair (NER only where its corpus is there), pretraining seed
    and fine-tuning seed."""
    ft = cfg["finetune"]
    missing = unavailable_ner_targets(cfg, generated_under=f"results/{cfg['run_name']}/testbed"
                                      if "testbed" in cfg else None)
    seeds = len(cfg["seeds"]["pretrain"]) * len(cfg["seeds"]["finetune"])
    out: Counter = Counter()
    for pair in cfg["pairs"]:
        for task in ft["tasks"]:
            if task == "ner" and xcfg.pair_langs(pair)[1] in missing:
                continue
            out[f"finetune_grid_{task}"] += len(cells_by_batch_size(ft[task])) * seeds * len(settings)
    return dict(out)


def checkout(root: Path) -> Path:
    """A directory that is the checkout (every top-level entry linked) without its results, and
    a stand-in for its .venv: this Python and its Snakemake, installed (bootstrap's stamp)."""
    for entry in REPO.iterdir():
        if entry.name not in {"results", "logs", "benchmarks", ".snakemake", ".git", ".venv", ".pytest_cache"}:
            (root / entry.name).symlink_to(entry)
    venv = root.parent / "venv"
    (venv / "bin").mkdir(parents=True)
    for name, run in (("python", ""), ("snakemake", " -m snakemake")):
        (venv / "bin" / name).write_text(f'#!/bin/sh\nexec {sys.executable}{run} "$@"\n')
        (venv / "bin" / name).chmod(0o755)
    (venv / ".xling-installed").touch()
    return venv


def forced(dry_run: str) -> tuple[Counter, Counter]:
    """(rule -> jobs forced, rule -> jobs planned) of a dry run's job list."""
    jobs = re.findall(r"^(?:local)?rule (\w+):\n(.*?)(?=^\S|\Z)", dry_run, re.M | re.S)
    planned = Counter(rule for rule, _ in jobs)
    return Counter(rule for rule, body in jobs if "reason: Forced execution" in body), planned


@pytest.mark.parametrize("overlay,profile", [(None, "slurm"), ("config/demo.yaml", "profiles/local")],
                         ids=["paper", "demo"])
def test_make_refit_forces_every_finetuning_job_of_the_row_and_nothing_else(overlay, profile, tmp_path,
                                                                             monkeypatch):
    root = tmp_path / "checkout"
    root.mkdir()
    venv = checkout(root)
    args = ["make", "--no-print-directory", "refit", "TARGET=table1_row_sep_emb", f"PROFILE={profile}", "ARGS=-n"]
    if overlay:
        args.append(f"CONFIGFILE={overlay}")
    proc = subprocess.run(args, cwd=root, env={**os.environ, "VENV": str(venv)}, capture_output=True, text=True,
                          timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    by_rule, planned = forced(proc.stdout)
    monkeypatch.chdir(root)  # the licensed corpora are looked for where the run would look
    cfg = xcfg.load(PAPER, *([REPO / overlay] if overlay else []))
    expected = expected_jobs(cfg, ["sep_emb"])
    assert set(expected) == set(finetune_rules(cfg["finetune"]))
    assert dict(by_rule) == expected  # every fine-tuning job of the row, nothing else forced
    assert {r: planned[r] for r in expected} == expected  # and the plan has no other fine-tuning job
    assert all(expected.values())


def test_make_refit_without_a_target_says_how_to_name_one(tmp_path):
    root = tmp_path / "checkout"
    root.mkdir()
    venv = checkout(root)
    proc = subprocess.run(["make", "--no-print-directory", "refit"], cwd=root, env={**os.environ, "VENV": str(venv)},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "make refit TARGET=table1_row_sep_emb" in proc.stderr
