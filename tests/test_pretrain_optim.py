"""The plugin optimizer takes the same steps as fairseq's own ``adam`` (decoupled weight decay),
clips as fairseq does, reports the gradient norm one update late when asked (skipping a non-finite
update on the device), and scales the fp16 loss dynamically."""

from types import SimpleNamespace

import pytest
import torch
from fairseq.optim.adam import Adam as FairseqAdamImpl
from fairseq.utils import clip_grad_norm_ as fairseq_clip_grad_norm

from xling.pretrain.fairseq_plugin.optim import SCALER_STATE, TorchAdamW


def config(**kw):
    return SimpleNamespace(**{"lr": [3e-3], "adam_betas": "(0.9, 0.98)", "adam_eps": 1e-6, "weight_decay": 0.01,
                              "fp16_adam_stats": False, "loss_scaling": False, "deferred_grad_norm": False,
                              "loss_scale_init": 128.0, "loss_scale_min": 1e-4, **kw})


@pytest.mark.parametrize("deferred", [False, True])  # foreach, fused kernels
def test_same_steps_as_fairseq_adam(deferred):
    torch.manual_seed(0)
    p0 = [torch.randn(5, 3), torch.randn(7)]
    grads = [[torch.randn_like(p) for p in p0] for _ in range(4)]
    ours = [p.clone().requires_grad_() for p in p0]
    ref = [p.clone().requires_grad_() for p in p0]
    opt = TorchAdamW(config(deferred_grad_norm=deferred), ours)
    assert opt._optimizer.defaults["fused"] is (True if deferred else None)
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


def test_clipping_is_fairseqs():
    torch.manual_seed(1)
    grads = [torch.randn(6, 4) * 3, torch.randn(9), torch.randn(2, 2, 2)]
    ours = [torch.zeros_like(g).requires_grad_() for g in grads]
    theirs = [torch.zeros_like(g).requires_grad_() for g in grads]
    for p, q, g in zip(ours, theirs, grads):
        p.grad, q.grad = g.clone(), g.clone()
    opt = TorchAdamW(config(), ours)
    opt.multiply_grads(0.5)
    for q in theirs:
        q.grad.mul_(0.5)
    norm = opt.clip_grad_norm(1.5)
    ref = fairseq_clip_grad_norm(theirs, 1.5)
    torch.testing.assert_close(norm, ref)
    assert norm > 1.5
    for p, q in zip(ours, theirs):
        torch.testing.assert_close(p.grad, q.grad)


def test_deferred_norm_is_the_previous_updates_and_a_nonfinite_update_is_skipped():
    torch.manual_seed(2)
    p = torch.randn(8).requires_grad_()
    opt = TorchAdamW(config(deferred_grad_norm=True), [p])
    reported, actual = [], []
    for step in range(4):
        p.grad = torch.randn(8) * (step + 1)
        if step == 2:
            p.grad[3] = float("inf")
        actual.append(float(p.grad.norm()))
        before = p.detach().clone()
        reported.append(float(opt.clip_grad_norm(0.0)))
        opt.step()
        assert torch.equal(before, p) == (step == 2)  # the inf update left the weights alone
        assert p.isfinite().all()
    assert reported[0] == 0.0 and reported[1:] == pytest.approx(actual[:-1])
    # fairseq's trainer stops on the non-finite norm, now one update after it
    assert reported[3] == float("inf")


def test_fp16_loss_scaling_skips_overflows_and_keeps_its_state():
    torch.manual_seed(3)
    w = torch.randn(4, 4).requires_grad_()
    opt = TorchAdamW(config(loss_scaling=True), [w])
    x = torch.randn(2, 4)
    for step in range(3):
        before = w.detach().clone()
        with torch.autocast("cpu", dtype=torch.float16):
            y = x @ w
        loss = y.float().pow(2).sum() * (1e4 if step == 1 else 1.0)  # step 1 overflows fp16 once scaled
        opt.zero_grad()
        opt.backward(loss)
        norm = opt.clip_grad_norm(0.0)
        if step != 1:  # the update sees the unscaled gradient of the loss
            (expected,) = torch.autograd.grad((x @ w).pow(2).sum(), w)
            torch.testing.assert_close(w.grad, expected, rtol=2e-2, atol=1e-2)
            assert float(norm) == pytest.approx(float(expected.norm()), rel=2e-2)
        opt.step()
        if step == 1:
            assert torch.equal(before, w) and float(norm) == 0.0  # skipped and reported as 0, not an error
        else:
            assert not torch.equal(before, w)
    assert opt.loss_scaler.get_scale() < 128.0  # backed off after the overflow
    state = opt.state_dict()
    other = TorchAdamW(config(loss_scaling=True), [w.detach().clone().requires_grad_()])
    other.load_state_dict(state)
    assert other.loss_scaler.get_scale() == opt.loss_scaler.get_scale() and SCALER_STATE in state
    low = TorchAdamW(config(loss_scaling=True, loss_scale_init=1e-5), [w])
    with torch.autocast("cpu", dtype=torch.float16):
        y = x @ w
    low.backward(y.float().sum())
    with pytest.raises(FloatingPointError, match="loss scale fell below"):
        low.clip_grad_norm(0.0)


def test_legacy_fp16_training_path_steps(tmp_path, monkeypatch):
    """fairseq's --fp16 (FP16Optimizer: fp16 model, one flat fp32 master tensor), which resumes the
    runs started with it, builds and trains with our optimizer and model. Run on CPU: FP16Optimizer
    asks CUDA for the current device only to key its master tensor; CPU tensors have device index None."""
    import torch

    from support.inprocess import build_trainer
    from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data
    from xling.pretrain.command import ResumeLayout, fairseq_train_command
    from xling.pretrain.job import PretrainJob

    monkeypatch.setattr(torch.cuda, "current_device", lambda: None)
    data = write_toy_data(tmp_path / "bin", ["en", "fr"], n_train=100, seed=4)
    model = dict(TINY_MODEL, layers=4, dim=32, ffn_dim=64, tokens_per_sample=32)
    job = PretrainJob.build(data, {"separate": {"embeddings": True, "layers": 1}}, model,
                            dict(TINY_PRETRAIN, precision="fp16"), ["en", "fr"], 1)
    cmd = fairseq_train_command(job, tmp_path / "ck", 1, resume=ResumeLayout(vocab_multiple=1, fairseq_fp16=True))
    assert "--fp16" in cmd and "--autocast" not in cmd and "--deferred-grad-norm" not in cmd
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
