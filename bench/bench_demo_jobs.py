"""Benchmark: the wall time of `make demo-full`'s jobs on this machine, each alone and two at once.

A run of the testbed is a sum of jobs: its length on a machine is the jobs' times and how many of
them the machine runs at once without slowing each other. This script takes the jobs exactly as
the workflow plans them (a Snakemake dry run of the config files given: the rule's params,
threads and inputs), runs them outside Snakemake in a scratch folder with the rule's own package
function, and times them:

    python bench/bench_demo_jobs.py --configfile config/demo.yaml config/demo_full.yaml \\
        --repeats 3 --json bench/measured/cpu_demo_full_jobs.json

- **alone**: one pretraining job (Default en-fr, pretraining seed 1), then one fine-tuning job per
  task on its checkpoint, one after another, ``--repeats`` times;
- **two at once**: two pretraining jobs (seeds 1 and 2) started together, then two XNLI
  fine-tuning jobs started together, ``--repeats`` times.

Per job: the wall time of its process, and where it went. A pretraining job's fairseq log gives
the time in training steps (``train_wall``), the validations and the checkpoint saves (each
line's time as it appears in the log, polled every 0.2 s), and the start-up before the first
update; with the updates and tokens it trained, updates/s and tokens/s of the steps. A
fine-tuning job's result.json gives its training and evaluation seconds; the rest of its wall
is start-up (imports, loading the model and the task files). Each figure is min / median / max
over the repeats; ``two_at_once_over_alone`` is the ratio of the medians of a job's wall: 1.0
means the second core runs a second job for free, 2.0 that two jobs at once take as long as one
after the other.

The upstream of the jobs (the binarised data and the task files of the run) must exist: the
script names the command that makes them when they do not. Run it on an otherwise idle machine:
anything else running is a third job.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SETTING, PAIR = "default", "en-fr"
TASKS = ("xnli", "ner", "parsing")
FINETUNE_RULES = ("finetune", "finetune_grid_")
POLL_S = 0.2


# --- the jobs as the workflow plans them ------------------------------------------------------------

def plan(configfiles: list[Path]) -> dict:
    """The run's pretraining jobs of (Default, en-fr, seeds 1 and 2) and its fine-tuning job of
    each task on seed 1, as a dry run plans them: rule, params, threads, input and output."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, ResourceSettings, StorageSettings

    from xling.config import load, validate

    cfg = load(REPO / "config" / "config.yaml", *configfiles)
    validate(cfg)
    run = Path("results") / cfg["run_name"]  # relative: as the rules name their outputs
    targets = [str(run / f"pretrain/{SETTING}/{PAIR}/seed{s}/done.json") for s in (1, 2)]
    with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
        wapi = api.workflow(resource_settings=ResourceSettings(cores=2),
                            config_settings=ConfigSettings(configfiles=configfiles),
                            storage_settings=StorageSettings(), snakefile=REPO / "Snakefile", workdir=REPO)
        # every fine-tuning job of the model: the targets the report needs of it
        finetune_dir = run / f"finetune/{SETTING}/{PAIR}/seed1"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            wapi.dag(DAGSettings(targets={*targets, "all"}, forceall=True)).execute_workflow(pseudo_executor="dryrun")
        jobs = list(wapi._workflow.dag.jobs)
    out: dict = {"run": str(run), "pretrain": {}, "finetune": {}}
    for job in jobs:
        outputs = [str(o) for o in job.output]
        record = {"rule": job.rule.name, "params": dict(job.params.items()), "threads": int(job.threads),
                  "input": {k: (list(map(str, v)) if not isinstance(v, str) else v) for k, v in job.input.items()},
                  "output": outputs}
        if job.rule.name == "pretrain" and outputs[0] in targets:
            out["pretrain"][int(outputs[0].split("/seed")[-1].split("/")[0])] = record
        elif job.rule.name.startswith(FINETUNE_RULES) and outputs[0].startswith(str(finetune_dir) + "/"):
            task = outputs[0][len(str(finetune_dir)) + 1:].split("/")[0]
            out["finetune"].setdefault(task, record)
    missing = [f"pretrain seed {s}" for s in (1, 2) if s not in out["pretrain"]] + \
              [f"finetune {t}" for t in cfg["finetune"]["tasks"] if t not in out["finetune"]]
    if missing:
        raise SystemExit(f"the dry run of {[str(c) for c in configfiles]} plans no {missing}")
    return out


def missing_upstream(planned: dict) -> list[str]:
    """Input files of the planned jobs that no job of this script makes and that do not exist."""
    paths = []
    for rec in [*planned["pretrain"].values(), *planned["finetune"].values()]:
        for key, value in rec["input"].items():
            if key == "checkpoint":
                continue  # the script's own pretraining job gives it
            paths += [value] if isinstance(value, str) else value
    return sorted({p for p in paths if not Path(p).exists()})


