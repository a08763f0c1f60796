"""torch.compile of the encoder's training loss (pretrain.compile): the compiled loss is the eager
one in value and gradient, in one graph per language and batch shape, a failing compile falls back
to eager with one warning, and the setting turns it on where it pays (GPUs) or where asked."""

from __future__ import annotations

import logging

import pytest
import torch

from support.inprocess import build, build_trainer
from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data
from xling.pretrain import compiling
from xling.pretrain.command import fairseq_train_command
from xling.pretrain.job import PretrainJob

MODEL = dict(TINY_MODEL, layers=2, dim=32, ffn_dim=64, dropout=0.0, attention_dropout=0.0)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_toy_data(tmp_path_factory.mktemp("bin") / "en-fr", ["en", "fr"], n_train=200, seed=7)


def command(data_dir, tmp_path, compile_setting, sep_emb=True, **pretrain):
    setting = {"separate": {"embeddings": sep_emb, "layers": 1}}
    job = PretrainJob.build(data_dir, setting, MODEL, dict(TINY_PRETRAIN, compile=compile_setting, **pretrain),
                            ["en", "fr"], 1)
    return fairseq_train_command(job, tmp_path / "ck")


def batches(task, lang, sizes=(8, 5)):
    task.load_dataset(f"train_{lang}")
    ds = task.dataset(f"train_{lang}")
    return [ds.collater([ds[i] for i in range(n)]) for n in sizes]


def test_settings():
    assert compiling.compile_wanted("auto", "cuda") and not compiling.compile_wanted("auto", "cpu")
    assert compiling.compile_wanted("on", "cpu") and not compiling.compile_wanted("off", "cuda")
    with pytest.raises(ValueError, match="compile setting"):
        compiling.compile_wanted("yes", "cpu")
    assert compiling.compile_unavailable("cpu") is None  # this machine has a C++ compiler


def test_the_setting_reaches_the_model(data_dir, tmp_path, monkeypatch, caplog):
    assert not build(command(data_dir, tmp_path, "auto"))[2].encoder.compiled  # a CPU job: eager
    assert build(command(data_dir, tmp_path, True))[2].encoder.compiled
    assert not build(command(data_dir, tmp_path, False))[2].encoder.compiled
    monkeypatch.setattr("xling.pretrain.fairseq_plugin.mlm_model.compile_unavailable", lambda device: "no backend")
    with caplog.at_level(logging.WARNING):
        assert not build(command(data_dir, tmp_path, True))[2].encoder.compiled
    assert [r.getMessage() for r in caplog.records if "torch.compile" in r.getMessage()] == [
        "torch.compile unavailable (no backend): the encoder runs eagerly"]


def test_compiled_loss_is_the_eager_loss_in_one_graph_per_language_and_shape(data_dir, tmp_path):
    """Dynamo and AOTAutograd trace the whole loss (fullgraph: a graph break would raise) for each
    language's parameters and batch shape (padded or not); inductor's kernels are not built here
    (aot_eager), which keeps the test fast and tests what the GPU's compile traces."""
    torch._dynamo.reset()
    _, task, model, _ = build(command(data_dir, tmp_path, False, sample_break_mode="eos"))
    model.train()
    compiled = compiling.CompiledOrEager(model.encoder.mlm_loss, backend="aot_eager", fullgraph=True)
    counts = torch._dynamo.utils.counters
    counts.clear()
    for lang_id, lang in enumerate(("en", "fr")):
        for sample in batches(task, lang):
            net = sample["net_input"]
            args = (net["src_tokens"], net["src_lang"], net["padded"], sample["masked_index"],
                    sample["masked_target"])
            assert net["src_lang"] == lang_id and net["padded"]
            model.zero_grad()
            eager = model.encoder.mlm_loss(*args)
            eager.backward()
            grads = {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}
            model.zero_grad()
            loss = compiled(*args)
            loss.backward()
            assert compiled.active
            torch.testing.assert_close(loss, eager, rtol=1e-5, atol=1e-5)
            for k, p in model.named_parameters():
                if k in grads:
                    torch.testing.assert_close(p.grad, grads[k], rtol=1e-5, atol=1e-6, msg=k)
    assert counts["stats"]["unique_graphs"] <= 4  # 2 languages x 2 shapes at most
    assert not counts["graph_break"]
    torch._dynamo.reset()


def test_a_failing_compile_falls_back_to_eager_with_one_warning(caplog):
    def broken_backend(gm, example_inputs):
        raise RuntimeError("no kernels today")

    torch._dynamo.reset()
    fn = compiling.CompiledOrEager(lambda x: (x * 2).sum(), backend=broken_backend)
    x = torch.arange(4.0)
    with caplog.at_level(logging.WARNING):
        assert fn(x) == 12.0 and fn(x) == 12.0
    assert not fn.active
    warnings = [r.getMessage() for r in caplog.records if "torch.compile failed" in r.getMessage()]
    assert len(warnings) == 1 and "no kernels today" in warnings[0]
    torch._dynamo.reset()

    def own_error(x):
        raise ValueError("a mistake of the caller")

    with pytest.raises(ValueError, match="caller"):  # not taken for a compile failure
        compiling.CompiledOrEager(own_error, backend="aot_eager")(x)
    torch._dynamo.reset()


def test_the_first_step_of_each_shape_is_timed_apart(data_dir, tmp_path, caplog):
    torch._dynamo.reset()
    cfg, task, trainer = build_trainer(command(data_dir, tmp_path, False))
    trainer.model.encoder.compile_loss(backend="aot_eager")
    itr = trainer.get_train_iterator(epoch=1).next_epoch_itr(shuffle=True)
    samples = [next(itr) for _ in range(4)]
    keys = {(s["net_input"]["src_lang"], tuple(s["net_input"]["src_tokens"].shape), len(s["masked_index"]),
             s["net_input"]["padded"]) for s in samples}
    with caplog.at_level(logging.INFO):
        for sample in samples:
            trainer.train_step([sample])
    lines = [r.getMessage() for r in caplog.records if "torch.compile of the encoder included" in r.getMessage()]
    assert len(lines) == len(keys) and trainer.get_num_updates() == 4
    torch._dynamo.reset()


@pytest.mark.slow
def test_inductor_compiles_the_loss_on_the_cpu(data_dir, tmp_path):
    """The default backend (inductor, C++ kernels here; Triton on a GPU) gives the eager loss.
    Minutes on two cores: marked slow."""
    torch._dynamo.reset()
    _, task, model, _ = build(command(data_dir, tmp_path, False, sep_emb=False))
    model.train()
    sample = batches(task, "en", sizes=(4,))[0]
    net = sample["net_input"]
    args = (net["src_tokens"], net["src_lang"], net["padded"], sample["masked_index"], sample["masked_target"])
    eager = model.encoder.mlm_loss(*args)
    compiled = compiling.CompiledOrEager(model.encoder.mlm_loss)
    loss = compiled(*args)
    loss.backward()
    assert compiled.active
    torch.testing.assert_close(loss, eager, rtol=1e-4, atol=1e-4)
    torch._dynamo.reset()
