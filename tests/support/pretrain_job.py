"""A pretraining job as the ``pretrain`` rule runs it (:func:`xling.pretrain.run.pretrain_job`: the
real fairseq-train with the plugin), in a process of its own, and what a test watches of it: the
processes it started and the lines of fairseq's log as they arrive.

``python -m support.pretrain_job SPEC.json`` (with tests/ on the path) runs the job a spec file
describes; :func:`job_spec` writes one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from support.toy_data import TINY_MODEL, TINY_PRETRAIN

TESTS = Path(__file__).resolve().parents[1]
# 10 updates per validation, 60 in all, a checkpoint at each validation, a log line per update;
# on the toy data (100 sentences a language) fairseq starts a new epoch (and data loader) every
# ~11 updates, so a job goes through several
JOB_MODEL = dict(TINY_MODEL, layers=2, dim=32, ffn_dim=64, tokens_per_sample=32)
JOB_PRETRAIN = dict(TINY_PRETRAIN, batch_size_per_gpu=8, streams_per_epoch_per_gpu=80, max_epoch=6,
                    save_interval_updates=10, log_interval=1, precision="fp16")
SETTINGS = {"default": {"separate": {"embeddings": False, "layers": 0}},
            "sep_emb": {"separate": {"embeddings": True, "layers": 0}}}


def job_spec(path: Path, data_dir: Path, out_dir: Path, setting: str = "default", gpus: int = 0,
             num_workers: int = 0, pretrain: dict | None = None, model: dict | None = None, threads: int = 1) -> Path:
    """Write the arguments of one pretrain_job to ``path`` (JSON). ``threads``: the job's cores."""
    spec = {"data_dir": str(data_dir), "done_path": str(Path(out_dir) / "done.json"),
            "setting": SETTINGS[setting], "model": {**JOB_MODEL, **(model or {})},
            "pretrain": {**JOB_PRETRAIN, **(pretrain or {})}, "languages": ["en", "fr"], "gpus": gpus,
            "seed": 1, "threads": threads, "num_workers": num_workers}
    path.write_text(json.dumps(spec))
    return path


