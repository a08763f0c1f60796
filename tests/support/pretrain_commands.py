"""The fairseq-train command lines of pretraining jobs as the ``pretrain`` rules' script starts
them (workflow/scripts/pretrain.py -> :func:`xling.pretrain.run.pretrain_job`), without training:
the launcher is replaced by one that records the commands. Jobs come from
:mod:`support.plan_probe`; a job matched in tokens to a reference (Liu et al.'s windows) measures
toy binarised data written at its data directory.

    python -m support.pretrain_commands OUT.json DEMO_PROBE.json PAPER_PROBE.json

writes the record that tests/test_workflow_planning.py compares every job's commands and params with.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock


class _Launched(Exception):
    pass


@contextmanager
def _workdir(path: Path):
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _toy_data(job: dict) -> None:
    """Binarised toy data in the job's first data directory, for a job that measures its data."""
    from support.toy_data import write_toy_data

    params = job["params"]
    if not params["pretrain"].get("match_tokens"):
        return
    first = Path(params["data_dirs"][0])
    if not (first / "dict.txt").exists():
        write_toy_data(first, list(params["languages"]), n_train=120, n_valid=10, min_len=3, max_len=40, seed=7)


def job_commands(job: dict, gpus: int, workdir: Path) -> list[list[str]]:
    """The argv of every process ``job`` (a plan_probe record) starts with ``gpus`` GPUs visible
    (one argv, or one per CPU rank), run from ``workdir``."""
    import torch

    from xling.pretrain import run

    launched: list[list[str]] = []

    def launch(cmds, *args, **kwargs):
        launched.extend(list(c) for c in cmds)
        raise _Launched

    p = job["params"]
    with ExitStack() as stack:
        stack.enter_context(_workdir(workdir))
        stack.enter_context(mock.patch.object(run, "run_pretraining", launch))
        stack.enter_context(mock.patch.object(run, "free_port", lambda: 29500))
        stack.enter_context(mock.patch.object(torch.cuda, "is_available", lambda: gpus > 0))
        stack.enter_context(mock.patch.object(torch.cuda, "device_count", lambda: gpus))
        _toy_data(job)
        try:
            # the call of workflow/scripts/pretrain.py
            run.pretrain_job(
                data_dir=[Path(d) for d in p["data_dirs"]],
                done_path=job["done"],
                setting=dict(p["setting"]),
                model=dict(p["model"]),
                pretrain=dict(p["pretrain"]),
                languages=list(p["languages"]),
                gpus=gpus,
                seed=int(p["seed"]),
                threads=int(job["threads"]),
                job_log=None,
            )
        except _Launched:
            pass
    return launched


def record(probes: dict[str, dict], workdir: Path) -> dict:
    """``{config: {done: {"tracked": ..., "commands": {gpus: [argv as one string, ...]}}}}``, with
    no GPU (the demo's jobs) and with the GPUs the job asks for (the paper's); the plugin's
    directory, which depends on the checkout, as ``<user-dir>``."""
    from xling.pretrain.names import USER_DIR

    out: dict = {}
    for name, probe in probes.items():
        out[name] = {}
        for job in probe["jobs"]:
            commands = {}
            for gpus in sorted({0, job["gpus"]}):
                argvs = job_commands(job, gpus, workdir)
                commands[str(gpus)] = [" ".join(argv).replace(USER_DIR, "<user-dir>") for argv in argvs]
            out[name][job["done"]] = {"tracked": job["tracked"], "commands": commands}
    return out


def main(argv: list[str]) -> int:
    import tempfile

    out, demo, paper = argv
    probes = {name: json.loads(Path(p).read_text(encoding="utf-8")) for name, p in (("demo", demo), ("paper", paper))}
    with tempfile.TemporaryDirectory() as tmp:
        data = record(probes, Path(tmp))
    Path(out).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
