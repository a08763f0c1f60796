"""fairseq's ``adam`` (Adam with decoupled weight decay, i.e. AdamW) computed by PyTorch's
``torch.optim.AdamW``: fused kernels where the parameters are on a GPU (or ``--deferred-grad-norm``
asks for them), multi-tensor (foreach) ones otherwise, instead of fairseq's per-parameter Python
loop, which took ~20% of a tiny model's CPU step (fairseq only swaps in a fused kernel when apex
is installed). Gradient scaling and the gradient norm are multi-tensor kernels too (fairseq takes
one norm per parameter, ~4 ms a step of the paper's model on an H100).

The weights stay fp32 in the model; the plugin's task runs the step under autocast. Options:

* ``--loss-scaling``: dynamic loss scaling (``torch.amp.GradScaler``) for fp16 autocast. An
  update whose gradients overflow is skipped on the device and still counted (torch AMP's
  convention; fairseq's ``--fp16`` did not count it); it reports gradient norm 0.
* ``--deferred-grad-norm``: report each update's gradient norm (fairseq's logging and its
  non-finite check read it on the host) at the next update, so that the update never waits for
  the GPU; an update with non-finite gradients is skipped on the device, and fairseq stops the run
  one update later, as it would have at that update.
"""

# no "from __future__ import annotations": fairseq reads the config dataclass's field types at run time
from dataclasses import dataclass, field
from typing import Any

import torch
from fairseq.optim import FairseqOptimizer, register_optimizer
from fairseq.optim.adam import FairseqAdam, FairseqAdamConfig
from omegaconf import II

from xling.pretrain.deferred import Deferred
from xling.pretrain.names import OPTIMIZER_NAME

SCALER_STATE = "xling_loss_scaler"  # the loss scaler's state, kept beside the optimizer's in checkpoints


@dataclass
class XlingAdamConfig(FairseqAdamConfig):
    loss_scaling: bool = field(default=False, metadata={"help": "dynamic loss scaling for fp16 autocast"})
    deferred_grad_norm: bool = field(
        default=False, metadata={"help": "report each update's gradient norm at the next update (no device sync)"})
    loss_scale_init: float = II("common.fp16_init_scale")
    loss_scale_min: float = II("common.min_loss_scale")


def _tensors(params) -> list[torch.Tensor]:
    """The parameters of a list of tensors or of parameter groups."""
    return [p for g in params for p in (g["params"] if isinstance(g, dict) else [g])]


