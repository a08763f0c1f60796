"""A pretraining job starts, finishes and dies cleanly: a stop signal, however it is
sent, leaves no process of the job behind within seconds and a checkpoint the rerun resumes from;
a finished job exits soon after its last update; data-loader workers do not pile up epoch after
epoch."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import torch

from support.pretrain_job import alive, descendants, job_spec, logged_command, run_watched, start, wait_gone
from support.toy_data import write_toy_data
from xling.pretrain import lifecycle
from xling.pretrain.checkpoints import checkpoint_updates
from xling.pretrain.schedule import schedule

# the bound for a killed job on a GPU node
GONE_WITHIN_S = 10.0


def test_kill_descendants_kills_children_and_grandchildren():
    shell = subprocess.Popen(["sh", "-c", "sleep 60 & sleep 60 & wait"])
    deadline = time.monotonic() + 10
    while len(descendants(shell.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    tree = descendants(shell.pid)
    assert lifecycle.kill_descendants(shell.pid) == 2
    assert not alive(tree)
    shell.wait(timeout=10)


# a job's processes, each started by this script in a role: "fairseq-train" and a data-loader worker
# (forked: the trainer's command), what the trainer runs while compiling (a compiler, a Python loading
# the library built), inductor's compile pool (the sidecar, named by its script; a worker of it, whose
# command does not say so) and the compiler the worker runs
FAKE_JOB = """
import subprocess, sys, time
CHILDREN = {
    "launcher": [["trainer", "fairseq-train", "data"]],
    "trainer": [["loader", "fairseq-train", "data"], ["sleep"], ["helper", "cdll"],
                ["sidecar", "torch/_inductor/compile_worker/__main__.py", "--workers=1"]],
    "sidecar": [["worker"]],
    "worker": [["sleep"]],
}
for child in CHILDREN.get(sys.argv[1], []):
    subprocess.Popen(["sleep", "60"] if child == ["sleep"] else [sys.executable, __file__, *child])
