"""``torch.compile`` of the encoder's training loss (``pretrain.compile``), and the eager fallback
where it cannot run: a missing backend is said once in the log when the model is built, and a
compile that fails leaves the run training eagerly instead of stopping it.

Static shapes: the task pads every training batch to the full number of streams and to one of a
few lengths (:func:`xling.pretrain.batches.pad_to_shape`), and the loss is compiled with
``dynamic=False``, so each (language, shape, padded or not) is one graph, compiled once and never
turned into a dynamic one by an epoch's short last batch. Each new graph is logged. dynamo's
recompile limit (8 by default) is raised to the number of graphs the model can need, and reaching
it raises here instead of dynamo's silent eager run of the frame: one warning, eager from then
on. The backward is compiled with the forward instead of at the first ``.backward()``, so that a
failure there is caught here too.

``auto`` compiles on a GPU only a step large enough to pay for it (:data:`MIN_STEP_FLOPS`): a
testbed model's step is a few GFLOP, launch-bound, and its job too short to recover the minute
or more its graphs take to compile (docs/benchmarks.md).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
from typing import Any, Callable

import torch
import torch._dynamo
import torch._functorch.config

logger = logging.getLogger(__name__)

SETTINGS = ("auto", "on", "off")  # fairseq's --compile-encoder; the config's auto/true/false
# auto: the model FLOPs of one step (xling.pretrain.schedule) from which a GPU job compiles. The
# paper's step (8 x 768, batch 96 x 256, ~80k vocabulary) is ~1e13, the testbed's (8 x 64, 16-64
# streams of 64) 3e9-1.2e10: three orders of magnitude either side.
MIN_STEP_FLOPS = 1e12
# raised by dynamo past the recompile limit when fail_on_recompile_limit_hit is set (older torch
# names it FailOnCacheLimitHit)
_LIMIT_HIT: type[BaseException] | tuple[()] = (getattr(torch._dynamo.exc, "FailOnRecompileLimitHit", None)
                                               or getattr(torch._dynamo.exc, "FailOnCacheLimitHit", None) or ())


def compile_wanted(setting: str, device_type: str, step_flops: float | None = None) -> bool:
    """``auto``: compile on a GPU, where it pays (fused kernels, fewer launches) for a step of at
    least :data:`MIN_STEP_FLOPS` (``step_flops`` None: unknown, compiled); on a CPU the tiny
    models of tests and demos run faster eagerly than the minute a compile takes."""
    if setting not in SETTINGS:
        raise ValueError(f"compile setting must be one of {SETTINGS}, got {setting!r}")
    if setting != "auto":
        return setting == "on"
    return device_type == "cuda" and (step_flops is None or step_flops >= MIN_STEP_FLOPS)


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


def compile_threads(environ=os.environ) -> int | None:
    """Workers of inductor's compile pool for this process: ``TORCHINDUCTOR_COMPILE_THREADS``
    where set (inductor reads it itself: None), else the cores the launcher gave the process
    (``OMP_NUM_THREADS``, :func:`xling.pretrain.processes.fairseq_env`), else inductor's own choice
    (one per core of the machine, at most 32: None). Four jobs sharing a 16-core GPU workstation
    would otherwise start 4 x 17 compile processes."""
    if environ.get("TORCHINDUCTOR_COMPILE_THREADS"):
        return None
    try:
        threads = int(environ.get("OMP_NUM_THREADS", ""))
    except ValueError:
        return None
    return max(1, threads)


def graphs_compiled() -> int:
    """Graphs dynamo has compiled in this process so far."""
    return int(torch._dynamo.utils.counters["stats"]["unique_graphs"])


def _shapes(args) -> str:
    return ", ".join(str(tuple(a.shape)) if torch.is_tensor(a) else repr(a) for a in args)


class CompiledOrEager:
    """``fn`` through ``torch.compile`` (static shapes unless ``dynamic`` is given); if dynamo or
    its backend fails, or ``fn`` needs more than ``max_graphs`` graphs, one warning and ``fn``
    eagerly from then on. Errors of ``fn`` itself propagate unchanged (dynamo re-raises them)."""

    def __init__(self, fn, max_graphs: int | None = None, **compile_kwargs):
        self.eager = fn
        self.max_graphs = max_graphs
        self.graphs = 0  # compiled for this function so far
        compile_kwargs.setdefault("dynamic", False)
        threads = compile_threads()
        if threads is not None:
            from torch._inductor import config as inductor

            inductor.compile_threads = threads
        self._compiled: Callable[..., Any] | None = torch.compile(fn, **compile_kwargs)

    @property
    def active(self) -> bool:
        return self._compiled is not None

    def _settings(self) -> contextlib.ExitStack:
        """dynamo's and AOTAutograd's settings while ``fn`` runs compiled (patched per call: the
        process's own settings stay as they are)."""
        stack = contextlib.ExitStack()
        dynamo = torch._dynamo.config
        patch: dict[str, Any] = {}
        if self.max_graphs is not None:
            limit = "recompile_limit" if hasattr(dynamo, "recompile_limit") else "cache_size_limit"
            patch[limit] = max(int(self.max_graphs), 1)
            for name in ("fail_on_recompile_limit_hit", "fail_on_cache_limit_hit"):
                if hasattr(dynamo, name):
                    patch[name] = True
                    break
        if patch:
            stack.enter_context(dynamo.patch(**patch))
        functorch = torch._functorch.config
        if hasattr(functorch, "force_non_lazy_backward_lowering"):
            stack.enter_context(functorch.patch(force_non_lazy_backward_lowering=True))
        return stack

    def _fall_back(self, reason: str) -> None:
        logger.warning("torch.compile failed (%s): the encoder runs eagerly", reason[:300])
        self._compiled = None

    def __call__(self, *args):
        if self._compiled is not None:
            before, start = graphs_compiled(), time.perf_counter()
            try:
                with self._settings():
                    out = self._compiled(*args)
            except _LIMIT_HIT:
                self._fall_back(f"a graph beyond the {self.max_graphs} this model can need, for inputs "
                                f"{_shapes(args)}")
            except torch._dynamo.exc.TorchDynamoException as err:
                cause = getattr(err, "inner_exception", None) or err.__cause__ or err  # the backend's own error
                text = str(cause).strip()
                self._fall_back(f"{type(cause).__name__}: {text.splitlines()[0] if text else ''}")
            else:
                new = graphs_compiled() - before
                if new:
                    self.graphs += new
                    logger.info("torch.compile: graph %d%s compiled for inputs %s in %.1f s", self.graphs,
                                f" of at most {self.max_graphs}" if self.max_graphs else "", _shapes(args),
                                time.perf_counter() - start)
                return out
        return self.eager(*args)
