"""A value of one training step read on the host at the next step, without waiting for the GPU.

fairseq reads the logged loss and the gradient norm on the host after every update (its per-step
logging and its non-finite check): a device sync each time, after which the GPU idles until the
host has launched the next step. Handing fairseq the previous step's value instead, copied
asynchronously and long finished, removes those waits; the logs lag by one update."""

from __future__ import annotations

import torch


class Deferred:
    """``swap(value, *extra)`` keeps ``value`` (a tensor on any device) and returns what the
    previous call kept, as ``(values, *extra)`` with the tensor's values as Python numbers
    (``tolist``), or None on the first call."""

    def __init__(self):
        self._pending = None

    def swap(self, value: torch.Tensor, *extra):
        previous = self.take()
        value = value.detach()
        event = None
        if value.is_cuda:
            host = value.to("cpu", non_blocking=True)  # into pinned memory, queued behind the step
            event = torch.cuda.Event()
            event.record()
        else:
            host = value.clone()
        self._pending = (host, event, extra)
        return previous

    def take(self):
        """What the last ``swap`` kept (waiting only for its own copy), then nothing."""
        if self._pending is None:
            return None
        host, event, extra = self._pending
        self._pending = None
        if event is not None:
            event.synchronize()
        return (host.tolist(), *extra)
