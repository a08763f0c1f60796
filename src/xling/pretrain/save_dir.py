"""The save directory of fairseq's checkpoints: kept across reruns of a killed job (Snakemake
never deletes it), handed to another job's params never (:func:`claim_save_dir`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from xling.io import atomic_write
from xling.pretrain.checkpoints import readable_updates
from xling.pretrain.job import PretrainJob

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