# --- running one job ---------------------------------------------------------------------------------

class LogLines:
    """The lines a job appends to a log file, each with the time it was first seen (polled)."""

    def __init__(self, path: Path):
        self.path, self.lines, self._pos = path, [], 0

    def poll(self) -> None:
        if not self.path.exists():
            return
        with open(self.path, "rb") as fh:
            fh.seek(self._pos)
            chunk = fh.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self._pos += len(complete)
        now = time.monotonic()
        self.lines += [(now, line) for line in complete.decode("utf-8", "replace").splitlines()]


def run_process(cmd: list[str], log_path: Path | None, env: dict) -> tuple[float, list, int, str]:
    """Run ``cmd`` to its end: (wall seconds, the log's lines with their times, exit status, output)."""
    watch = LogLines(log_path) if log_path else None
    t0 = time.monotonic()
    with tempfile.TemporaryFile("w+") as output:
        proc = subprocess.Popen(cmd, env=env, stdout=output, stderr=subprocess.STDOUT, text=True, cwd=REPO)
        while proc.poll() is None:
            if watch:
                watch.poll()
            time.sleep(POLL_S)
        wall = time.monotonic() - t0
        if watch:
            watch.poll()
        output.seek(0)
        text = output.read()
    lines = [(t - t0, line) for t, line in watch.lines] if watch else []
    return wall, lines, proc.returncode, text


def job_env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO / "tests"),
                                                          os.environ.get("PYTHONPATH", "")]),
            "XLING_PROGRESS_INTERVAL_S": "600"}


_RECORD = re.compile(r"^\S+ \S+ \| INFO \| (\S+) \| (\{.*\})\s*$")


def pretrain_phases(lines: list[tuple[float, str]], wall: float) -> dict:
    """Where a pretraining job's wall went, from its fairseq log: the time in training steps
    (fairseq's per-epoch ``train_wall``), the rest of fairseq's own clock (validations, checkpoint
    saves, each epoch's data set-up), the start-up before it (the launcher, Python's imports,
    loading the data) and the exit after it (the time each line was first seen, polled)."""
    records = []
    for t, line in lines:
        if (m := _RECORD.match(line)):
            try:
                records.append((t, m.group(1), json.loads(m.group(2))))
            except json.JSONDecodeError:
                continue  # fairseq's own config, printed as a Python dict
    train = [r for _, tag, r in records if tag == "train"]  # one per epoch
    if not train:
        raise ValueError("the job's log has no epoch record")
    updates = int(float(train[-1]["train_num_updates"]))
    steps_s = sum(float(r["train_train_wall"]) for r in train)  # the meter restarts each epoch
    fairseq_s = float(train[-1]["train_wall"])  # fairseq's clock since training began
    done_updates = [0] + [int(float(r["train_num_updates"])) for r in train]
    tokens = sum((b - a) * float(r["train_wpb"]) for a, b, r in zip(done_updates, done_updates[1:], train))
    first = next((t for t, line in lines if "begin training epoch" in line), None)
    done = next((t for t, line in lines if "done training in" in line), None)
    saves = [float(m.group(1)) for _, line in lines if (m := re.search(r"writing took ([\d.]+) seconds", line))]
    source = next(tag for _, tag, _ in records if tag.startswith("valid_"))
    return {"wall_s": wall, "startup_s": first, "fairseq_s": fairseq_s, "steps_s": steps_s,
            "fairseq_besides_steps_s": fairseq_s - steps_s,
            "validations": sum(tag == source for _, tag, _ in records), "saves": len(saves),
            "save_writing_s": sum(saves), "after_training_s": (wall - done) if done is not None else None,
            "updates": updates, "tokens_per_update": tokens / updates,
            "updates_per_s_steps": updates / steps_s, "tokens_per_s_steps": tokens / steps_s,
            "updates_per_s_wall": updates / wall}


def run_pretrain(rec: dict, out: Path, env: dict) -> dict:
    """One pretraining job as its rule's script runs it (``pretrain_job`` with the rule's params)."""
    from xling.pretrain.run import pretrain_job  # noqa: F401 - fails here, not in the child, when missing

    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    p = rec["params"]
    spec = {"data_dir": p["data_dirs"], "done_path": str(out / "done.json"), "setting": p["setting"],
            "model": p["model"], "pretrain": p["pretrain"], "languages": p["languages"], "gpus": 0,
            "seed": p["seed"], "threads": rec["threads"]}
    (out / "spec.json").write_text(json.dumps(spec, default=list))
    wall, lines, rc, text = run_process([sys.executable, "-m", "support.pretrain_job", str(out / "spec.json")],
                                        out / "train.log", env)
    if rc != 0:
        raise SystemExit(f"the pretraining job in {out} failed ({rc}):\n{text[-3000:]}")
    return pretrain_phases(lines, wall)


