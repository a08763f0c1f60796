"""The steps of bench/gpu_check.sh written in Python: the machine's description, the whole
pretraining jobs of its second part, each part's JSON and the one-screen summary.

    python bench/gpu_check.py env OUT                       # OUT/env.json
    python bench/gpu_check.py jobs RAW --device cuda --seconds 150
    python bench/gpu_check.py record OUT PART STATUS SECONDS [--raw RAW] [--note TEXT] [--estimate S]
    python bench/gpu_check.py tests RAW JUNIT_XML           # pytest's junit report as JSON
    python bench/gpu_check.py workflow RAW LOG RESULTS       # make demo GPUS=1: its jobs, Table 1
    python bench/gpu_check.py merge-rows RAW ROWS.json ...  # the grid's rows, one benchmark run each; prints how many
    python bench/gpu_check.py merge-runs RAW RUN.json ...   # the pretraining A/Bs, one run each; prints how many
    python bench/gpu_check.py rows-from-log LOG OUT --device NAME   # a cut grid part's rows, from its log
    python bench/gpu_check.py summary OUT [PART ...]         # OUT/summary.txt; exit status 1 on FAIL

Every part's JSON (``OUT/<part>.json``) carries the machine (device, torch, CUDA, Python), the
commit (``COMMIT``, else git's), the date, the part's status (ok, failed, timeout, skipped), its
seconds and its estimate, beside its numbers as the benchmark wrote them: what goes into
bench/measured/ (``--rate-from`` and ``--finetune-rate-from`` of xling.cluster.budget read
pretrain.json and grid.json as they are)."""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the test support: the rule's job in its own process
PARTS = ("tests", "workflow", "pretrain", "ab", "grid", "jobs")  # in the order of their value
# the targets on one H100 (the issue's): the summary marks each number against its target
GOALS = {"tokens_per_s": 700_000, "mfu": 0.30, "ratio": 0.9, "grid_cell_examples_per_s": {4: 1200, 8: 2000},
         "exit_s": 10.0}
GONE_WITHIN_S = 10.0


