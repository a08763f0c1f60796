"""The pretraining step: embedding tables padded to a multiple of 64 rows give the
loss and gradients of the unpadded model of before (to 1e-5, fp32, every separation setting, with
and without padded streams), the padding rows are never drawn, predicted, nor changed, the
predicted positions come as a host-built index of a size fixed by the batch's shape, and the step
(forward, backward, clipping, optimizer, logging) reads nothing back from its tensors, which on a
GPU would be a device sync."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from support.inprocess import build, build_trainer
from support.mlm_reference import reference_mlm_loss
from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data
from xling.pretrain.batches import predicted_positions, prediction_slots
from xling.pretrain.command import fairseq_train_command
from xling.pretrain.encoder import build_layer, padded_rows
from xling.pretrain.job import PretrainJob

# no dropout: the same parameters give the same loss in train mode
MODEL = dict(TINY_MODEL, layers=4, dropout=0.0, attention_dropout=0.0)
SETTINGS = {"default": (False, 0), "sep_emb": (True, 0), "sep_emb_l1_3": (True, 3), "sep_l1_3": (False, 3)}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_toy_data(tmp_path_factory.mktemp("bin") / "en-fr", ["en", "fr"], n_train=80, seed=11)


def command(data_dir, tmp_path, name, vocab_multiple, **pretrain):
    emb, layers = SETTINGS[name]
    pre = dict(TINY_PRETRAIN, vocab_multiple=vocab_multiple, **pretrain)
    job = PretrainJob.build(data_dir, {"separate": {"embeddings": emb, "layers": layers}}, MODEL, pre, ["en", "fr"], 1)
    return fairseq_train_command(job, tmp_path / "ck")


def padded_copy(old_state: dict, new_state: dict) -> dict:
    """``old_state`` (unpadded tables) with its tables extended by zero (or False) rows to the
    shapes of ``new_state``."""
    out = {}
    for key, value in old_state.items():
        target = new_state[key]
        if value.shape != target.shape:
            extra = torch.zeros((target.shape[-1] - value.shape[-1],) if value.dim() == 1 else
                                (*value.shape[:-2], target.shape[-2] - value.shape[-2], value.shape[-1]),
                                dtype=value.dtype)
            if key.endswith("vocab_mask"):
                extra = torch.zeros(value.shape[0], target.shape[-1] - value.shape[-1], dtype=torch.bool)
                value = torch.cat([value, extra], dim=-1)
            else:
                value = torch.cat([value, extra], dim=0)
        out[key] = value
    return out


def batch(task, lang: str, n: int = 8):
    task.load_dataset(f"train_{lang}")
    ds = task.dataset(f"train_{lang}")
    return ds.collater([ds[i] for i in range(n)])


@pytest.mark.parametrize("break_mode", ["none", "eos"])
@pytest.mark.parametrize("name", list(SETTINGS))
def test_padded_model_gives_the_loss_and_gradients_of_before(data_dir, tmp_path, name, break_mode):
    _, _, old, _ = build(command(data_dir, tmp_path, name, 1, sample_break_mode=break_mode))
    _, task, new, _ = build(command(data_dir, tmp_path, name, 64, sample_break_mode=break_mode))
    vocab = len(task.source_dictionary)
    assert old.encoder.vocab_rows == vocab and new.encoder.vocab_rows == padded_rows(vocab, 64) > vocab
    assert new.encoder.vocab_rows % 64 == 0
    torch.manual_seed(0)
    with torch.no_grad():  # trained-looking weights: LayerNorms and biases away from 1 and 0
        for p in old.parameters():
            p.add_(0.05 * torch.randn_like(p))
    new.load_state_dict(padded_copy(old.state_dict(), new.state_dict()))
    old.train(), new.train()
    for lang_id, lang in enumerate(("en", "fr")):
        sample = batch(task, lang)
        tokens = sample["net_input"]["src_tokens"]
        assert sample["net_input"]["padded"] == bool(tokens.eq(task.source_dictionary.pad()).any())
        if break_mode == "eos":
            assert sample["net_input"]["padded"], "sentences of different lengths make padded batches"
        old.zero_grad(), new.zero_grad()
        ref = reference_mlm_loss(old.encoder, tokens, lang_id, sample["target"])
        ref.backward()
        loss, n, _ = task.mlm_loss(new, sample)
        loss.backward()
        assert n == int(sample["target"].ne(task.source_dictionary.pad()).sum()) > 0
        torch.testing.assert_close(loss, ref, rtol=1e-5, atol=1e-5)
        new_params = dict(new.named_parameters())
        for key, p in old.named_parameters():
            g_old = torch.zeros_like(p) if p.grad is None else p.grad
            g_new = torch.zeros_like(new_params[key]) if new_params[key].grad is None else new_params[key].grad
            torch.testing.assert_close(g_new[: g_old.shape[0]], g_old, rtol=1e-5, atol=1e-5, msg=key)
            assert not g_new[g_old.shape[0]:].any(), f"{key}: a padding row got a gradient"


def test_padding_rows_are_never_drawn_predicted_nor_trained(data_dir, tmp_path):
    """Random replacement words and targets stay within the dictionary, the rows past it get -inf
    logits (softmax probability 0), are not among output_layer's columns, and stay exactly zero
    through training steps."""
    cmd = command(data_dir, tmp_path, "sep_emb", 64)
    cfg, task, trainer = build_trainer(cmd)
    enc = trainer.model.encoder
    vocab, rows = len(task.source_dictionary), enc.vocab_rows
    assert rows > vocab and enc.vocab_mask.shape == (2, rows) and not enc.vocab_mask[:, vocab:].any()
    itr = trainer.get_train_iterator(epoch=1).next_epoch_itr(shuffle=True)
    for _ in range(4):
        sample = next(itr)
        assert sample["net_input"]["src_tokens"].max() < vocab and sample["masked_target"].max() < vocab
        trainer.train_step([sample])
    for emb in enc.embed_tokens:
        assert not emb.weight[vocab:].any() and emb.weight[:vocab].any()
    assert not enc.lm_bias[vocab:].any() and enc.lm_bias[:vocab].any()
    with torch.no_grad():
        features = torch.randn(3, MODEL["dim"])
        for lang in (0, 1):
            full = enc._logits(features, lang)
            assert torch.isneginf(full[:, vocab:]).all()
            assert torch.equal(enc.output_layer(features, lang), full[:, :vocab])
            assert torch.softmax(full, -1)[:, vocab:].sum() == 0


def test_prediction_index_is_the_boolean_mask_in_a_fixed_number_of_slots(data_dir, tmp_path):
    """Every batch of a training epoch: the index lists exactly the predicted positions in the
    order boolean indexing gives them, padded with slots that predict nothing to a count set by
    the batch's shape alone (fairseq's masking never selects more than the bound)."""
    cmd = command(data_dir, tmp_path, "default", 64)
    cfg, task, trainer = build_trainer(cmd)
    pad = task.source_dictionary.pad()
    slots = {}
    for sample in trainer.get_train_iterator(epoch=1).next_epoch_itr(shuffle=True):
        target, index, tgt = sample["target"], sample["masked_index"], sample["masked_target"]
        n = sample["n_predicted"]
        shape = tuple(sample["net_input"]["src_tokens"].shape)
        assert n <= prediction_slots(*shape, cfg.task.mask_prob) <= len(index) and len(index) % 8 == 0
        assert slots.setdefault(shape, len(index)) == len(index)
        masked = target.ne(pad)
        assert torch.equal(index[:n], masked.reshape(-1).nonzero().squeeze(1))
        assert torch.equal(tgt[:n], target[masked]) and tgt[n:].eq(pad).all()
    assert slots


def test_more_predictions_than_the_bound_get_more_slots():
    target = torch.full((2, 4), 1)
    target[0, :3] = torch.tensor([7, 8, 9])
    index, tgt, n = predicted_positions(target, pad=1, slots=2)
    assert n == 3 and len(index) == 8 and index[:3].tolist() == [0, 1, 2] and tgt[:4].tolist() == [7, 8, 9, 1]


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("training", [False, True])
def test_encoder_layer_is_torchs_layer(padded, training):
    torch.manual_seed(0)
    layer = build_layer(32, 4, 64, 0.0, 0.0, "gelu").train(training)
    x = torch.randn(3, 7, 32, requires_grad=True)
    mask = torch.zeros(3, 7, dtype=torch.bool)
    if padded:
        mask[0, 5:] = mask[2, 2:] = True
    ours = layer(x, src_key_padding_mask=mask if padded else None)
    theirs = nn.TransformerEncoderLayer.forward(layer, x, src_key_padding_mask=mask if padded else None)
    keep = ~mask  # torch's eval fast path may leave padded positions unset
    torch.testing.assert_close(ours[keep], theirs[keep], rtol=1e-5, atol=1e-6)
    if training:
        (g_ours,) = torch.autograd.grad(ours[keep].sum(), x)
        (g_theirs,) = torch.autograd.grad(theirs[keep].sum(), x)
        torch.testing.assert_close(g_ours, g_theirs, rtol=1e-5, atol=1e-6)


class HostReads(TorchDispatchMode):
    """Records every op that reads a tensor's values back to the host or whose output shape
    depends on them: on a GPU each one is a device sync."""

    READS = {"_local_scalar_dense", "nonzero", "masked_select", "is_nonzero", "equal", "unique", "_unique2",
             "item", "masked_scatter", "repeat_interleave"}

    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.__name__.split(".")[0]
        if name in self.READS or (name == "index" and any(
                t is not None and t.dtype == torch.bool for t in (args[1] if len(args) > 1 else []))):
            self.seen.append(name)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("precision", ["bf16", "fp16", "fp32"])
@pytest.mark.parametrize("name", ["default", "sep_emb_l1_3"])
def test_the_step_reads_nothing_back_from_its_tensors(data_dir, tmp_path, name, precision):
    """The GPU command's step (task.train_step under autocast, then what fairseq's trainer calls
    on the optimizer: gradient scaling, clipping, the update, and the metrics) on the CPU, under a
    dispatch mode that records every value read: none in the steps after the first (which
    compiles nothing here but starts the deferred logs)."""
    emb, layers = SETTINGS[name]
    job = PretrainJob.build(data_dir, {"separate": {"embeddings": emb, "layers": layers}}, MODEL,
                            dict(TINY_PRETRAIN, precision=precision, clip_norm=1.0), ["en", "fr"], 1)
    cmd = fairseq_train_command(job, tmp_path / "ck", 1)
    assert "--deferred-grad-norm" in cmd and "--deferred-loss-log" in cmd
    cfg, task, trainer = build_trainer(cmd)
    model, criterion, optimizer = trainer.model, trainer.criterion, trainer.optimizer
    itr = trainer.get_train_iterator(epoch=1).next_epoch_itr(shuffle=True)
    samples = [next(itr) for _ in range(3)]
    for step, sample in enumerate(samples):
        reads = HostReads()
        with reads:
            optimizer.zero_grad()
            loss, size, log = task.train_step(sample, model, criterion, optimizer, step)
            optimizer.multiply_grads(1.0 / size)
            norm = optimizer.clip_grad_norm(cfg.optimization.clip_norm)
            optimizer.step()
        if step:
            assert reads.seen == [], f"step {step} read back: {reads.seen}"
            assert isinstance(log["loss"], float) and log["sample_size"] > 0  # the previous step's
        assert norm.device.type == "cpu"


def test_the_trainer_logs_the_previous_updates_loss(data_dir, tmp_path):
    """With the deferred logs, fairseq's trainer sees update k's loss at update k + 1: the numbers
    a run without them reports, one update later (weights and batches are the same in both)."""
    def losses(deferred: bool) -> list[float]:
        job = PretrainJob.build(data_dir, {"separate": {"embeddings": False, "layers": 0}}, MODEL,
                                dict(TINY_PRETRAIN, precision="fp32", clip_norm=1.0), ["en", "fr"], 1)
        cmd = fairseq_train_command(job, tmp_path / f"ck{deferred}", 1)
        if not deferred:
            cmd = [c for c in cmd if c not in ("--deferred-grad-norm", "--deferred-loss-log")]
        torch.manual_seed(3)  # the same initial weights
        cfg, task, trainer = build_trainer(cmd)
        itr = trainer.get_train_iterator(epoch=1).next_epoch_itr(shuffle=True)
        return [float(trainer.train_step([next(itr)])["loss"]) for _ in range(4)]

    late, now = losses(True), losses(False)
    assert late[0] == 0.0  # nothing finished to report at the first update
    assert late[1:] == pytest.approx(now[:-1], abs=1e-3)  # fairseq rounds the logged loss to 3 decimals
    assert np.isfinite(now).all() and len(set(now)) == len(now)
