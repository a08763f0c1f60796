"""How a pretraining job stops: every process of it (the launcher, the fairseq-train ranks, their
data-loader workers) is gone within seconds of a stop signal, whoever receives it.

Who gets the signal depends on who sends it: a terminal's Ctrl-C reaches the foreground process
group, ``scancel`` and SLURM's preemption send SIGTERM to every process of the job (after an
optional ``--signal=USR1@T`` warning), ``kill <pid>`` reaches one process, and an OOM kill or
SLURM's final SIGKILL ends the launcher without a word. So:

* the launcher (:func:`xling.pretrain.processes.run_processes`) starts each rank in its own process group,
  forwards a stop signal to the ranks, and after ``GRACE_S`` kills what is left of each group (the
  group, not the rank's pid: workers orphaned by a dead rank are still in it);
* each rank (the plugin, imported by fairseq-train through ``--user-dir``) kills its own workers and
  exits at once on a stop signal (fairseq itself would be interrupted in the middle of an update or
  a collective, and a Python exit would first try to join its workers); the kernel sends it SIGTERM
  when the launcher dies (``PR_SET_PDEATHSIG``).

A rank that has taken its last update ends the same way at its exit, with status 0, or 1 after an
error (:func:`last_update_taken`): fairseq leaves daemon threads behind (its buffered iterator's
consumer, the loaders' queue feeders), and one that is inside torch's C++ code when the interpreter
finalises is ended by CPython with ``pthread_exit``, whose unwinding through a ``noexcept`` C++ frame
aborts the process ("terminate called without an active exception", exit -6) after a training that
finished: the launcher would report a finished job as failed.

A rank stopped in the middle of a checkpoint loses nothing: fairseq writes each checkpoint to a
temporary file and renames it, and the launcher repairs a ``checkpoint_last.pt`` cut short while
fairseq copied it (:func:`xling.pretrain.checkpoints.repair_last_checkpoint`).

Only the standard library and psutil: the launcher imports this without torch."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import sys
import threading
from typing import Callable, Iterator

import psutil

# SLURM's --signal may name any of these as the warning before its SIGTERM
STOP_SIGNALS = tuple(signal.Signals[name] for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGUSR1", "SIGUSR2"))
# set by the launcher in a rank's environment: the pid a rank's parent must have (see install_rank)
PARENT_ENV = "XLING_PRETRAIN_PARENT"
# a rank is given this long to kill its workers and exit before its group is killed
GRACE_S = 5.0
_PR_SET_PDEATHSIG = 1
_installed_in: int | None = None  # the pid install_rank ran in (the plugin's __init__ runs twice)
_last_update_taken = False


class JobStopped(Exception):
    """The job was stopped by a signal; its processes are gone and its checkpoints kept."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name}: the rerun resumes from checkpoint_last.pt")
        self.signum = int(signum)


def kill_descendants(pid: int | None = None, timeout: float = 2.0) -> int:
    """SIGKILL every descendant of ``pid`` (default: this process) and wait for them; returns how
    many there were. The list is taken first, so a worker orphaned when its parent dies goes too."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return 0
    for child in children:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()
    psutil.wait_procs(children, timeout=timeout)
    return len(children)


def kill_group(pgid: int) -> None:
    """SIGKILL a process group (a rank and every process it forked), if any of it is left."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _end_rank(status: int) -> None:
    """The rank's log lines out, its workers killed, then the process gone with ``status``,
    without Python's shutdown."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    kill_descendants()
    os._exit(status)


def _stop_rank(signum, frame) -> None:
    """A rank's handler: ended at once (no Python shutdown, which would join each worker and run
    fairseq's cleanup in the middle of an update)."""
    _end_rank(128 + int(signum))


def last_update_taken() -> None:
    """Called by the rank's task when it trains the job's last update: from then on the rank's
    exit skips the interpreter's finalisation (:func:`_exit_when_finished`)."""
    global _last_update_taken
    _last_update_taken = True


def _exit_when_finished() -> None:
    """At a rank's exit (atexit, before the interpreter finalises), once the last update was
    taken: the other exit functions run (fairseq's TensorBoard writers, logging's flush,
    multiprocessing's children), then the process ends, its workers killed, with no finalisation
    for a daemon thread to abort in: status 1 when an exception ended it (its traceback is
    printed by then), else 0. Before the last update (an error in setting up, a stop) the exit
    is Python's own: only there can a status other than 0 and 1 come from a ``SystemExit``."""
    if not _last_update_taken:
        return
    status = 0 if getattr(sys, "last_value", None) is None else 1
    atexit.unregister(_exit_when_finished)
    atexit._run_exitfuncs()
    _end_rank(status)


def _set_parent_death_signal(signum: int) -> bool:
    """Ask the kernel to send ``signum`` to this process when its parent dies (Linux only)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def install_rank() -> bool:
    """In a fairseq-train process started by the launcher (``PARENT_ENV`` set): stop signals end
    it and its workers, and so does its parent's death; once its last update is taken, so does
    its normal exit. Does nothing elsewhere (a test or a notebook importing the plugin) or off
    the main thread. Returns whether it installed."""
    global _installed_in
    if _installed_in == os.getpid():
        return True
    parent = os.environ.get(PARENT_ENV)
    if not parent or threading.current_thread() is not threading.main_thread():
        return False
    _installed_in = os.getpid()
    for sig in STOP_SIGNALS:
        signal.signal(sig, _stop_rank)
    _set_parent_death_signal(signal.SIGTERM)
    atexit.register(_exit_when_finished)
    # processes this rank starts itself (fairseq's one per extra GPU) have it as their parent
    os.environ[PARENT_ENV] = str(os.getpid())
    if os.getppid() != int(parent):  # the parent died before the death signal was asked for
        _stop_rank(signal.SIGTERM, None)
    return True


@contextlib.contextmanager
def forwarded_signals(on_stop: Callable[[int], None]) -> Iterator[list[int]]:
    """While the block runs, a stop signal calls ``on_stop(signum)`` (once, the first) and is
    recorded in the yielded list; the previous handlers come back afterwards. Off the main thread
    (where Python cannot set handlers) nothing is installed."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def handler(signum, frame):
        if not received:
            received.append(int(signum))
            on_stop(int(signum))

    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield received
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