@register_optimizer(OPTIMIZER_NAME, dataclass=XlingAdamConfig)
class TorchAdamW(FairseqAdam):
    def __init__(self, cfg: XlingAdamConfig, params):
        FairseqOptimizer.__init__(self, cfg)  # FairseqAdam.__init__ would build its own Adam
        if getattr(cfg, "fp16_adam_stats", False):
            raise NotImplementedError("--fp16-adam-stats needs fairseq's FusedAdamV1 (optimizer adam)")
        params = list(params)
        tensors = _tensors(params)
        self.deferred = bool(getattr(cfg, "deferred_grad_norm", False))
        # skipping a non-finite update on the device needs the fused kernel's found_inf
        fused = self.deferred or (bool(tensors) and all(p.is_cuda for p in tensors))
        kernel: dict[str, Any] = {"fused": True} if fused else {"foreach": True}
        self._optimizer = torch.optim.AdamW(params, **kernel, **self.optimizer_config)
        device = tensors[0].device.type if tensors else "cpu"
        self.loss_scaler = None
        if getattr(cfg, "loss_scaling", False):
            self.loss_scaler = torch.amp.GradScaler(device, init_scale=float(cfg.loss_scale_init))
            self.min_loss_scale = float(cfg.loss_scale_min)
        self._late_norm = Deferred() if self.deferred else None
        self._skip: torch.Tensor | None = None  # found_inf of the update being made (deferred, unscaled)

    @property
    def supports_flat_params(self):
        # fairseq's --fp16 (FP16Optimizer, kept to resume runs started with it) keeps one flat
        # fp32 master tensor: any torch optimizer handles that; without this fairseq refuses it
        return True

    def _grads(self) -> list[torch.Tensor]:
        return [p.grad for p in self.params if p.grad is not None]

    def backward(self, loss):
        (loss if self.loss_scaler is None else self.loss_scaler.scale(loss)).backward()

    def multiply_grads(self, c):
        grads = self._grads()
        if grads:
            torch._foreach_mul_(grads, c.to(grads[0].device) if torch.is_tensor(c) else float(c))

    def clip_grad_norm(self, max_norm, aggregate_norm_fn=None):
        """fairseq's clipping (the same norm and coefficient), as multi-tensor kernels; returns the
        norm fairseq reports: this update's, or the previous one's with ``--deferred-grad-norm``."""
        if self.loss_scaler is not None:
            self.loss_scaler.unscale_(self._optimizer)
        grads = self._grads()
        if grads:
            norm = torch.nn.utils.get_total_norm(grads, foreach=True).float()
        else:
            norm = torch.zeros((), device=next(iter(self.params)).device)
        if aggregate_norm_fn is not None:
            norm = aggregate_norm_fn(norm)
        if max_norm > 0 and grads:
            torch.nn.utils.clip_grads_with_norm_([p for p in self.params if p.grad is not None], max_norm, norm,
                                                 foreach=True)
        if self.loss_scaler is None and not self.deferred:
            return norm
        if self.loss_scaler is None:
            self._skip = (~torch.isfinite(norm)).float()
            values = norm.reshape(1)
        else:
            scale = self.loss_scaler._get_scale_async()
            assert scale is not None  # scaling the first loss made it
            # an overflow is the scaler's to skip, not an error: reported as norm 0
            values = torch.stack([torch.where(torch.isfinite(norm), norm, torch.zeros_like(norm)),
                                  scale.float().reshape(())])
        if self._late_norm is not None:  # --deferred-grad-norm
            previous = self._late_norm.swap(values)
            if previous is None:  # the first update: nothing finished to report yet
                return torch.zeros(())
            numbers = previous[0]  # on the host
        else:
            numbers = values.tolist()  # waits for the device
        if self.loss_scaler is not None and numbers[1] < self.min_loss_scale:
            raise FloatingPointError(f"fp16 loss scale fell below {self.min_loss_scale}: the loss is probably "
                                     "exploding (try bf16 or fp32)")
        return torch.tensor(numbers[0])

    def step(self, closure=None, scale=1.0, groups=None):
        if scale != 1.0:
            self.multiply_grads(1.0 / scale)
        if self.loss_scaler is not None:
            self.loss_scaler.step(self._optimizer)  # skips an overflowed update on the device
            self.loss_scaler.update()
        elif self._skip is not None:
            # the fused kernel leaves the weights and moments alone where found_inf is set (attributes
            # torch's fused step reads, which its type stubs do not declare)
            self._optimizer.found_inf, self._optimizer.grad_scale = self._skip, None  # type: ignore[attr-defined]
            try:
                self._optimizer.step(closure)
            finally:
                del self._optimizer.found_inf, self._optimizer.grad_scale  # type: ignore[attr-defined]  # as above
        else:
            self._optimizer.step(closure)
        self._skip = None

    def state_dict(self):
        state = super().state_dict()
        if self.loss_scaler is not None:
            state = {**state, SCALER_STATE: self.loss_scaler.state_dict()}
        return state

    def load_state_dict(self, state_dict, optimizer_overrides=None):
        state_dict = dict(state_dict)
        scaler = state_dict.pop(SCALER_STATE, None)
        super().load_state_dict(state_dict, optimizer_overrides)
        if scaler is not None and self.loss_scaler is not None:
            self.loss_scaler.load_state_dict(scaler)