def start(spec: Path, **popen) -> subprocess.Popen:
    """The job in a new Python process (its launcher), as Snakemake starts a rule's script."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-m", "support.pretrain_job", str(spec)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen)


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    """Those still running (a zombie is dead: only its exit status is left for a parent to read)."""
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def wait_gone(procs: list[psutil.Process], timeout: float) -> tuple[list[psutil.Process], float]:
    """Wait until none of ``procs`` runs or ``timeout`` passed; (those left, seconds waited)."""
    t0 = time.monotonic()
    while (left := alive(procs)) and time.monotonic() - t0 < timeout:
        time.sleep(0.05)
    return left, time.monotonic() - t0


class LogWatch:
    """The lines fairseq appends to a log file, each with the monotonic time it was first seen."""

    def __init__(self, path: Path):
        self.path, self.lines, self._pos = Path(path), [], 0

    def poll(self) -> list[tuple[float, str]]:
        if self.path.exists():
            with open(self.path, "rb") as fh:
                fh.seek(self._pos)
                chunk = fh.read()
            complete = chunk[: chunk.rfind(b"\n") + 1]  # a line still being written waits
            self._pos += len(complete)
            now = time.monotonic()
            self.lines += [(now, line) for line in complete.decode("utf-8", "replace").splitlines()]
        return self.lines

    def times_of(self, tag: str) -> list[float]:
        return [t for t, line in self.lines if f"| {tag} |" in line]


TRAINER = ("fairseq-train", "fairseq_cli.train")  # in the trainer's command, and its forked loader workers


def pool_side(proc: psutil.Process, root: int) -> str:
    """Which of a job's processes ``proc`` is (``root``: the job's launcher). ``"job"``: the trainer
    and its data-loader workers (forked: the trainer's command). ``"pool"``: inductor's compile
    pool, its sidecar (``torch/_inductor/compile_worker``) and the sidecar's workers, up to one per
    core of the job (xling.pretrain.compiling sizes it). ``"tool"``: what either runs for a moment
    while compiling (g++ and a Python that loads the library built, on a CPU; ptxas on a GPU)."""
    chain = []  # proc, then its ancestors up to the launcher's child
    try:
        while proc is not None and proc.pid != root:
            chain.append(" ".join(proc.cmdline()))
            proc = proc.parent()
    except psutil.Error:
        return "tool"
    if not chain:
        return "tool"
    sidecar = max((i for i, cmd in enumerate(chain) if "compile_worker" in cmd), default=None)
    if sidecar is not None:
        return "pool" if sidecar <= 1 else "tool"
    return "job" if any(name in chain[0] for name in TRAINER) else "tool"


@dataclass
class Watched:
    """A job run to its end, as :func:`run_watched` saw it: ``most`` of its processes at once
    (the launcher's children: fairseq-train and its data-loader workers), ``most_compile`` of
    inductor's compile pool at once (what either runs while compiling counted in neither), every
    process it ever had (``seen``: pid -> (start time, command)), when it ended (monotonic) and
    its log's lines."""

    job: subprocess.Popen
    most: int
    most_compile: int
    ended: float
    watch: LogWatch
    seen: dict = field(default_factory=dict)

    def survivors(self) -> list[str]:
        """The commands of the job's processes still running (the same pid and start time)."""
        left = []
        for pid, (created, cmd) in self.seen.items():
            try:
                p = psutil.Process(pid)
                if abs(p.create_time() - created) < 0.01 and p.status() != psutil.STATUS_ZOMBIE:
                    left.append(cmd)
            except psutil.Error:
                pass
        return left

    def wait_survivors(self, timeout: float, since: float | None = None) -> list[str]:
        """:meth:`survivors` once none is left or ``timeout`` seconds after ``since`` (a monotonic
        time; default: the job's end)."""
        deadline = (self.ended if since is None else since) + timeout
        while (left := self.survivors()) and time.monotonic() < deadline:
            time.sleep(0.1)
        return left


def run_watched(spec: Path, out_dir: Path, stop=None) -> Watched:
    """Runs the job of ``spec`` to its end, watching its log and its process tree: how many
    processes it had at once, with inductor's compile pool counted apart, and every process it
    ever had. ``stop(job, watch)``: called at every poll (e.g. to send a signal)."""
    watch = LogWatch(Path(out_dir) / "train.log")
    job = start(spec)
    most = most_compile = 0
    seen: dict = {}
    side: dict[int, str] = {}  # a process's side (pool_side), once seen
    while job.poll() is None:
        procs = alive(descendants(job.pid))
        for p in procs:
            if p.pid not in seen:
                try:
                    seen[p.pid] = (p.create_time(), " ".join(p.cmdline()[:3])[-160:])
                except psutil.Error:
                    continue
                side[p.pid] = pool_side(p, job.pid)
        own = sum(side.get(p.pid) == "job" for p in procs)
        most, most_compile = max(most, own), max(most_compile, sum(side.get(p.pid) == "pool" for p in procs))
        watch.poll()
        if stop is not None:
            stop(job, watch)
        time.sleep(0.02)
    ended = time.monotonic()
    watch.poll()
    return Watched(job, most, most_compile, ended, watch, seen)


def logged_command(log: str) -> list[str]:
    """The fairseq-train argv of a job's last start, as the launcher writes it into train.log
    (a ``#`` line after its start mark)."""
    from xling.pretrain.fairseq_log import START_MARK

    starts = log.split(START_MARK)
    if len(starts) < 2:
        raise ValueError("train.log has no start of the launcher")
    lines = [line[2:] for line in starts[-1].splitlines()[1:] if line.startswith("# ")]
    command = next((line.split() for line in lines if "fairseq-train" in line or "fairseq_cli.train" in line), None)
    if command is None:
        raise ValueError(f"train.log names no fairseq-train command: {lines}")
    return command


def main(spec_path: str) -> None:
    from xling.pretrain.run import pretrain_job

    spec = json.loads(Path(spec_path).read_text())
    print(json.dumps(pretrain_job(**spec)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
