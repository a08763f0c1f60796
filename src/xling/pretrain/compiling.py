"""``torch.compile`` of the encoder's training loss (``pretrain.compile``), and the eager fallback
where it cannot run: a missing backend is said once in the log when the model is built, and a
compile that fails at the first step leaves the run training eagerly instead of stopping it."""

from __future__ import annotations

import logging
import shutil

import torch
import torch._dynamo

logger = logging.getLogger(__name__)

SETTINGS = ("auto", "on", "off")  # fairseq's --compile-encoder; the config's auto/true/false


def compile_wanted(setting: str, device_type: str) -> bool:
    """``auto``: compile on a GPU, where it pays (fused kernels, fewer launches); on a CPU the tiny
    models of tests and demos run faster eagerly than the minute a compile takes."""
    if setting not in SETTINGS:
        raise ValueError(f"compile setting must be one of {SETTINGS}, got {setting!r}")
    return setting == "on" or (setting == "auto" and device_type == "cuda")


def compile_unavailable(device_type: str) -> str | None:
    """Why ``torch.compile``'s default backend cannot build kernels for ``device_type`` here, or
    None when it can."""
    if not torch._dynamo.is_dynamo_supported():
        return "torch.compile does not support this Python or platform"
    if device_type == "cuda":
        from torch.utils._triton import has_triton

        if not has_triton():
            return "Triton is missing (inductor writes its GPU kernels in Triton)"
    elif not any(shutil.which(cc) for cc in ("g++", "c++", "clang++")):
        return "no C++ compiler on PATH (inductor compiles its CPU kernels with one)"
    return None


class CompiledOrEager:
    """``fn`` through ``torch.compile``; if dynamo or its backend fails, one warning and ``fn``
    eagerly from then on. Errors of ``fn`` itself propagate unchanged (dynamo re-raises them)."""

    def __init__(self, fn, **compile_kwargs):
        self.eager = fn
        self._compiled = torch.compile(fn, **compile_kwargs)

    @property
    def active(self) -> bool:
        return self._compiled is not None

    def __call__(self, *args):
        if self._compiled is not None:
            try:
                return self._compiled(*args)
            except torch._dynamo.exc.TorchDynamoException as err:
                cause = getattr(err, "inner_exception", None) or err.__cause__ or err  # the backend's own error
                reason = f"{type(cause).__name__}: {str(cause).strip().splitlines()[0] if str(cause).strip() else ''}"
                logger.warning("torch.compile failed (%s): the encoder runs eagerly", reason[:300])
                self._compiled = None
        return self.eager(*args)
