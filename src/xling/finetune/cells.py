"""The trained weights of M grid cells in one buffer, and one optimizer per cell.

Row m of ``flat`` [M, N] holds cell m's trained parameters (the encoder's, then the head's), each
at its own offset. Two kinds of views share that storage:

- per parameter, ``stacked[name]`` [M, *shape]: the leaves the batched forward pass reads and
  autograd accumulates into (their ``.grad`` are views of ``grad``, so one ``zero_`` clears all);
- per cell, two contiguous slices of row m (encoder, head): what cell m's Adam updates, with the
  cell's own learning rates and schedule.

A cell whose loss is not finite skips its update (parameters and moments unchanged) through the
``found_inf`` input of torch's fused Adam, decided on the device: no host sync, no effect on the
other cells, whose parameters and gradients never mix with its own.
"""

from __future__ import annotations

import math
import warnings
from typing import Callable, Mapping

import torch

# A parameter of a row of the buffer is not "dense" in autograd's sense (the next cell's row sits
# between its cells); autograd warns once that it accumulates the gradient in place anyway.
warnings.filterwarnings("ignore", message="grad and param do not obey the gradient layout contract")

ALIGN = 16  # elements: each parameter starts on a 64-byte boundary


def _aligned(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


class CellParameters:
    """M copies of the named trained tensors ``encoder`` then ``head`` (name -> initial value)."""

    def __init__(self, encoder: Mapping[str, torch.Tensor], head: Mapping[str, torch.Tensor], cells: int, device):
        self.cells = cells
        self.offsets: dict[str, tuple[int, tuple[int, ...]]] = {}
        end = 0
        for part in (encoder, head):
            for name, value in part.items():
                self.offsets[name] = (end, tuple(value.shape))
                end += _aligned(value.numel())
            if part is encoder:
                self.encoder_end = end
        self.width = end
        self.flat = torch.zeros(cells, end, device=device)
        self.grad = torch.zeros_like(self.flat)
        self.stacked: dict[str, torch.Tensor] = {}
        for name, value in [*encoder.items(), *head.items()]:
            start, shape = self.offsets[name]
            self.flat[:, start : start + value.numel()] = value.detach().reshape(1, -1).to(device, torch.float32)
            leaf = self._view(self.flat, name).requires_grad_(True)
            leaf.grad = self._view(self.grad, name)
            self.stacked[name] = leaf
        self.head_names = list(head)
        self.best = self.flat.clone()

    def _view(self, buffer: torch.Tensor, name: str) -> torch.Tensor:
        start, shape = self.offsets[name]
        n = math.prod(shape)
        return buffer.detach()[:, start : start + n].view(self.cells, *shape)

    def regions(self, cell: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Cell ``cell``'s encoder and head slices, each a leaf with its gradient slice attached."""
        out = []
        for start, end in ((0, self.encoder_end), (self.encoder_end, self.width)):
            region = self.flat.detach()[cell, start:end]
            region.grad = self.grad[cell, start:end]
            out.append(region)
        return out[0], out[1]

    def zero_grad(self) -> None:
        self.grad.zero_()

    def keep(self, cell: int) -> None:
        """Remember cell ``cell``'s current weights as its best (on the device)."""
        self.best[cell].copy_(self.flat[cell])

    def restore_best(self) -> None:
        self.flat.copy_(self.best)


class CellOptimizers:
    """One fused Adam and learning-rate schedule per cell over its two slices of the buffer."""

    def __init__(self, params: CellParameters, make: Callable):
        """``make(cell, encoder_slice, head_slice) -> (optimizer, scheduler)``; the optimizer must be
        torch's fused Adam (the only one that honours ``found_inf``)."""
        self.params = params
        self.optimizers, self.schedulers = [], []
        for m in range(params.cells):
            opt, sched = make(m, *params.regions(m))
            if not opt.defaults.get("fused"):
                raise ValueError("per-cell masking needs torch's fused Adam (fused=True)")
            self.optimizers.append(opt)
            self.schedulers.append(sched)

    def step(self, losses: torch.Tensor) -> None:
        """One update of every cell whose loss in ``losses`` [M] is finite; then clear the gradients."""
        skip = (~torch.isfinite(losses.detach())).float()
        for m, (opt, sched) in enumerate(zip(self.optimizers, self.schedulers)):
            # GradScaler's protocol for fused optimizers: found_inf != 0 leaves the cell unchanged.
            opt.found_inf = skip[m]
            opt.step()
            del opt.found_inf
            sched.step()
        self.params.zero_grad()
