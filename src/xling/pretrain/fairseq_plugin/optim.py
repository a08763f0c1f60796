"""fairseq's ``adam`` (Adam with decoupled weight decay, i.e. AdamW) computed by PyTorch's
multi-tensor ``torch.optim.AdamW`` instead of fairseq's per-parameter Python loop, which
took ~20% of a tiny model's CPU step (fairseq only swaps in a fused kernel when apex is
installed)."""

from __future__ import annotations

import torch
from fairseq.optim import FairseqOptimizer, register_optimizer
from fairseq.optim.adam import FairseqAdam, FairseqAdamConfig

from xling.pretrain.names import OPTIMIZER_NAME


@register_optimizer(OPTIMIZER_NAME, dataclass=FairseqAdamConfig)
class TorchAdamW(FairseqAdam):
    def __init__(self, cfg: FairseqAdamConfig, params):
        FairseqOptimizer.__init__(self, cfg)  # FairseqAdam.__init__ would build its own Adam
        if getattr(cfg, "fp16_adam_stats", False):
            raise NotImplementedError("--fp16-adam-stats needs fairseq's FusedAdamV1 (optimizer adam)")
        self._optimizer = torch.optim.AdamW(params, foreach=True, **self.optimizer_config)

    @property
    def supports_flat_params(self):
        # fairseq's --fp16/--bf16 (FP16Optimizer) keeps one flat fp32 master tensor: any
        # torch optimizer handles that; without this fairseq refuses to build it
        return True
