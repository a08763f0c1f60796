"""Run one pretraining job: fairseq-train (resuming from ``checkpoint_last.pt``), then
summarise the log into ``done.json``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import torch

from xling.io import atomic_path, atomic_write

START_MARK = "=== xling pretrain start "
_LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \| INFO \| (\S+) \| (\{.*\})\s*$")
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \|")


def fairseq_env(threads: int | None = None) -> dict[str, str]:
    """Environment of fairseq-train. ``threads`` caps torch's intra-op threads to the job's
    cores: an oversubscribed CPU made a tiny step 10-30x slower with 2 threads than with 1."""
    # fairseq 0.12 calls torch.load without weights_only=False (torch >= 2.6 defaults to True)
    env = {**os.environ, "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}
    if threads:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    return env


def checkpoint_updates(checkpoint: Path) -> int | None:
    """Number of updates stored in a fairseq checkpoint (None if there is none)."""
    if not checkpoint.exists():
        return None
    state = torch.load(checkpoint, map_location="cpu", weights_only=False, mmap=True)
    return int(state["optimizer_history"][-1]["num_updates"])


def resolve_executable(cmd: list[str]) -> list[str]:
    """``fairseq-train`` of this interpreter's environment (Snakemake may run with a
    different PATH)."""
    if cmd and cmd[0] == "fairseq-train":
        local = Path(sys.executable).parent / "fairseq-train"
        exe = str(local) if local.exists() else shutil.which("fairseq-train")
        if exe is None:
            raise FileNotFoundError("fairseq-train not found beside the interpreter nor on PATH")
        return [exe, *cmd[1:]]
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


def run_pretraining(cmd: list[str], save_dir: str | Path, languages: list[str], max_update: int,
                    log_path: str | Path, done_path: str | Path, threads: int | None = None,
                    best_out: str | Path | None = None) -> dict:
    """Run (or resume) training until ``max_update`` updates, then write ``done.json``.

    A rerun after a kill continues from ``checkpoint_last.pt`` (fairseq's default
    ``--restore-file``); a finished run is not restarted, since fairseq would do one more
    update before noticing ``--max-update``. ``best_out``: where to publish
    ``checkpoint_best.pt`` (a declared output that Snakemake may delete before a rerun, hence
    kept apart from fairseq's own ``save_dir``)."""
    save_dir, log_path, done_path = Path(save_dir), Path(log_path), Path(done_path)
    save_dir.mkdir(parents=True, exist_ok=True)
    last = save_dir / "checkpoint_last.pt"
    done = checkpoint_updates(last)
    if done is None or done < max_update:
        with open(log_path, "a", encoding="utf-8") as log:
            # local time, like fairseq's log stamps that the wall time is computed from
            stamp = datetime.now().isoformat(timespec="seconds")
            log.write(f"{START_MARK}{stamp} resume_from_updates={done or 0} ===\n"
                      f"# {' '.join(cmd)}\n")
            log.flush()
            proc = subprocess.run(resolve_executable(cmd), stdout=log, stderr=subprocess.STDOUT,
                                  env=fairseq_env(threads))
        if proc.returncode != 0:
            raise RuntimeError(f"fairseq-train failed with exit code {proc.returncode}: see {log_path}")
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
        **summarise(parsed["records"], list(languages)),
        "wall_s": sum(parsed["invocation_wall_s"]),
        "invocations": len(parsed["invocation_wall_s"]),
        "checkpoint_best": str(best),
    }
    with atomic_write(done_path) as fh:
        json.dump(summary, fh, indent=2)
        fh.write("\n")
    return summary


def pretrain_job(data_dir: str | Path, done_path: str | Path, setting: dict, model: dict, pretrain: dict,
                 languages: list[str], gpus: int, seed: int | None = None, threads: int = 1,
                 num_workers: int | None = None, job_log: str | Path | None = None) -> dict:
    """One Snakemake pretraining job: uses the job's GPUs if there are any (fp16/bf16 from
    config), else the CPU in fp32. Checkpoints and fairseq's ``train.log`` go beside
    ``done.json``; ``job_log`` (the rule's log) gets one line per start and the summary.

    Layout: fairseq's checkpoints (``checkpoint_last.pt`` for resuming, interval and best
    ones) live in ``<out>/fairseq/``, which no rule declares, so Snakemake never deletes them
    when it reruns a killed job; ``<out>/checkpoint_best.pt`` (declared) links to the best."""
    from xling.pretrain.command import fairseq_train_command, max_updates

    n_gpus = min(int(gpus), torch.cuda.device_count()) if torch.cuda.is_available() else 0
    # fairseq runs one process per GPU: share the job's cores among them
    per_process = max(1, int(threads) // max(1, n_gpus))
    if num_workers is None:
        # data-loading workers beside each trainer; on 1-2 cores the main process is faster
        num_workers = min(8, per_process - 1)
    out_dir = Path(done_path).parent
    save_dir = out_dir / "fairseq"
    cmd = fairseq_train_command(data_dir, save_dir, setting, model, pretrain, languages,
                                n_gpus=n_gpus, cpu=n_gpus == 0, seed=seed, num_workers=num_workers)
    note = Path(job_log) if job_log else None
    if note:
        note.parent.mkdir(parents=True, exist_ok=True)
        with open(note, "a", encoding="utf-8") as fh:
            fh.write(f"{datetime.now().isoformat(timespec='seconds')} start on {n_gpus or 'no'} GPU(s), "
                     f"fairseq log: {out_dir / 'train.log'}\n{' '.join(cmd)}\n")
    summary = run_pretraining(cmd, save_dir, languages, max_updates(pretrain), out_dir / "train.log", done_path,
                              threads=per_process, best_out=out_dir / "checkpoint_best.pt")
    if note:
        with open(note, "a", encoding="utf-8") as fh:
            fh.write(f"{datetime.now().isoformat(timespec='seconds')} done: {json.dumps(summary)}\n")
    return summary