def write_json(path: Path, record: dict) -> None:
    """Whole or not at all: a temp file, then a rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=1, default=str) + "\n")
    tmp.replace(path)


def read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def commit() -> str:
    if os.environ.get("COMMIT"):
        return os.environ["COMMIT"]
    got = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    return got.stdout.strip() if got.returncode == 0 else "unknown (set COMMIT=<hash> in the command)"


def environment() -> dict:
    """The machine and the software the parts ran with; each import that fails says so."""
    import torch

    env = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": commit(),
           "python": platform.python_version(), "executable": sys.executable, "torch": torch.__version__,
           "cuda": torch.version.cuda, "cuda_available": torch.cuda.is_available(), "cpus": os.cpu_count(),
           "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"}
    if torch.cuda.is_available():
        env["gpu_memory_gb"] = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
    # versions as installed (not imported: seconds each), carried or the node's own
    for name in ("numpy", "fairseq-fixed", "triton", "transformers", "hydra-core", "omegaconf", "jsonschema",
                 "sacremoses", "faiss-cpu", "seqeval", "psutil", "pytest", "pytest-timeout"):
        try:
            env[name] = md.version(name)
        except md.PackageNotFoundError:
            env[name] = "MISSING"
    try:  # fairseq's compiled data utilities (the prebuilt wheel's, or built on the node)
        from fairseq.data import data_utils_fast, token_block_utils_fast  # noqa: F401

        env["fairseq_extensions"] = "import"
    except Exception as err:  # noqa: BLE001
        env["fairseq_extensions"] = f"FAIL: {type(err).__name__}: {err}"[:300]
    from xling.pretrain.compiling import compile_threads

    env["compile_threads_of_a_job_with_8_cores"] = compile_threads({"OMP_NUM_THREADS": "8"})
    return env


# --- part 2: whole pretraining jobs as the rule runs them ------------------------------------------

def job_record(run, out: Path, workers: int, threads: int, stopped_at: float | None, started: float) -> dict:
    """What one watched job did (support.pretrain_job.Watched): its end, its processes, its log."""
    from support.pretrain_job import logged_command
    from xling.pretrain.checkpoints import checkpoint_updates

    watch = run.watch
    lines = [line for _, line in watch.lines]
    updates = watch.times_of("train_inner")
    compiled = [t for t, line in watch.lines if "torch.compile: graph" in line]
    gaps = [b - a for a, b in zip(updates, updates[1:]) if not any(a < t <= b for t in compiled)]
    at_exit = run.survivors()
    left = run.wait_survivors(GONE_WITHIN_S, since=stopped_at)
    output = run.job.communicate()[0] or ""
    log = (out / "train.log").read_text(errors="replace") if (out / "train.log").exists() else ""
    try:
        command = logged_command(log)
    except ValueError:
        command = []
    done = read_json(out / "done.json")
    last = out / "fairseq" / "checkpoint_last.pt"
    rec = {
        "rc": run.job.returncode, "workers": workers, "threads": threads,
        "wall_s": round(run.ended - started, 1), "updates_logged": len(updates),
        "epochs": sum("begin training epoch" in line for line in lines),
        "first_update_after_s": round(updates[0] - started, 1) if updates else None,
        "train_s": round(updates[-1] - updates[0], 1) if len(updates) > 1 else None,
        "exit_s": round(run.ended - updates[-1], 1) if updates and stopped_at is None else None,
        "longest_gap_s": round(max(gaps), 2) if gaps else None,
        "most_processes": run.most, "most_compile_processes": run.most_compile, "processes_ever": len(run.seen),
        "graphs_compiled": len(compiled), "compile_lines": [line[-200:] for line in lines if "torch.compile" in line],
        "precision_options": command[command.index("--autocast"):command.index("--autocast") + 2]
        if "--autocast" in command else [],
        "survivors_at_exit": at_exit, "survivors_after_10s": left,
        "checkpoint_updates": checkpoint_updates(last) if last.exists() else None,
        "done": done, "first_error": next((line[-300:] for line in lines if "Traceback" in line or "Error" in line),
                                          None),
        "launcher_output_tail": output[-1500:], "log_tail": lines[-20:],
    }
    if stopped_at is not None:
        rec["stopped_after_s"] = round(stopped_at - started, 1)
        rec["exit_after_signal_s"] = round(run.ended - stopped_at, 1)
        rec["stopped_message"] = "stopped by SIGTERM" in output
    return rec


def run_jobs(raw: Path, device: str, seconds: float) -> dict:
    """The rule's job (bf16, 4 loader workers; on a GPU compiled, with 8 cores for its compile
    pool: auto leaves a model this small eager) and, beside it, an fp16 job stopped by SIGTERM
    once it has a checkpoint and workers; a job still running when ``seconds`` are up is stopped
    too (and its record says so)."""
    from support.pretrain_job import descendants, job_spec, run_watched
    from support.toy_data import write_toy_data
    from xling.pretrain.schedule import schedule

    end = time.monotonic() + seconds
    cuda = device == "cuda"
    root = Path(tempfile.mkdtemp(prefix="gpu_check_jobs_"))
    data = write_toy_data(root / "bin" / "en-fr", ["en", "fr"], n_train=100, seed=3)
    result: dict = {"jobs": {}}
    lock = threading.Lock()

    def one(name, pretrain, workers, threads, stop_at_checkpoint):
        out = root / name
        spec = job_spec(root / f"{name}.json", data, out, gpus=1 if cuda else 0, num_workers=workers,
                        pretrain=pretrain, threads=threads)
        stopped: list[float] = []

        def stop(job, watch):
            ready = (out / "fairseq" / "checkpoint_last.pt").exists() and len(descendants(job.pid)) >= 2
            if not stopped and ((stop_at_checkpoint and ready) or time.monotonic() > end):
                os.kill(job.pid, signal.SIGTERM)  # as scancel or `kill <pid>`: the launcher passes it on
                stopped.append(time.monotonic())

        started = time.monotonic()
        run = run_watched(spec, out, stop=stop)
        rec = job_record(run, out, workers, threads, stopped[0] if stopped else None, started)
        spec_args = json.loads(spec.read_text())
        rec["max_updates"] = schedule(spec_args["pretrain"], spec_args["model"]).max_updates
        rec["pretrain"] = {k: spec_args["pretrain"][k] for k in ("precision", "compile", "max_epoch")}
        rec["checks"] = checks(rec, stopped_by_us=bool(stopped) and stop_at_checkpoint, cut=bool(stopped)
                               and not stop_at_checkpoint)
        with lock:  # the two jobs' threads write one file
            result["jobs"][name] = rec
            write_json(raw, result)
        print(f"{name}: " + json.dumps({k: rec[k] for k in ("rc", "updates_logged", "exit_s", "most_processes",
                                                             "most_compile_processes", "graphs_compiled",
                                                             "survivors_after_10s", "checks")}), flush=True)

    # both at once (each watched in its own thread, each its own process tree): the rule's job (a GPU
    # runs its 60 updates in seconds, the CPU's check a shorter one) and the one stopped by SIGTERM
    with ThreadPoolExecutor(2) as pool:
        jobs = [pool.submit(one, "bf16_job", {"precision": "bf16", "compile": True if cuda else "auto",
                                              "max_epoch": 6 if cuda else 2},
                            workers=4 if cuda else 1, threads=8 if cuda else 1, stop_at_checkpoint=False),
                pool.submit(one, "fp16_sigterm_job", {"precision": "fp16", "max_epoch": 30 if cuda else 3},
                            workers=2 if cuda else 1, threads=1, stop_at_checkpoint=True)]
        for job in jobs:
            job.result()
    return result


def checks(rec: dict, stopped_by_us: bool, cut: bool) -> dict:
    """The part's claims, each true or false: a job trains to its end (or, stopped by SIGTERM,
    says so and keeps a checkpoint), exits within 10 s of its last update, leaves no process."""
    out = {"no_process_left_10s_after": not rec["survivors_after_10s"],
           "no_compile_fallback": not any("torch.compile failed" in line for line in rec["compile_lines"])}
    if stopped_by_us:
        out["stopped_with_message"] = bool(rec.get("stopped_message")) and rec["rc"] != 0
        out["checkpoint_kept"] = bool(rec["checkpoint_updates"])
    elif cut:
        out["finished_in_time"] = False
    else:
        out["trained_to_the_end"] = rec["rc"] == 0 and bool(rec["done"]) and rec["done"].get("updates") == rec[
            "max_updates"]
        out["exits_within_10s_of_its_last_update"] = rec["exit_s"] is not None and rec["exit_s"] <= GOALS["exit_s"]
    return out


# --- the parts' JSON and the summary ---------------------------------------------------------------

def junit_name(nodeid: str) -> str:
    """A pytest node id as the junit report names its case: tests/test_a.py::t[x] -> tests.test_a::t[x]."""
    path, _, rest = nodeid.partition("::")
    return f"{path.removesuffix('.py').replace('/', '.')}::{rest}"


def tests_record(junit: Path, running: Path | None = None) -> dict:
    """pytest's junit report: counts and each test's outcome (what ran before the time ran out).
    Every case is named. pytest writes a case with no class or name for each test whose call an
    interrupt cut (its setup opened the case; no call report named it): ``running`` (the node ids
    tests/support/running_test.py kept of the tests started and not finished; several under
    pytest-xdist) names them, and they count as cut, not failed; a running test the report has no
    case for at all is added as cut. A nameless case left with no such id takes its file and line,
    else its place in the report, and counts as an error (nothing was tested under no name)."""
    if not junit.exists():
        return {"error": f"no report at {junit} (pytest did not finish its session)"}
    testcases = list(ET.parse(junit).getroot().iter("testcase"))
    named = {f"{c.get('classname')}::{c.get('name')}" for c in testcases if c.get("classname") and c.get("name")}
    lines = running.read_text().split() if running is not None and running.is_file() else []
    cut = [junit_name(n) for n in lines if junit_name(n) not in named]  # a test that finished cut nothing
    cases = []
    for i, case in enumerate(testcases):
        outcome = "passed"
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
                message = (node.get("message") or "")[:300]
                break
        else:
            message = ""
        classname, name = case.get("classname"), case.get("name")
        if classname and name:
            test = f"{classname}::{name}"
        elif cut and outcome == "passed":
            test, outcome = cut.pop(0), "cut"
            message = "running when the session was interrupted (at the part's limit)"
        else:
            where = ":".join(filter(None, [case.get("file"), case.get("line")]))
            test = f"unnamed case {i + 1} of the report" + (f" ({where})" if where else "")
            if outcome == "passed":  # nothing was tested under no name
                outcome, message = "error", message or "a case with no test's name"
        cases.append({"test": test, "outcome": outcome, "seconds": float(case.get("time") or 0),
                      "message": message})
    cases += [{"test": test, "outcome": "cut", "seconds": 0.0,
               "message": "running when the session was interrupted (at the part's limit); no case in the report"}
              for test in cut]
    counts = {k: sum(c["outcome"] == k for c in cases) for k in ("passed", "failed", "error", "skipped", "cut")}
    return {"counts": counts, "cases": cases}


def tests_with(rec: dict, *outcomes: str) -> list[str]:
    """The tests of a tests part's record whose outcome is one of ``outcomes``, in the report's order."""
    return [c["test"] for c in rec["cases"] if c["outcome"] in outcomes]


ROW_LINE = re.compile(
    r"^(?P<task>\w+)\s+batch\s+(?P<batch>\d+) x (?P<cells>\d+) cells \((?P<settings>[\w-]+)\): grid\s+"
    r"(?P<grid>[\d.]+) cell-ex/s \(min (?P<min>[\d.]+), max (?P<max>[\d.]+);.*?separate jobs\s+"
    r"(?P<one>[\d.]+)\s+best single\s+(?P<single>[\d.]+)")


def rows_from_log(log: Path, device: str) -> dict:
    """The rows bench/bench_finetune.py printed (one line each) as its ``--json`` holds them: what
    is left of a grid part cut before it wrote its JSON. Each row says the line it came from."""
    rows = []
    with open(log, encoding="utf-8", errors="replace", newline="") as fh:  # progress bars' \r stay in their line
        text = fh.read()
    for n, line in enumerate(text.split("\n"), 1):
        m = ROW_LINE.match(line)
        if not m:
            continue
        grid = float(m["grid"])
        rows.append({"task": m["task"], "batch_size": int(m["batch"]), "cells": int(m["cells"]),
                     "settings": m["settings"], "device": device,
                     "examples_per_s": {"grid": grid, "one_cell": float(m["one"]), "single_best": float(m["single"])},
                     "blocks": {"grid": {"min": float(m["min"]), "median": grid, "max": float(m["max"])}},
                     "source": f"{log.name} line {n}"})
    return {"device": device, "rows": rows}


STEPS_LINE = re.compile(r"(\d+) of (\d+) steps \(\d+%\) done")
PLANNED_LINE = re.compile(r"^total\s+(\d+)\s*$", re.M)
FAILED_RULE = re.compile(r"Error in rule (\w+)")
WORKFLOW_FILES = {"table1": "table1.md", "compute_ledger": "compute.md"}


def workflow_record(log: Path, results: Path) -> dict:
    """The workflow part (``make demo GPUS=1``) from Snakemake's log: the jobs done of the jobs
    planned (a dry run: the jobs it planned), the rules that failed; Table 1 and the compute
    ledger of the run's report (``results``), as text (a window returns 8 files at most)."""
    text = log.read_text(errors="replace") if log.exists() else ""
    steps = STEPS_LINE.findall(text)
    planned = PLANNED_LINE.findall(text)
    rec: dict = {"dry_run": "This was a dry-run" in text,
                 "jobs_done": int(steps[-1][0]) if steps else 0,
                 "jobs_planned": int(steps[-1][1]) if steps else (int(planned[-1]) if planned else None),
                 "failed_rules": sorted(set(FAILED_RULE.findall(text)))}
    for key, name in WORKFLOW_FILES.items():
        report = results / "report" / name
        rec[key] = report.read_text() if report.is_file() else None
    return rec


