"""Run one pretraining job: its save directory claimed, fairseq-train started (resuming from
``checkpoint_last.pt``) until the last update, the best checkpoint published and the log
summarised into ``done.json``. What each step uses lives in a module of its own: the checkpoints
(:mod:`~xling.pretrain.checkpoints`), the save directory (:mod:`~xling.pretrain.save_dir`),
fairseq's log (:mod:`~xling.pretrain.fairseq_log`), the processes (:mod:`~xling.pretrain.processes`)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import cast

from xling.io import atomic_write
from xling.pretrain.checkpoints import checkpoint_updates, publish_checkpoint, repair_last_checkpoint, resume_layout
from xling.pretrain.command import cpu_process_commands, fairseq_train_command
from xling.pretrain.fairseq_log import START_MARK, parse_log, summarise
from xling.pretrain.job import PretrainJob
from xling.pretrain.processes import fairseq_env, free_port, run_processes, visible_gpus
from xling.pretrain.save_dir import claim_save_dir, job_record
from xling.pretrain.schedule import batch_layout, schedule
from xling.pretrain.tokens import matched_recipe


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
    cmds = [list(c) for c in cmd] if cmd and isinstance(cmd[0], list) else [list(cast(list[str], cmd))]
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


def _note(job_log: str | Path | None, text: str) -> None:
    """A stamped line for the rule's log, if it has one."""
    if not job_log:
        return
    Path(job_log).parent.mkdir(parents=True, exist_ok=True)
    with open(job_log, "a", encoding="utf-8") as fh:
        fh.write(f"{datetime.now().isoformat(timespec='seconds')} {text}\n")