time.sleep(60)
"""


def test_inductors_compile_pool_and_compilers_are_told_apart_from_the_jobs_own_processes(tmp_path):
    from support.pretrain_job import pool_side

    script = tmp_path / "fake_job.py"
    script.write_text(FAKE_JOB)
    launcher = subprocess.Popen([sys.executable, str(script), "launcher"])
    try:
        deadline = time.monotonic() + 20
        while len(descendants(launcher.pid)) < 7 and time.monotonic() < deadline:
            time.sleep(0.05)
        procs = descendants(launcher.pid)
        assert len(procs) == 7, [p.cmdline() for p in procs]
        # the role: fake_job.py's argument, or the program's name
        expected = {"trainer": "job", "loader": "job", "sleep": "tool", "helper": "tool", "sidecar": "pool",
                    "worker": "pool"}
        for p in procs:
            cmd = p.cmdline()
            role = cmd[2] if cmd[1:2] == [str(script)] else Path(cmd[0]).name
            assert pool_side(p, launcher.pid) == expected[role], cmd
    finally:
        lifecycle.kill_descendants(launcher.pid)
        launcher.kill()
        launcher.wait()


def test_stop_signals_are_forwarded_once_and_the_old_handlers_come_back():
    before = {sig: signal.getsignal(sig) for sig in lifecycle.STOP_SIGNALS}
    calls = []
    with lifecycle.forwarded_signals(calls.append) as received:
        os.kill(os.getpid(), signal.SIGUSR1)  # SLURM's --signal=USR1@T warning
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
    assert calls == [signal.SIGUSR1] and received == [signal.SIGUSR1]
    assert {sig: signal.getsignal(sig) for sig in lifecycle.STOP_SIGNALS} == before


def test_the_plugin_installs_nothing_outside_a_launched_job(monkeypatch):
    monkeypatch.delenv(lifecycle.PARENT_ENV, raising=False)
    before = signal.getsignal(signal.SIGTERM)
    assert lifecycle.install_rank() is False
    assert signal.getsignal(signal.SIGTERM) is before


# a "rank" as the plugin makes one (install_rank), with a forked child standing for a data-loader
# worker, started by a "launcher" that is then killed outright
RANK = """
import multiprocessing, os, sys, time
os.environ["{env}"] = str(os.getppid())
from xling.pretrain.lifecycle import install_rank
assert install_rank()
worker = multiprocessing.get_context("fork").Process(target=time.sleep, args=(60,))
worker.start()
print(os.getpid(), worker.pid, flush=True)
time.sleep(60)
"""
LAUNCHER = """
import subprocess, sys
rank = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdout=sys.stdout)
rank.wait()
"""


def test_a_rank_and_its_workers_die_with_their_launcher():
    """SIGKILL (an OOM kill, SLURM's last word) leaves the launcher no chance to clean up: the
    kernel tells the rank (PR_SET_PDEATHSIG), which kills its workers."""
    launcher = subprocess.Popen([sys.executable, "-c", LAUNCHER, RANK.format(env=lifecycle.PARENT_ENV)],
                                stdout=subprocess.PIPE, text=True)
    rank_pid, worker_pid = map(int, launcher.stdout.readline().split())
    tree = descendants(launcher.pid)
    assert {p.pid for p in tree} == {rank_pid, worker_pid}
    launcher.kill()
    launcher.wait()
    left, _ = wait_gone(tree, GONE_WITHIN_S)
    assert not left, f"survived their launcher: {left}"


# a "rank" whose daemon thread is inside torch's C++ code (a matrix product releases the GIL) when
# the rank exits, with a worker; {finish}: whether it took its last update, {end}: how it ends
FINISHING_RANK = """
import multiprocessing, os, sys, threading, time
os.environ["{env}"] = str(os.getppid())
import torch
from xling.pretrain import lifecycle
assert lifecycle.install_rank()
worker = multiprocessing.get_context("fork").Process(target=time.sleep, args=(60,), daemon=True)
worker.start()
print(worker.pid, flush=True)
a = torch.randn(300, 300)
def products():
    while True:
        a @ a
threading.Thread(target=products, daemon=True).start()
time.sleep(0.3)
if {finish}:
    lifecycle.last_update_taken()
{end}
"""


@pytest.mark.parametrize("finish,end,status", [
    (True, "print('done training', flush=True)", 0),  # finished: status 0 where CPython would abort
    (True, "raise RuntimeError('the last checkpoint failed')", 1),  # an error: 1, its traceback printed
    (False, "print('stopped early', flush=True)", -signal.SIGABRT),  # CPython's own exit, as it is
], ids=["finished", "error after the last update", "before the last update"])
def test_a_finished_rank_exits_with_status_0_though_a_daemon_thread_is_in_cpp(finish, end, status, tmp_path):
    """At finalisation CPython ends a daemon thread that is in C++ code with pthread_exit,
    and libstdc++ aborts the process ("terminate called without an active exception"). The
    control (no last update) shows the abort happens here; a rank that has trained to the end
    skips it, with status 0, or 1 after an error, and leaves no worker behind."""
    code = FINISHING_RANK.format(env=lifecycle.PARENT_ENV, finish=finish, end=end)
    rank = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    worker = psutil.Process(int(rank.stdout.readline()))
    out, err = rank.communicate(timeout=60)
    assert rank.returncode == status, err[-2000:]
    assert ("terminate called" in err) == (status < 0), err[-2000:]
    if status == 0:
        assert out.split() == ["done", "training"]  # what it printed is flushed
    if status == 1:
        assert "RuntimeError: the last checkpoint failed" in err
    left, _ = wait_gone([worker], 2.0)
    assert not left, "a worker outlived its rank"


def test_fairseq_train_runs_from_its_package_where_no_script_is_found(tmp_path, monkeypatch):
    """Installed with ``pip --target`` (a GPU node's carried wheels on PYTHONPATH), fairseq has no
    fairseq-train beside the interpreter nor on PATH: the launcher runs its entry point with the
    interpreter instead. Where the script is found, the command is as it always was."""
    from xling.pretrain import processes

    python = sys.executable
    beside = tmp_path / "venv" / "bin"
    beside.mkdir(parents=True)
    monkeypatch.setattr(processes.sys, "executable", str(beside / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert processes.resolve_executable(["fairseq-train", "data", "--cpu"]) == [
        str(beside / "python"), "-m", "fairseq_cli.train", "data", "--cpu"]
    (beside / "fairseq-train").write_text("#!/bin/sh\n")
    assert processes.resolve_executable(["fairseq-train", "data"]) == [str(beside / "fairseq-train"), "data"]
    got = subprocess.run([python, "-m", "fairseq_cli.train", "--help"], capture_output=True, text=True, timeout=120)
    assert got.returncode == 0 and "--user-dir" in got.stdout, got.stderr[-2000:]


@pytest.fixture(scope="module")
def toy_data(tmp_path_factory):
    return write_toy_data(tmp_path_factory.mktemp("bin") / "en-fr", ["en", "fr"], n_train=100, seed=3)


def _run_until_checkpoint(spec, out, **popen):
    """Start the job; return it once it has a checkpoint and data-loader workers running."""
    job = start(spec, **popen)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and job.poll() is None:
        # the launcher, fairseq-train and its workers
        if (out / "fairseq" / "checkpoint_last.pt").exists() and len(descendants(job.pid)) >= 2:
            return job
        time.sleep(0.05)
    job.kill()
    pytest.fail(f"no checkpoint and workers in time:\n{job.communicate()[0]}")


STOPS = ["SIGTERM to the launcher", "SIGINT to the process group", "SIGKILL to the launcher"]


def stop_and_resume(data_dir, tmp_path, how: str, gpus: int = 0, pretrain: dict | None = None) -> None:
    """Stop a running job as ``how`` says; no process of it may be left ``GONE_WITHIN_S`` later, its
    checkpoint loads whole, and (after SIGTERM) the rerun resumes there and ends at the full count.
    ``pretrain``: changes to the job's pretrain section (a GPU needs more updates to be caught)."""
    out = tmp_path / "job"
    spec = job_spec(tmp_path / "spec.json", data_dir, out, gpus=gpus, num_workers=2, pretrain=pretrain)
    name, _, target = how.split(" ", 2)
    job = _run_until_checkpoint(spec, out, start_new_session=True)
    tree = [lifecycle.psutil.Process(job.pid), *descendants(job.pid)]
    sig = signal.Signals[name]
    if target == "the process group":  # a terminal's Ctrl-C
        os.killpg(job.pid, sig)
    else:  # `kill <pid>`, SLURM's signal to the job's script
        os.kill(job.pid, sig)
    left, took = wait_gone(tree, GONE_WITHIN_S)
    assert not left, f"{how}: alive after {took:.1f} s: {[p.cmdline()[:3] for p in left]}"
    output = job.communicate(timeout=10)[0]
    if sig != signal.SIGKILL:
        assert job.returncode != 0 and f"stopped by {name}" in output, output

    # what it leaves is a checkpoint torch loads whole, with the updates done so far
    last = out / "fairseq" / "checkpoint_last.pt"
    done_before = checkpoint_updates(last)
    state = torch.load(last, map_location="cpu", weights_only=False)
    assert state["optimizer_history"][-1]["num_updates"] == done_before
    args = json.loads(spec.read_text())
    total = schedule(args["pretrain"], args["model"]).max_updates
    assert 0 < done_before < total
    if name != "SIGTERM":
        return
    # the rerun (Snakemake's, after a requeue) resumes there and ends at the full count
    rerun = start(spec)
    output = rerun.communicate(timeout=300)[0]
    assert rerun.returncode == 0, output
    done = json.loads((out / "done.json").read_text())
    assert done["updates"] == total and done["invocations"] == 2
    assert done["batch"]["device"] == ("cuda" if gpus else "cpu")
    log = (out / "train.log").read_text()
    resumed = re.findall(r"Loaded checkpoint \S+checkpoint_last\.pt \(epoch \d+ @ (\d+) updates\)", log)
    assert [int(n) for n in resumed] == [done_before]


@pytest.mark.slow
@pytest.mark.parametrize("how", STOPS)
def test_a_stopped_job_leaves_no_process_and_a_checkpoint_the_rerun_resumes(toy_data, tmp_path, how):
    stop_and_resume(toy_data, tmp_path, how)


@pytest.mark.slow
def test_a_job_exits_soon_after_its_last_update_and_its_workers_do_not_pile_up(toy_data, tmp_path):
    done = finish_cleanly(toy_data, tmp_path)
    # a CPU job: fp32, whatever the config's precision
    command = done["command"]
    assert "--cpu" in command and "--autocast" not in command and done["graphs_compiled"] == 0


def finish_cleanly(data_dir, tmp_path, gpus: int = 0, workers: int = 2, setting: str = "default",
                   precision: str = "fp16", threads: int = 1, compile_setting="auto",
                   pretrain: dict | None = None) -> dict:
    """fairseq builds a data loader per epoch; with persistent workers each one's workers lived
    on until the garbage collector stalled the job 5 s per worker to end them (at epoch starts,
    checkpoint saves and the exit). Here the job's processes stay at one training and one
    validation loader's workers (inductor's compile pool counted apart: at most a sidecar and a
    worker per core of the job), no process of it outlives it, and the time from the last update
    to the job's end (the last validation, the last checkpoint, the exit) stays a fraction of the
    training time. Returns done.json with the timings, the log (and its path) and the logged command."""
    out = tmp_path / "job"
    spec = job_spec(tmp_path / "spec.json", data_dir, out, setting=setting, gpus=gpus, num_workers=workers,
                    pretrain={"precision": precision, "compile": compile_setting, **(pretrain or {})}, threads=threads)
    run = run_watched(spec, out)
    assert run.job.returncode == 0, run.job.communicate()[0]
    # fairseq-train, and its workers of one training and one validation pass at most
    assert 1 + workers <= run.most <= 1 + 2 * workers, run.most
    # a compiling job's pool: none where it compiles in its own process (one core)
    assert run.most_compile <= (1 + threads if threads > 1 else 0), run.most_compile
    left = run.wait_survivors(GONE_WITHIN_S)
    assert not left, f"outlived the job by {GONE_WITHIN_S} s: {left}"
    watch = run.watch
    updates = watch.times_of("train_inner")
    epochs = sum("begin training epoch" in line for _, line in watch.lines)
    assert len(updates) == json.loads((out / "done.json").read_text())["updates"] and epochs >= 4
    train_s, exit_s = updates[-1] - updates[0], run.ended - updates[-1]
    # the last validation, checkpoint, fairseq's exit and done.json: ~3 s on a loaded 2-core
    # machine, against ~40 s with the stale workers (a fraction of it were the bug on a GPU node,
    # where training takes as long as here and the exit took 122 s)
    assert exit_s < max(10.0, train_s), (exit_s, train_s)
    # no stall between two updates (an epoch start, a validation, a checkpoint between them): one
    # stale loader cost 2 workers x 5 s; a gap in which a new graph was compiled (its first step
    # is logged apart) is the compile's, not a stall
    compiled = [t for t, line in watch.lines if "torch.compile: graph" in line]
    gaps = [b - a for a, b in zip(updates, updates[1:]) if not any(a < t <= b for t in compiled)]
    longest = max(gaps)
    assert longest < max(5.0, 0.25 * train_s), (longest, train_s)
    done = json.loads((out / "done.json").read_text())
    log = (out / "train.log").read_text()
    return {**done, "train_s": train_s, "exit_s": exit_s, "longest_gap_s": longest, "processes": run.most,
            "compile_processes": run.most_compile, "graphs_compiled": len(compiled), "log": log,
            "log_path": out / "train.log",
            "command": logged_command(log)}