def merge_runs(raw: Path, files: list[Path]) -> dict:
    """The A/B part's result: each benchmark run's JSON (its switches in ``ab`` and ``batch``), in
    order; a run that wrote nothing adds none."""
    merged = {"runs": [rec for rec in map(read_json, files) if rec is not None]}
    write_json(raw, merged)
    return merged


def merge_rows(raw: Path, files: list[Path]) -> dict:
    """The grid part's result: the rows of one benchmark run per (task, batch size), in order; a run
    that wrote nothing adds none."""
    merged: dict = {"rows": []}
    for f in files:
        rec = read_json(f)
        if rec is None:
            continue
        merged.update({k: v for k, v in rec.items() if k != "rows"})
        merged["rows"] += rec.get("rows", [])
    write_json(raw, merged)
    return merged


def record(out: Path, part: str, status: str, seconds: float, raw: Path | None, note: str, estimate: float | None
           ) -> dict:
    """The part's JSON: its result as the benchmark wrote it (so that ``python -m
    xling.cluster.budget --rate-from pretrain.json`` and ``--finetune-rate-from grid.json`` read
    it as they read the benchmarks' own), with the check's fields beside it."""
    env = read_json(out / "env.json") or {}
    result = read_json(raw) if raw else None
    if result is None and raw:
        note = (note + "; " if note else "") + f"no result written ({raw.name})"
    rec = {**(result or {}), "part": part, "status": status, "seconds": round(seconds, 1), "estimate_s": estimate,
           "note": note, "has_result": result is not None}
    for key in ("device", "torch", "cuda", "python", "commit", "date"):
        rec.setdefault(key, env.get(key))  # a benchmark's own device and torch stay
    write_json(out / f"{part}.json", rec)
    return rec


