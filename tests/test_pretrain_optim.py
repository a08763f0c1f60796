"""The plugin optimizer takes the same steps as fairseq's own ``adam`` (decoupled weight decay)."""

from types import SimpleNamespace

import torch
from fairseq.optim.adam import Adam as FairseqAdamImpl

from xling.pretrain.fairseq_plugin.optim import TorchAdamW


def test_same_steps_as_fairseq_adam():
    torch.manual_seed(0)
    p0 = [torch.randn(5, 3), torch.randn(7)]
    grads = [[torch.randn_like(p) for p in p0] for _ in range(4)]
    ours = [p.clone().requires_grad_() for p in p0]
    ref = [p.clone().requires_grad_() for p in p0]
    cfg = SimpleNamespace(lr=[3e-3], adam_betas="(0.9, 0.98)", adam_eps=1e-6, weight_decay=0.01,
                          fp16_adam_stats=False)
    opt = TorchAdamW(cfg, ours)
    ref_opt = FairseqAdamImpl(ref, lr=3e-3, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.01)
    for step, g in enumerate(grads):
        if step == 2:
            opt.set_lr(1e-3)  # what fairseq's lr scheduler does
            for group in ref_opt.param_groups:
                group["lr"] = 1e-3
        for p, q, gi in zip(ours, ref, g):
            p.grad, q.grad = gi.clone(), gi.clone()
        opt.step()
        ref_opt.step()
    for p, q, start in zip(ours, ref, p0):
        assert not torch.equal(p, start)
        assert torch.allclose(p, q, atol=1e-6, rtol=1e-5)


def test_fp16_training_path_steps(tmp_path, monkeypatch):
    """--fp16 (fairseq's FP16Optimizer: fp16 model, one flat fp32 master tensor) builds and
    trains with our optimizer and model. Run on CPU: FP16Optimizer asks CUDA for the current
    device only to key its master tensor; CPU tensors have device index None."""
    import torch

    from support.inprocess import build_trainer
    from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data
    from xling.pretrain.command import fairseq_train_command

    monkeypatch.setattr(torch.cuda, "current_device", lambda: None)
    data = write_toy_data(tmp_path / "bin", ["en", "fr"], n_train=100, seed=4)
    model = dict(TINY_MODEL, layers=4, dim=32, ffn_dim=64, tokens_per_sample=32)
    cmd = fairseq_train_command(data, tmp_path / "ck", {"separate": {"embeddings": True, "layers": 1}}, model,
                                dict(TINY_PRETRAIN, precision="fp16"), ["en", "fr"], n_gpus=1, cpu=False, seed=1)
    assert "--fp16" in cmd
    cfg, task, trainer = build_trainer(cmd)
    itr = trainer.get_train_iterator(epoch=1).next_epoch_itr(shuffle=True)
    w0 = trainer.model.encoder.shared_layers[0].linear1.weight.detach().clone()
    for _ in range(3):
        trainer.train_step([next(itr)])
    assert type(trainer.optimizer).__name__ == "FP16Optimizer"
    assert isinstance(trainer.optimizer.fp32_optimizer, TorchAdamW)
    assert trainer.model.encoder.shared_layers[0].linear1.weight.dtype == torch.float16
    assert trainer.get_num_updates() == 3
    assert not torch.equal(w0, trainer.model.encoder.shared_layers[0].linear1.weight)
