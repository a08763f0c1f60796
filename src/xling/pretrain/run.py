"""Run one pretraining job: fairseq-train (resuming from ``checkpoint_last.pt``), then
summarise the log into ``done.json``."""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import zipfile
from datetime import datetime
from pathlib import Path

from xling.io import atomic_path, atomic_write
from xling.pretrain.command import ResumeLayout, cpu_process_commands, fairseq_train_command
from xling.pretrain.job import PretrainJob
from xling.pretrain.schedule import batch_layout, schedule
from xling.pretrain.tokens import matched_recipe

START_MARK = "=== xling pretrain start "
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the directory this xling is imported from
_LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \| INFO \| (\S+) \| (\{.*\})\s*$")
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \|")


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


class _Opaque:
    """Whatever a checkpoint's pickle names outside the standard library (tensors, storages,
    fairseq's and omegaconf's objects): built from any arguments, kept empty."""

    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        pass


class _UpdatesUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        # argparse.Namespace: fairseq's model config in a checkpoint (cfg["model"])
        if module in ("builtins", "collections", "copyreg", "_codecs") or (module, name) == ("argparse", "Namespace"):
            return super().find_class(module, name)
        return _Opaque

    def persistent_load(self, pid):  # a tensor's storage: not read
        return None


def _checkpoint_state(checkpoint: Path) -> dict | None:
    """A fairseq checkpoint's dictionary, its tensors left out (None if there is no file). Read
    from the pickle inside torch's zip format without importing torch or loading a tensor: the job
    that launches fairseq-train otherwise imports torch only for this (3 s of CPU per job)."""
    if not checkpoint.exists():
        return None
    if not zipfile.is_zipfile(checkpoint):  # torch's legacy format
        import torch

        return torch.load(checkpoint, map_location="cpu", weights_only=False, mmap=True)
    with zipfile.ZipFile(checkpoint) as zf:
        name = next(n for n in zf.namelist() if n.endswith("/data.pkl"))
        with zf.open(name) as fh:
            return _UpdatesUnpickler(fh).load()


def checkpoint_updates(checkpoint: Path) -> int | None:
    """Number of updates stored in a fairseq checkpoint (None if there is none)."""
    state = _checkpoint_state(checkpoint)
    return None if state is None else int(state["optimizer_history"][-1]["num_updates"])


def checkpoint_layout(checkpoint: Path) -> ResumeLayout | None:
    """How the run that wrote ``checkpoint`` was started, as far as its model and optimizer state
    depend on it (None if there is no file): the rows its tables were padded to a multiple of (1
    before --vocab-multiple existed), and whether fairseq's --fp16 kept the optimizer's state."""
    state = _checkpoint_state(checkpoint)
    if state is None:
        return None
    cfg = state.get("cfg") or {}
    model = cfg.get("model") if isinstance(cfg, dict) else None
    multiple = model.get("vocab_multiple") if isinstance(model, dict) else getattr(model, "vocab_multiple", None)
    optimizer = state["optimizer_history"][-1].get("optimizer_name")
    return ResumeLayout(vocab_multiple=int(multiple or 1), fairseq_fp16=optimizer == "FP16Optimizer")


def readable_updates(checkpoint: Path) -> int | None:
    """``checkpoint_updates``, or None when the file is missing or cannot be read whole."""
    try:
        return checkpoint_updates(checkpoint)
    except Exception:  # a truncated zip archive, a half-written pickle: unreadable all the same
        return None


_INTERVAL = re.compile(r"^checkpoint_\d+_(\d+)\.pt$")


def _interval_checkpoints(save_dir: Path) -> list[tuple[int, Path]]:
    """fairseq's ``checkpoint_<epoch>_<updates>.pt`` in ``save_dir``, newest first."""
    if not Path(save_dir).is_dir():
        return []
    found = ((_INTERVAL.match(p.name), p) for p in Path(save_dir).iterdir())
    return sorted(((int(m.group(1)), p) for m, p in found if m), reverse=True)


def resume_layout(save_dir: Path) -> ResumeLayout | None:
    """The layout of the checkpoint a run in ``save_dir`` resumes from (``checkpoint_last.pt``,
    or the newest readable interval checkpoint that :func:`repair_last_checkpoint` would put in
    its place), or None for a run that starts afresh."""
    candidates = [Path(save_dir) / "checkpoint_last.pt", *(p for _, p in _interval_checkpoints(save_dir))]
    for path in candidates:
        try:
            layout = checkpoint_layout(path)
        except Exception:  # truncated or half-written: the next one
            continue
        if layout is not None:
            return layout
    return None