def _fmt(value, spec=",.0f") -> str:
    return "-" if value is None else format(value, spec)


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _mark(value, goal) -> str:
    return "" if value is None or goal is None else (" (goal met)" if value >= goal else f" (goal {goal:,})")


def verdict(out: Path, parts: list[str]) -> tuple[bool, list[str]]:
    """PASS when every part asked for ran and passed (a skipped part is said, not failed) and no
    GPU test and no job check failed; the reasons otherwise."""
    why, skipped = [], []
    for part in parts:
        rec = read_json(out / f"{part}.json")
        if rec is None:
            why.append(f"{part}: no record")
            continue
        if rec["status"] == "skipped":
            skipped.append(part)
        elif rec["status"] != "ok":
            why.append(f"{part} {rec['status']}" + (f" ({rec['note']})" if rec.get("note") else ""))
        if part == "tests" and rec.get("counts"):
            bad = [t.split("::")[-1] for t in tests_with(rec, "failed", "error")]
            if bad:
                why.append(f"{len(bad)} GPU test(s) failed: {', '.join(bad[:4])}" + (" ..." if len(bad) > 4 else ""))
            cut = [t.split("::")[-1] for t in tests_with(rec, "cut")]
            if cut:
                why.append(f"cut at the limit: {', '.join(cut)}")
        if part == "jobs":
            for name, job in rec.get("jobs", {}).items():
                failed = [k for k, v in job.get("checks", {}).items() if not v]
                if failed:
                    why.append(f"jobs: {name} {failed}")
    return not why, why + ([f"skipped: {', '.join(skipped)}"] if skipped and why else [])