def run_finetune(rec: dict, checkpoint: Path, out: Path, env: dict) -> dict:
    """One fine-tuning job as its rule's script runs it, on ``checkpoint``."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    spec = {"rule": rec["rule"], "params": rec["params"], "input": {**rec["input"], "checkpoint": str(checkpoint)},
            "outputs": [str(out / f"cell{i}" / "result.json") for i in range(len(rec["output"]))],
            "threads": rec["threads"]}
    (out / "spec.json").write_text(json.dumps(spec, default=list))
    wall, _, rc, text = run_process([sys.executable, __file__, "finetune-job", str(out / "spec.json")], None, env)
    if rc != 0:
        raise SystemExit(f"the fine-tuning job in {out} failed ({rc}):\n{text[-3000:]}")
    result = json.loads(Path(spec["outputs"][0]).read_text())
    timing = result["timing"]
    return {"wall_s": wall, "train_s": timing["train_s"], "eval_s": timing["eval_s"],
            "startup_s": wall - timing["total_s"], "cells": len(spec["outputs"]), "epochs": result["epochs"],
            "train_examples": result["examples"]["train"], "steps": result["steps"]}


def finetune_job(spec_path: Path) -> None:
    """The fine-tuning rule's script, without Snakemake: the child process of :func:`run_finetune`."""
    import torch

    from xling.finetune import FinetuneJob, GridSettings, TaskFiles, run_grid

    spec = json.loads(spec_path.read_text())
    torch.set_num_threads(max(1, int(spec["threads"])))  # as the rule's script does (workflow/scripts/_setup.py)
    i, p = spec["input"], spec["params"]
    files = TaskFiles(train=Path(i["train"]), en_dev=Path(i["en_dev"]), tgt_dev=Path(i["tgt_dev"]),
                      tgt_test=Path(i["tgt_test"]))
    jobs = [FinetuneJob.from_tracked(j) for j in (p["jobs"] if "jobs" in p else [p["job"]])]
    metas = p.get("metas") or [p.get("meta")]
    run_grid(jobs, Path(i["checkpoint"]), Path(i["dictionary"]), Path(i["bpe"]), files,
             [Path(o) for o in spec["outputs"]], metas=metas, stanford_home=i.get("stanford"),
             settings=GridSettings.from_params(p.get("grid")))