def repair_last_checkpoint(save_dir: Path) -> str | None:
    """fairseq writes each checkpoint atomically (``checkpoint_<epoch>_<updates>.pt``) and then
    *copies* it to ``checkpoint_last.pt``: a job killed during that copy leaves a truncated
    ``checkpoint_last.pt`` that every later resume fails on. Put the newest readable interval
    checkpoint in its place (atomically), or remove it when there is none (training restarts).
    Returns what was done, for the log, or None when nothing was wrong."""
    last = Path(save_dir) / "checkpoint_last.pt"
    if not last.exists() or readable_updates(last) is not None:
        return None
    for updates, path in _interval_checkpoints(save_dir):
        if readable_updates(path) == updates:
            with atomic_path(last) as tmp:
                shutil.copyfile(path, tmp)
            return f"{last} was unreadable (killed while fairseq copied it): restored from {path.name}"
    last.unlink()
    return f"{last} was unreadable and no interval checkpoint is intact: training restarts"


JOB_RECORD = "job.json"  # beside fairseq's checkpoints: the tracked params they were trained under


def job_record(job: PretrainJob) -> str:
    """What a job's checkpoints are kept for: its tracked params (what makes Snakemake rerun it)."""
    return json.dumps(job.tracked(), sort_keys=True, default=repr) + "\n"


def claim_save_dir(save_dir: Path, fairseq_log: Path, record: str, max_update: int) -> str | None:
    """Keep the checkpoints in ``save_dir`` only for the job they were trained for. They live
    where Snakemake never deletes them, so that a killed job resumes; a job rerun because its
    params changed must not resume another model. Checkpoints recorded for other params, or
    (from before the record was kept) a training that had already finished, which Snakemake
    reruns only because something changed, move with the fairseq log to
    ``<save_dir>.previous`` (replacing an older one) and training starts afresh. Returns what
    was done, for the log, or None."""
    save_dir, kept = Path(save_dir), Path(save_dir) / JOB_RECORD
    note = None
    if save_dir.is_dir() and any(save_dir.glob("checkpoint*.pt")):
        if kept.exists():
            why = "were trained for other params" if kept.read_text(encoding="utf-8") != record else None
        else:
            finished = readable_updates(save_dir / "checkpoint_last.pt")
            why = "are a finished training from before runs were recorded" if (finished or 0) >= max_update else None
        if why:
            previous = save_dir.with_name(save_dir.name + ".previous")
            shutil.rmtree(previous, ignore_errors=True)
            save_dir.rename(previous)
            if Path(fairseq_log).exists():
                Path(fairseq_log).rename(previous / Path(fairseq_log).name)
            note = f"the checkpoints in {save_dir} {why}: moved to {previous}; training starts afresh"
    save_dir.mkdir(parents=True, exist_ok=True)
    if not kept.exists():
        with atomic_write(kept) as fh:
            fh.write(record)
    return note


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


