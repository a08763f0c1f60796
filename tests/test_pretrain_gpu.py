"""The pretraining step on a GPU: the GPU job's fairseq-train command trains in bf16 and fp16 with
the encoder compiled, its weights stay fp32, and after the first steps an update makes no device
sync (torch's sync debug mode raises on one). Skipped without CUDA; the same code paths run on the
CPU in test_pretrain_step.py, test_pretrain_optim.py and test_pretrain_compile.py.

Two layers: the claim is the step's (its graph, its syncs), which two layers make as eight do, and
a compile's time grows with the layers it traces (the eight-layer test took 43-78 s a variant on an
H100, mostly compiling)."""

from __future__ import annotations

import pytest
import torch

from support.inprocess import build_trainer
from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data
from xling.pretrain.command import fairseq_train_command
from xling.pretrain.job import PretrainJob

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none visible)")]


def pinned(batch):
    """As fairseq's data loader hands batches over (pin_memory=True)."""
    if isinstance(batch, dict):
        return {k: pinned(v) for k, v in batch.items()}
    return batch.pin_memory() if torch.is_tensor(batch) else batch


MODEL = dict(TINY_MODEL, layers=2)


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["bf16", "fp16"])
@pytest.mark.parametrize("sep_emb", [False, True])
def test_gpu_step_trains_compiled_without_device_syncs(tmp_path, precision, sep_emb):
    data = write_toy_data(tmp_path / "bin", ["en", "fr"], n_train=400, seed=1)
    job = PretrainJob.build(data, {"separate": {"embeddings": sep_emb, "layers": 0}}, MODEL,
                            dict(TINY_PRETRAIN, precision=precision, clip_norm=1.0, compile=True), ["en", "fr"], 1)
    cmd = fairseq_train_command(job, tmp_path / "ck", 1)
    # compiled on request: auto leaves a model this small eager (xling.pretrain.compiling.MIN_STEP_FLOPS)
    assert "--compile-encoder" in cmd and cmd[cmd.index("--compile-encoder") + 1] == "on"
    torch._dynamo.reset()
    cfg, task, trainer = build_trainer(cmd)
    enc = trainer.model.encoder
    assert enc.compiled and enc.lm_bias.is_cuda
    itr = trainer.get_train_iterator(epoch=1).next_epoch_itr(shuffle=True)
    samples = [pinned(next(itr)) for _ in range(8)]
    for sample in samples:  # compiles each language's graph, starts the deferred logs
        trainer.train_step([sample])
    w0 = enc.shared_layers[0].linear1.weight.detach().clone()
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        logs = [trainer.train_step([sample]) for sample in samples]
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    assert enc.compiled  # no fallback to eager happened
    assert enc.shared_layers[0].linear1.weight.dtype == torch.float32
    assert not torch.equal(w0, enc.shared_layers[0].linear1.weight)
    assert all(0 < log["loss"] < 20 for log in logs) and trainer.get_num_updates() == 16