def summary(out: Path, parts: list[str] | None = None) -> tuple[str, bool]:
    parts = list(parts or PARTS)
    env = read_json(out / "env.json") or {}
    ok, why = verdict(out, parts)
    skipped = [p for p in parts if (read_json(out / f"{p}.json") or {}).get("status") == "skipped"]
    lines = [("PASS" if ok else "FAIL") + ": " + ("; ".join(why) if why else
             f"{len(parts) - len(skipped)} part(s) passed" + (f", skipped: {', '.join(skipped)}" if skipped else "")),
             f"GPU CHECK {env.get('date', '?')} commit {str(env.get('commit', '?'))[:12]}: {env.get('device', '?')}, "
             f"torch {env.get('torch', '?')} CUDA {env.get('cuda', '-')}, Python {env.get('python', '?')}, "
             f"fairseq {env.get('fairseq-fixed', '?')} (extensions {env.get('fairseq_extensions', '?')})"]
    cuda = env.get("device", "cpu") != "cpu"
    for part in parts:
        rec = read_json(out / f"{part}.json")
        if rec is None:
            lines.append(f"{part.upper()}: no record (the check ended before it)")
            continue
        head = f"{part.upper()} [{rec['status']}, {rec['seconds']} s of ~{rec.get('estimate_s')} s]"
        if rec.get("note"):
            head += f" {rec['note']}"
        lines.append(head)
        res = rec if rec.get("has_result") else {}
        if part == "pretrain" and res:
            t, s = res["tokens_per_s"], res["stats"]
            mfu, mfu_plain = res.get("mfu"), res.get("mfu_plain")
            agree = res.get("agreement", {})
            lines.append(
                f"  b{res['batch']} x {res['model']['tokens_per_sample']}, {res['vocab_rows']} rows, "
                f"{res['precision']}, compile {res['compile']}: fairseq {_fmt(t['fairseq'])} tok/s "
                f"[{_fmt(s['fairseq']['min'])}-"
                f"{_fmt(s['fairseq']['max'])}]{_mark(t['fairseq'], GOALS['tokens_per_s'] if cuda else None)}, plain "
                f"{_fmt(t['plain'])} [{_fmt(s['plain']['min'])}-{_fmt(s['plain']['max'])}]")
            ratio = res["ratio_fairseq_over_plain"]
            lines.append(
                f"  ratio {ratio:.3f} (blocks {min(res['round_ratios']):.3f}-{max(res['round_ratios']):.3f})"
                f"{_mark(ratio, GOALS['ratio'] if cuda else None)}; MFU "
                f"{_pct(mfu)}{_mark(mfu, GOALS['mfu'] if cuda else None)} (plain {_pct(mfu_plain)}); peak "
                f"{_fmt(res.get('peak_memory_gb'), '.1f')} GB; first pass {res['warmup']['first_steps_s']}")
            if "transformers" in t:
                lines.append(f"  transformers (BertModel, SDPA) {_fmt(t['transformers'])} tok/s, fairseq / it "
                             f"{res['ratio_fairseq_over_transformers']:.3f}, MFU {_pct(res.get('mfu_transformers'))}")
            if agree:
                lines.append("  engines' losses, same weights: " + "; ".join(
                    f"{k} " + " / ".join(f"{v['mean_loss'][e]:.4f}" for e in v["mean_loss"])
                    for k, v in agree.items() if isinstance(v, dict) and "mean_loss" in v))
        elif part == "workflow" and res:
            lines.append(f"  {res.get('jobs_planned')} jobs planned (a dry run: none run)" if res.get("dry_run") else
                         f"  {res.get('jobs_done')} of {res.get('jobs_planned')} jobs done"
                         + (f"; FAILED rules: {res['failed_rules']}" if res.get("failed_rules") else ""))
            if res.get("table1"):  # the run's Table 1, as its report wrote it
                lines += [f"  {line}" for line in res["table1"].splitlines() if line.startswith("|")]
        elif part == "ab" and res:
            for run in res.get("runs", []):
                t = run["tokens_per_s"]
                switches = ", ".join(f"{k} {v}" for k, v in run.get("ab", {}).items()) + f", batch {run['batch']}"
                lines.append(f"  {switches}: " + ", ".join(f"{e} {_fmt(t[e])}" for e in t)
                             + f" tok/s; MFU {_pct(run.get('mfu'))}; engines agree {run['agreement']['ok']}")
        elif part == "jobs" and res:
            for name, job in res.get("jobs", {}).items():
                if "skipped" in job:
                    lines.append(f"  {name}: skipped ({job['skipped']})")
                    continue
                failed = [k for k, v in job["checks"].items() if not v]
                lines.append(
                    f"  {name}: rc {job['rc']}, {job['updates_logged']} updates, exit {job['exit_s']} s, "
                    f"{job['most_processes']} procs + {job['most_compile_processes']} compile, "
                    f"{job['graphs_compiled']} graphs, {job['precision_options'] or 'fp32'}; "
                    + ("all checks pass" if not failed else f"FAILED: {failed}"))
        elif part == "grid" and res:
            for row in res.get("rows", []):
                e = row["examples_per_s"]
                goal = GOALS["grid_cell_examples_per_s"].get(row["batch_size"]) if cuda and row["task"] == "xnli" \
                    else None
                lines.append(
                    f"  {row['task']} b{row['batch_size']} x{row['cells']} {row['settings']}: grid {_fmt(e['grid'])} "
                    f"cell-ex/s{_mark(e['grid'], goal)}, jobs of one cell {_fmt(e['one_cell'])}, single "
                    f"{_fmt(e['single_best'])}; peak {_fmt(row.get('peak_memory_gb'), '.2f')} GiB, "
                    f"{_fmt(row.get('memory_after_release_gb'), '.2f')} GiB left once freed")
        elif part == "tests" and res:
            c = res.get("counts")
            if c:
                bad, cut = tests_with(res, "failed", "error"), tests_with(res, "cut")
                lines.append(f"  {c['passed']} passed, {c['failed']} failed, {c['error']} errors, {c['skipped']} "
                             f"skipped, {c.get('cut', 0)} cut at the limit" + (f"; FAILED: {bad[:6]}" if bad else "")
                             + (f"; CUT: {cut}" if cut else ""))
            else:
                lines.append(f"  {res.get('error')}")
    text = "\n".join(lines) + "\n"
    (out / "summary.txt").write_text(text)
    return text, ok


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    sub.add_parser("env").add_argument("out", type=Path)
    j = sub.add_parser("jobs")
    j.add_argument("raw", type=Path)
    j.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    j.add_argument("--seconds", type=float, default=150)
    r = sub.add_parser("record")
    r.add_argument("out", type=Path)
    r.add_argument("part", choices=PARTS)
    r.add_argument("status", choices=["ok", "failed", "timeout", "skipped"])
    r.add_argument("seconds", type=float)
    r.add_argument("--raw", type=Path)
    r.add_argument("--note", default="")
    r.add_argument("--estimate", type=float)
    t = sub.add_parser("tests")
    t.add_argument("raw", type=Path)
    t.add_argument("junit", type=Path)
    t.add_argument("--running", type=Path, help="the node id of the test that started last (tests/conftest.py)")
    w = sub.add_parser("workflow")
    w.add_argument("raw", type=Path)
    w.add_argument("log", type=Path)
    w.add_argument("results", type=Path, help="the run's results/<run> folder")
    mr = sub.add_parser("merge-runs")
    mr.add_argument("raw", type=Path)
    mr.add_argument("files", type=Path, nargs="*")
    fl = sub.add_parser("rows-from-log")
    fl.add_argument("log", type=Path)
    fl.add_argument("out", type=Path)
    fl.add_argument("--device", required=True)
    m = sub.add_parser("merge-rows")
    m.add_argument("raw", type=Path)
    m.add_argument("files", type=Path, nargs="*")
    sm = sub.add_parser("summary")
    sm.add_argument("out", type=Path)
    sm.add_argument("parts", nargs="*", choices=PARTS)
    args = ap.parse_args(argv)
    if args.what == "env":
        env = environment()
        write_json(args.out / "env.json", env)
        print(json.dumps(env))
    elif args.what == "jobs":
        run_jobs(args.raw, args.device, args.seconds)
    elif args.what == "record":
        record(args.out, args.part, args.status, args.seconds, args.raw, args.note, args.estimate)
    elif args.what == "tests":
        write_json(args.raw, tests_record(args.junit, args.running))
    elif args.what == "merge-rows":
        print(len(merge_rows(args.raw, args.files)["rows"]))  # what the part's line reports
    elif args.what == "workflow":
        write_json(args.raw, workflow_record(args.log, args.results))
    elif args.what == "merge-runs":
        print(len(merge_runs(args.raw, args.files)["runs"]))
    elif args.what == "rows-from-log":
        write_json(args.out, rows_from_log(args.log, args.device))
    else:
        text, ok = summary(args.out, args.parts)
        print(text, end="")
        sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