def parse_log(log_path: Path) -> dict:
    """Per-invocation wall time and the json records of a fairseq train log
    (``--log-format json``)."""
    records: list[tuple[str, dict]] = []
    walls: list[float] = []
    start = last = None

    def close():
        if start is not None and last is not None:
            walls.append(max(0.0, (last - start).total_seconds()))

    with open(log_path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith(START_MARK):
                close()
                start = datetime.fromisoformat(line[len(START_MARK):].split()[0])
                last = start
                continue
            m = _STAMP.match(line)
            if m and start is not None:
                last = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")
            m = _LOG_LINE.match(line)
            if m:
                try:
                    records.append((m.group(2), json.loads(m.group(3))))
                except json.JSONDecodeError:
                    continue
    close()
    return {"records": records, "invocation_wall_s": walls}


def summarise(records: list[tuple[str, dict]], languages: list[str]) -> dict:
    """Best source-language (first language) valid ppl, per-language valid ppl at the last
    validation and at the best one, and training tokens/s from the epoch summaries."""
    src = languages[0]
    valid: dict[str, list[dict]] = {lang: [] for lang in languages}
    for tag, rec in records:
        for lang in languages:
            if tag == f"valid_{lang}":
                valid[lang].append({"updates": int(float(rec[f"valid_{lang}_num_updates"])),
                                    "ppl": float(rec[f"valid_{lang}_ppl"]),
                                    "loss": float(rec[f"valid_{lang}_loss"])})
    out: dict = {"valid_ppl": {l: v[-1]["ppl"] for l, v in valid.items() if v}}
    if valid[src]:
        best = min(valid[src], key=lambda r: r["loss"])
        out["best_updates"] = best["updates"]
        out[f"best_valid_ppl_{src}"] = best["ppl"]
        out["valid_ppl_at_best"] = {
            l: next((r["ppl"] for r in v if r["updates"] == best["updates"]), None) for l, v in valid.items()}
    # tokens/s: every epoch summary covers the updates since the previous one
    tokens = seconds = 0.0
    prev = 0
    for tag, rec in records:
        if tag != "train":
            continue
        n = int(float(rec["train_num_updates"]))
        wps = float(rec["train_wps"])
        if n > prev and wps > 0:
            t = float(rec["train_wpb"]) * (n - prev)
            tokens += t
            seconds += t / wps
        prev = n
    out["tokens_per_s"] = tokens / seconds if seconds else None
    out["train_tokens"] = tokens
    return out


def publish_checkpoint(src: Path, dst: Path) -> None:
    """Put fairseq's ``src`` at ``dst`` in one rename (a hard link: no copy of a large file).
    fairseq replaces its checkpoints by rename, so the link keeps the content it had."""
    with atomic_path(dst) as tmp:
        try:
            os.link(src, tmp)
        except OSError:  # no hard links on this file system
            shutil.copyfile(src, tmp)


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
                    failed = [c for c in codes if c not in (None, 0)]
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


def run_pretraining(cmd: list[str] | list[list[str]], save_dir: str | Path, languages: list[str], max_update: int,
                    log_path: str | Path, done_path: str | Path, threads: int | None = None,
                    best_out: str | Path | None = None, extra: dict | None = None) -> dict:
    """Run (or resume) training until ``max_update`` updates, then write ``done.json``.

    ``cmd``: one fairseq-train argv, or one per rank of a multi-process CPU run (all run
    together). A rerun after a kill continues from ``checkpoint_last.pt`` (fairseq's default
    ``--restore-file``); a finished run is not restarted, since fairseq would do one more
    update before noticing ``--max-update``. ``best_out``: where to publish
    ``checkpoint_best.pt`` (a declared output that Snakemake may delete before a rerun, hence
    kept apart from fairseq's own ``save_dir``). ``extra``: more fields for done.json."""
    cmds = [list(c) for c in cmd] if cmd and isinstance(cmd[0], list) else [list(cmd)]
    save_dir, log_path, done_path = Path(save_dir), Path(log_path), Path(done_path)
    save_dir.mkdir(parents=True, exist_ok=True)
    last = save_dir / "checkpoint_last.pt"
    repaired = repair_last_checkpoint(save_dir)
    done = checkpoint_updates(last)
    if done is None or done < max_update:
        with open(log_path, "a", encoding="utf-8") as log:
            # local time, like fairseq's log stamps that the wall time is computed from
            stamp = datetime.now().isoformat(timespec="seconds")
            log.write(f"{START_MARK}{stamp} resume_from_updates={done or 0} ===\n"
                      + (f"# {repaired}\n" if repaired else "")
                      + "".join(f"# {' '.join(c)}\n" for c in cmds))
            log.flush()
            try:
                code = run_processes(cmds, log, fairseq_env(threads))
            except Exception as exc:  # JobStopped: the log says why the invocation ended
                log.write(f"# {exc}\n")
                raise
        if code != 0:
            raise RuntimeError(f"fairseq-train failed with exit code {code}: see {log_path}")
        done = checkpoint_updates(last)
    if done is None or done < max_update:
        raise RuntimeError(f"training stopped at {done} < {max_update} updates: see {log_path}")
    best = save_dir / "checkpoint_best.pt"
    if not best.exists():
        raise RuntimeError(f"fairseq wrote no checkpoint_best.pt in {save_dir}: see {log_path}")
    if best_out is not None:
        best = Path(best_out)
        publish_checkpoint(save_dir / "checkpoint_best.pt", best)
    parsed = parse_log(log_path)
    summary = {
        "updates": done,
        "max_update": max_update,
        "languages": list(languages),
        **(extra or {}),
        **summarise(parsed["records"], list(languages)),
        "wall_s": sum(parsed["invocation_wall_s"]),
        "invocations": len(parsed["invocation_wall_s"]),
        "checkpoint_best": str(best),
    }
    with atomic_write(done_path) as fh:
        json.dump(summary, fh, indent=2)
        fh.write("\n")
    return summary


def pretrain_job(data_dir: str | Path | list[str | Path], done_path: str | Path, setting: dict, model: dict,
                 pretrain: dict, languages: list[str], gpus: int, seed: int, threads: int = 1,
                 num_workers: int | None = None, job_log: str | Path | None = None) -> dict:
    """The pretraining rules' job (workflow/scripts/pretrain.py): its params, the tracked fields of
    its :class:`PretrainJob`, make the job again, which :func:`train` runs. ``data_dir``: the
    binarised data directory, or several (code-switched variants, cycled by epoch; the first holds
    dictionary and validation)."""
    job = PretrainJob.build(data_dir, setting, model, pretrain, languages, seed)
    return train(job, done_path, gpus, threads=threads, num_workers=num_workers, job_log=job_log)


def train(job: PretrainJob, done_path: str | Path, gpus: int, threads: int = 1, num_workers: int | None = None,
          job_log: str | Path | None = None) -> dict:
    """Train (or resume) ``job``: on the job's GPUs if there are any (the recipe's precision), else
    on the CPU in fp32 (``cpu_processes`` data-parallel processes). Checkpoints and fairseq's
    ``train.log`` go beside ``done.json``; ``job_log`` (the rule's log) gets one line per start
    and the summary.

    Layout: fairseq's checkpoints (``checkpoint_last.pt`` for resuming, interval and best
    ones) live in ``<out>/fairseq/``, which no rule declares, so Snakemake never deletes them
    when it reruns a killed job; ``<out>/checkpoint_best.pt`` (declared) links to the best. A
    rerun for other params does not resume them (:func:`claim_save_dir`).

    A recipe with ``match_tokens`` (Liu et al.'s windowed models) is first matched in tokens to its
    reference on the first data directory's training data
    (:func:`xling.pretrain.tokens.matched_recipe`); ``done.json`` records what was measured."""
    n_gpus = visible_gpus(gpus)
    processes = n_gpus or int(job.recipe.cpu_processes)
    # fairseq runs one process per GPU (or CPU rank): share the job's cores among them
    per_process = max(1, int(threads) // processes)
    num_workers = job.recipe.num_workers if num_workers is None else num_workers
    if num_workers is None:
        # data-loading workers beside each trainer; on 1-2 cores the main process is faster
        num_workers = min(8, per_process - 1)
    out_dir = Path(done_path).parent
    save_dir = out_dir / "fairseq"
    extra: dict = {}
    record = job_record(job)  # before the recipe is matched in tokens: the job as the rule tracks it
    if job.recipe.match_tokens:
        # as many tokens as the reference cutting of the same data (Liu et al.'s windows): the
        # samples per update (or the updates) follow from the training data's sentence lengths
        recipe, extra["match_tokens"] = matched_recipe(job.recipe, job.model, job.data_dirs[0], job.languages)
        job = job.with_recipe(recipe)
    sched = schedule(job.recipe, job.model)
    claimed = claim_save_dir(save_dir, out_dir / "train.log", record, sched.max_updates)
    if claimed:
        _note(job_log, claimed)
    # a run resumed from a checkpoint of older code keeps the layout it was started with
    cmd = fairseq_train_command(job, save_dir, n_gpus, num_workers=num_workers, resume=resume_layout(save_dir))
    cmds = cpu_process_commands(cmd, free_port()) if n_gpus == 0 else [cmd]
    layout = batch_layout(job.recipe, processes)
    _note(job_log, f"start on {n_gpus or 'no'} GPU(s), {layout.processes} process(es) x {layout.streams_per_step} "
                   f"streams x update-freq {layout.update_freq} = {layout.effective_batch_streams} streams per "
                   f"update, fairseq log: {out_dir / 'train.log'}\n"
                   + (f"matched in tokens: {json.dumps(extra['match_tokens'])}\n" if extra else "") + " ".join(cmd))
    batch = {"global_batch_streams": sched.global_batch_streams, "processes": layout.processes,
             "device": "cuda" if n_gpus else "cpu", "streams_per_step": layout.streams_per_step,
             "update_freq": layout.update_freq, "effective_batch_streams": layout.effective_batch_streams,
             "updates_per_epoch": sched.updates_per_epoch, "tokens_per_sample": sched.tokens_per_sample}
    summary = run_pretraining(cmds, save_dir, list(job.languages), sched.max_updates, out_dir / "train.log",
                              done_path, threads=per_process, best_out=out_dir / "checkpoint_best.pt",
                              extra={"batch": batch, **extra})
    _note(job_log, f"done: {json.dumps(summary)}")
    return summary


def visible_gpus(gpus: int) -> int:
    """How many of the job's ``gpus`` this process sees (torch is imported only to count them)."""
    if int(gpus) <= 0:
        return 0
    import torch

    return min(int(gpus), torch.cuda.device_count()) if torch.cuda.is_available() else 0


def _note(job_log: str | Path | None, text: str) -> None:
    """A stamped line for the rule's log, if it has one."""
    if not job_log:
        return
    Path(job_log).parent.mkdir(parents=True, exist_ok=True)
    with open(job_log, "a", encoding="utf-8") as fh:
        fh.write(f"{datetime.now().isoformat(timespec='seconds')} {text}\n")
