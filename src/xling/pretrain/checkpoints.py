"""fairseq's checkpoints of a pretraining job: how many updates one holds and how its run was
started, read without torch (the launcher otherwise imports torch for this alone); a
``checkpoint_last.pt`` cut short while fairseq copied it, repaired; the best one published."""

from __future__ import annotations

import os
import pickle
import re
import shutil
import zipfile
from pathlib import Path

from xling.io import atomic_path
from xling.pretrain.command import ResumeLayout


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


def publish_checkpoint(src: Path, dst: Path) -> None:
    """Put fairseq's ``src`` at ``dst`` in one rename (a hard link: no copy of a large file).
    fairseq replaces its checkpoints by rename, so the link keeps the content it had."""
    with atomic_path(dst) as tmp:
        try:
            os.link(src, tmp)
        except OSError:  # no hard links on this file system
            shutil.copyfile(src, tmp)
