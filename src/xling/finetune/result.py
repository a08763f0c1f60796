"""A fine-tuning cell's result.json: what the report reads (``en_dev``, ``tgt_test``; the extra
test sets' ``tgt_extra``/``src_extra``, name -> score) and how it was obtained."""

from __future__ import annotations

import json
import platform
from pathlib import Path

import torch

from xling.finetune.examples import EXTRA_SIDES, TaskData, extra_split
from xling.finetune.job import FinetuneJob
from xling.finetune.tasks import TaskAdapter
from xling.io import atomic_write


def result_record(job: FinetuneJob, task: TaskAdapter, run: dict, scores: dict, data: TaskData, timing: dict,
                  device: torch.device) -> dict:
    """What a fine-tuning cell writes to result.json: ``run`` from training (best_epoch, history,
    epoch_size, steps, schedule), ``scores`` split -> the task's scores of the best epoch,
    ``timing`` train_s, eval_s and total_s in seconds; ``tgt_extra``/``src_extra`` (name -> the
    metric) only where ``scores`` has extra test sets."""
    record = {
        "task": job.task,
        "metric": task.metric,
        "src_lang": job.src_lang,
        "tgt_lang": job.tgt_lang,
        "hp": job.hp.tracked(),
        "epochs": job.epochs,
        "epoch_size": run["epoch_size"],
        "steps": run["steps"],
        "schedule": run["schedule"],
        "seed": job.seed,
        "best_epoch": run["best_epoch"],
        "en_dev": scores["en_dev"][task.metric],
        "tgt_dev": scores["tgt_dev"][task.metric] if "tgt_dev" in scores else None,
        "tgt_test": scores["tgt_test"][task.metric],
        "scores": scores,
        "history": run["history"],
        "labels": task.labels,
        "examples": {k: len(v) for k, v in data.items.items()},
        "truncated": data.truncated,
        "max_seq_len": job.max_seq_len,
        "timing": {k: round(timing[k], 3) for k in ("train_s", "eval_s", "total_s")},
        "device": str(device) if device.type == "cpu" else torch.cuda.get_device_name(device),
        "host": platform.node(),
    }
    # extra test sets, by name, where the job has any (a record without them is as it always was)
    for side in EXTRA_SIDES:
        prefix = extra_split(side, "")
        extra = {split.removeprefix(prefix): s[task.metric] for split, s in scores.items() if split.startswith(prefix)}
        if extra:
            record[side] = extra
    return record


def write_result(result: dict, checkpoint: Path, bpe: Path, meta: dict | None, out_json: Path) -> dict:
    """Add where the model came from and the job's ``meta``, and write result.json atomically."""
    result["checkpoint"] = str(checkpoint)
    result["bpe"] = str(bpe)
    result["meta"] = meta or {}
    with atomic_write(out_json) as fh:
        json.dump(result, fh, indent=2, sort_keys=True)
        fh.write("\n")
    return result