def together(*calls):
    """Run the calls at once, each in a thread (each starts its own process): their results."""
    results: list = [None] * len(calls)
    errors: list = []

    def one(i, call):
        try:
            results[i] = call()
        except BaseException as err:  # noqa: BLE001 - re-raised below
            errors.append(err)

    threads = [threading.Thread(target=one, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


# --- the measurement ------------------------------------------------------------------------------------

def spread(values: list[float | None]) -> dict | None:
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"min": min(values), "median": statistics.median(values), "max": max(values), "n": len(values)}


def summarise(runs: list[dict]) -> dict:
    keys = [k for k in runs[0] if isinstance(runs[0][k], (int, float)) or runs[0][k] is None]
    return {k: spread([r.get(k) for r in runs]) for k in keys}


def load_average() -> float:
    return os.getloadavg()[0]


def log_line(text: str) -> None:
    print(text, flush=True)


def measure(planned: dict, scratch: Path, repeats: int, tasks: list[str], log=log_line) -> dict:
    env = job_env()
    pre1, pre2 = planned["pretrain"][1], planned["pretrain"][2]
    alone: dict[str, list] = {"pretrain": [], **{t: [] for t in tasks}}
    pairs: dict[str, list] = {"pretrain": [], "xnli": []}
    load: list[float] = []
    for r in range(repeats):
        load.append(load_average())
        out = scratch / f"alone{r}"
        alone["pretrain"].append(run_pretrain(pre1, out / "pretrain", env))
        log(f"[{r}] pretrain alone: {json.dumps(alone['pretrain'][-1])}")
        checkpoint = out / "pretrain" / "checkpoint_best.pt"
        for task in tasks:
            alone[task].append(run_finetune(planned["finetune"][task], checkpoint, out / task, env))
            log(f"[{r}] {task} alone: {json.dumps(alone[task][-1])}")
    checkpoint = scratch / "alone0" / "pretrain" / "checkpoint_best.pt"
    for r in range(repeats):
        load.append(load_average())
        out = scratch / f"pair{r}"
        got = together(lambda: run_pretrain(pre1, out / "pretrain1", env),
                       lambda: run_pretrain(pre2, out / "pretrain2", env))
        pairs["pretrain"] += got
        log(f"[{r}] two pretraining jobs at once: {json.dumps(got)}")
        if "xnli" in tasks:
            got = together(lambda: run_finetune(planned["finetune"]["xnli"], checkpoint, out / "xnli1", env),
                           lambda: run_finetune(planned["finetune"]["xnli"], checkpoint, out / "xnli2", env))
            pairs["xnli"] += got
            log(f"[{r}] two xnli jobs at once: {json.dumps(got)}")
    result = {"alone": {k: summarise(v) for k, v in alone.items() if v},
              "two_at_once": {k: summarise(v) for k, v in pairs.items() if v},
              "runs": {"alone": alone, "two_at_once": pairs}, "load_average_1min_before_each_block": load}
    result["two_at_once_over_alone"] = {
        k: result["two_at_once"][k]["wall_s"]["median"] / result["alone"][k]["wall_s"]["median"]
        for k in result["two_at_once"]}
    return result


def describe(planned: dict, tasks: list[str]) -> dict:
    """What the timed jobs are: the pretraining recipe and model, each fine-tuning job's cells."""
    p = planned["pretrain"][1]["params"]
    return {"pretrain": {"model": p["model"], "pretrain": p["pretrain"], "threads": planned["pretrain"][1]["threads"]},
            "finetune": {t: {"rule": planned["finetune"][t]["rule"], "cells": len(planned["finetune"][t]["output"]),
                             "threads": planned["finetune"][t]["threads"]} for t in tasks}}


def main(argv=None) -> None:
    if argv is None and len(sys.argv) > 2 and sys.argv[1] == "finetune-job":
        sys.path.insert(0, str(REPO / "src"))
        return finetune_job(Path(sys.argv[2]))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configfile", nargs="+", type=Path, default=[Path("config/demo.yaml"),
                                                                   Path("config/demo_full.yaml")])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tasks", nargs="+", choices=TASKS, default=list(TASKS))
    ap.add_argument("--scratch", type=Path, default=None, help="where the jobs write (default: a temporary folder)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    configfiles = [(REPO / c).resolve() if not c.is_absolute() else c for c in args.configfile]
    planned = plan(configfiles)
    missing = missing_upstream(planned)
    if missing:
        raise SystemExit(f"{len(missing)} input files of the timed jobs are missing ({missing[:3]} ...): make them "
                         f"first with\n  snakemake --profile profiles/local --configfile "
                         f"{' '.join(map(str, args.configfile))} --cores 2 --omit-from pretrain pretrain_mono -- "
                         + " ".join(planned["finetune"][t]["output"][0] for t in args.tasks))
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="bench_demo_jobs_"))
    t0 = time.monotonic()
    result = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "commit": subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                                       text=True).stdout.strip(),
              "configfiles": [str(c) for c in args.configfile], "cpus": os.cpu_count(), "repeats": args.repeats,
              "jobs": describe(planned, args.tasks),
              **measure(planned, scratch, args.repeats, args.tasks)}
    result["seconds"] = time.monotonic() - t0
    print_summary(result)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.json.with_name(args.json.name + ".tmp")
        tmp.write_text(json.dumps(result, indent=1) + "\n")
        tmp.replace(args.json)
    if args.scratch is None:
        shutil.rmtree(scratch, ignore_errors=True)


def _f(s: dict | None, key: str = "median", spec: str = ".1f") -> str:
    return "-" if not s else format(s[key], spec)


def print_summary(result: dict) -> None:
    print(f"{result['cpus']} CPUs, {result['repeats']} repeats; load before each block: "
          + ", ".join(f"{x:.2f}" for x in result["load_average_1min_before_each_block"]))
    for mode in ("alone", "two_at_once"):
        for job, s in result[mode].items():
            line = f"{mode:12s} {job:9s} wall {_f(s['wall_s'], 'min')} / {_f(s['wall_s'])} / {_f(s['wall_s'], 'max')} s"
            if job == "pretrain":
                line += (f"; steps {_f(s['steps_s'])} s, {_f(s['updates_per_s_steps'], spec='.2f')} updates/s, "
                         f"{_f(s['tokens_per_s_steps'], spec=',.0f')} tokens/s; start-up {_f(s['startup_s'])} s, "
                         f"{_f(s['validations'], spec='.0f')} validations, saves and epoch set-ups "
                         f"{_f(s['fairseq_besides_steps_s'])} s, exit {_f(s['after_training_s'])} s")
            else:
                line += (f"; train {_f(s['train_s'])} s, eval {_f(s['eval_s'])} s, start-up {_f(s['startup_s'])} s")
            print(line)
    print("two at once / alone (medians of a job's wall): "
          + ", ".join(f"{k} {v:.2f}" for k, v in result["two_at_once_over_alone"].items()))


if __name__ == "__main__":
    main()
