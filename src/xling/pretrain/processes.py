"""The processes of a pretraining job: fairseq-train found and given its environment, the ranks
of one training run together and supervised (how they stop: :mod:`xling.pretrain.lifecycle`), the
GPUs the job sees."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the directory this xling is imported from


def fairseq_env(threads: int | None = None) -> dict[str, str]:
    """Environment of fairseq-train. ``threads`` caps torch's intra-op threads to the job's
    cores: an oversubscribed CPU made a tiny step 10-30x slower with 2 threads than with 1."""
    # fairseq 0.12 calls torch.load without weights_only=False (torch >= 2.6 defaults to True)
    env = {**os.environ, "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}
    # the plugin fairseq loads imports xling: the same xling as this process's (the checkout whose
    # workflow runs), not whichever an editable install or site-packages would give the child
    env["PYTHONPATH"] = os.pathsep.join([PACKAGE_ROOT, *filter(None, [os.environ.get("PYTHONPATH")])])
    if threads:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    return env


def resolve_executable(cmd: list[str]) -> list[str]:
    """``fairseq-train`` of this interpreter's environment (Snakemake may run with a
    different PATH); where no such script exists (fairseq installed with ``pip --target``, a
    directory on PYTHONPATH), its entry point run by this interpreter (``python -m
    fairseq_cli.train``, what the script calls)."""
    if cmd and cmd[0] == "fairseq-train":
        local = Path(sys.executable).parent / "fairseq-train"
        exe = str(local) if local.exists() else shutil.which("fairseq-train")
        if exe is not None:
            return [exe, *cmd[1:]]
        import importlib.util

        if importlib.util.find_spec("fairseq_cli") is None:
            raise FileNotFoundError("fairseq-train not found beside the interpreter nor on PATH, and this "
                                    "interpreter cannot import fairseq_cli")
        return [sys.executable, "-m", "fairseq_cli.train", *cmd[1:]]
    return list(cmd)


def free_port() -> int:
    """A TCP port nobody listens on now, for the CPU ranks' rendezvous."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_processes(cmds: list[list[str]], log, env: dict[str, str], poll_s: float = 0.2) -> int:
    """Run the ranks of one training together; the first failure stops the others (a rank left
    waiting at a collective would never return). Returns the first non-zero exit code, else 0.

    Each rank runs in its own process group with its data-loader workers, and the group is
    killed whatever way the rank ends, so no worker outlives it. A stop signal to this process
    (SIGTERM, SIGINT, SLURM's warning signals: :mod:`xling.pretrain.lifecycle`) is passed on to
    the ranks, which kill their workers and exit; after ``GRACE_S`` what is left is killed and
    :class:`JobStopped` raised."""
    import time

    from xling.pretrain.lifecycle import GRACE_S, PARENT_ENV, JobStopped, forwarded_signals, kill_group

    procs: list[subprocess.Popen] = []

    def stop(signum: int) -> None:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)

    rank_env = {**env, PARENT_ENV: str(os.getpid())}
    with forwarded_signals(stop) as received:
        try:
            for c in cmds:
                procs.append(subprocess.Popen(resolve_executable(c), stdout=log, stderr=subprocess.STDOUT,
                                              env=rank_env, process_group=0))
            deadline = None
            while True:
                codes = [p.poll() for p in procs]
                if received:
                    deadline = deadline or time.monotonic() + GRACE_S
                    if all(c is not None for c in codes) or time.monotonic() > deadline:
                        raise JobStopped(received[0])
                else:
                    failed = [c for c in codes if c is not None and c != 0]
                    if failed or all(c == 0 for c in codes):
                        return failed[0] if failed else 0
                time.sleep(poll_s)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.terminate()
            end = time.monotonic() + GRACE_S
            for p in procs:
                try:
                    p.wait(timeout=max(0.0, end - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
                # the rank and whatever it left behind (workers, its own children)
                kill_group(p.pid)
                p.wait()


def visible_gpus(gpus: int) -> int:
    """How many of the job's ``gpus`` this process sees (torch is imported only to count them)."""
    if int(gpus) <= 0:
        return 0
    import torch

    return min(int(gpus), torch.cuda.device_count()) if torch.cuda.is_available() else 0
