"""torch.compile of the encoder's training loss (pretrain.compile): the compiled loss is the eager
one in value and gradient, in one graph per language and batch shape; training batches are padded
to static shapes (an epoch's short last batch takes no graph of its own and makes none dynamic);
a failing compile, forward or backward, and a graph past the model's bound fall back to eager with
one warning; and the setting turns it on where it pays (GPUs, steps of a large model) or where
asked."""

from __future__ import annotations

import logging

import pytest
import torch

from support.inprocess import build, build_trainer, parse_command
from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data
from xling.pretrain import compiling
from xling.pretrain.batches import bucket_length, length_buckets, pad_to_shape
from xling.pretrain.command import fairseq_train_command
from xling.pretrain.fairseq_plugin.mlm_model import step_flops
from xling.pretrain.job import PretrainJob
from xling.pretrain.schedule import train_flops_per_token

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
    # auto on a GPU: only a step large enough to pay for its compile
    big, small = compiling.MIN_STEP_FLOPS, compiling.MIN_STEP_FLOPS / 10
    assert compiling.compile_wanted("auto", "cuda", big) and not compiling.compile_wanted("auto", "cuda", small)
    assert compiling.compile_wanted("on", "cuda", small) and not compiling.compile_wanted("auto", "cpu", big)


def test_a_step_of_the_paper_model_compiles_under_auto_and_the_testbeds_does_not(data_dir, tmp_path):
    """The step's FLOPs as the model sees them in its arguments: the command's batch and length."""
    cfg = parse_command(command(data_dir, tmp_path, "auto"))
    vocab = 136
    flops = step_flops(cfg.model, vocab)
    per_token = train_flops_per_token(MODEL["layers"], MODEL["dim"], MODEL["ffn_dim"], MODEL["tokens_per_sample"],
                                      vocab, TINY_PRETRAIN["mask_prob"])
    assert flops == pytest.approx(per_token * TINY_PRETRAIN["batch_size_per_gpu"] * MODEL["tokens_per_sample"])
    assert not compiling.compile_wanted("auto", "cuda", flops)
    # the demo's model and batch, and the paper's (80k vocabulary, 96 streams of 256)
    demo = train_flops_per_token(8, 64, 256, 64, 4000, 0.15) * 64 * 64  # make demo-full's 64 streams
    paper = train_flops_per_token(8, 768, 3072, 256, 79_897, 0.15) * 96 * 256
    assert not compiling.compile_wanted("auto", "cuda", demo) and compiling.compile_wanted("auto", "cuda", paper)


def test_compile_threads_follow_the_jobs_cores():
    assert compiling.compile_threads({"OMP_NUM_THREADS": "3"}) == 3
    assert compiling.compile_threads({"OMP_NUM_THREADS": "3", "TORCHINDUCTOR_COMPILE_THREADS": "8"}) is None
    assert compiling.compile_threads({}) is None  # inductor's own choice


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


def test_a_batch_padded_to_a_static_shape_gives_the_same_loss_and_gradients(data_dir, tmp_path):
    """A language's short last batch, padded to the full streams and a longer bucket: the same
    summed loss and gradients (no dropout), the predicted positions moved with their streams."""
    _, task, model, _ = build(command(data_dir, tmp_path, False, sample_break_mode="eos"))
    model.train()
    d = task.source_dictionary
    for sample in batches(task, "fr", sizes=(5,)):
        net = sample["net_input"]
        b, t = net["src_tokens"].shape
        length = bucket_length(t + 1, MODEL["tokens_per_sample"])
        padded = pad_to_shape(sample, 16, length, d.bos(), d.pad(), 0.15)
        pnet = padded["net_input"]
        assert tuple(pnet["src_tokens"].shape) == (16, length) and pnet["padded"]
        assert len(padded["masked_index"]) % 8 == 0 and padded["n_predicted"] == sample["n_predicted"]
        flat = pnet["src_tokens"].reshape(-1)
        n = sample["n_predicted"]
        assert torch.equal(flat[padded["masked_index"][:n]], net["src_tokens"].reshape(-1)[sample["masked_index"][:n]])
        assert (pnet["src_tokens"][b:, 0] == d.bos()).all() and (pnet["src_lang_id"] == net["src_lang_id"][0]).all()
        losses, grads = [], []
        for s in (sample, padded):
            model.zero_grad()
            x = s["net_input"]
            loss = model.encoder.mlm_loss(x["src_tokens"], x["src_lang"], x["padded"], s["masked_index"],
                                          s["masked_target"])
            loss.backward()
            losses.append(loss.detach())
            grads.append({k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None})
        torch.testing.assert_close(losses[1], losses[0], rtol=1e-5, atol=1e-5)
        assert grads[0].keys() == grads[1].keys()
        for k in grads[0]:
            torch.testing.assert_close(grads[1][k], grads[0][k], rtol=1e-4, atol=1e-6, msg=k)
    assert length_buckets(256) == [16, 32, 64, 128, 256] and length_buckets(16) == [16]
    assert bucket_length(17, 64) == 32 and bucket_length(64, 64) == 64
    with pytest.raises(ValueError, match="longer than"):
        bucket_length(65, 64)


def test_an_epoch_compiles_one_static_graph_per_language_and_padding(data_dir, tmp_path, caplog):
    """A whole epoch through the trainer, short last batches included: every graph has the full
    batch's shape (none dynamic, none for a remainder), each is logged when it is compiled and
    its first step timed apart, and the loss stays compiled."""
    torch._dynamo.reset()
    cfg, task, trainer = build_trainer(command(data_dir, tmp_path, False, batch_size_per_gpu=12,
                                                 save_interval_updates=None))
    enc = trainer.model.encoder
    enc.compile_loss(backend="aot_eager")
    assert enc._compiled_loss.max_graphs == 2 * len(length_buckets(MODEL["tokens_per_sample"])) * 2
    itr = trainer.get_train_iterator(epoch=1).next_epoch_itr(shuffle=True)
    samples = list(itr)
    assert {s["net_input"]["src_tokens"].shape[0] for s in samples} > {12}  # the epoch has short batches
    with caplog.at_level(logging.INFO):
        for sample in samples:
            trainer.train_step([sample])
    assert enc.compiled and trainer.get_num_updates() == len(samples)
    messages = [r.getMessage() for r in caplog.records]
    graphs = [m for m in messages if m.startswith("torch.compile: graph")]
    timed = [m for m in messages if "torch.compile of the encoder included" in m]
    assert 1 <= len(graphs) == enc._compiled_loss.graphs <= 4 and len(timed) == len(graphs)  # 2 languages x padded
    assert all("(12, 64)" in m for m in graphs), graphs
    assert not any("torch.compile failed" in m for m in messages)
    torch._dynamo.reset()


def test_a_graph_beyond_the_bound_falls_back_to_eager_with_one_warning(caplog):
    torch._dynamo.reset()
    limit = torch._dynamo.config.recompile_limit
    fn = compiling.CompiledOrEager(lambda x: (x * 2).sum(), max_graphs=1, backend="aot_eager")
    with caplog.at_level(logging.INFO):
        assert fn(torch.arange(4.0)) == 12.0 and fn.active and fn.graphs == 1
        assert fn(torch.arange(5.0)) == 20.0  # a second shape: past the bound, computed eagerly
    assert not fn.active
    warnings = [r.getMessage() for r in caplog.records if "torch.compile failed" in r.getMessage()]
    assert len(warnings) == 1 and "beyond the 1 this model can need" in warnings[0], warnings
    assert torch._dynamo.config.recompile_limit == limit  # patched for the call only
    torch._dynamo.reset()


def test_a_failing_backward_compile_falls_back_before_the_backward(caplog):
    """The backward graph is compiled with the forward, inside the fallback, not lazily at the
    first .backward() (whose failure would escape it)."""
    from torch._dynamo.backends.common import aot_autograd

    def broken_backward(gm, example_inputs):
        raise RuntimeError("no backward kernels today")

    torch._dynamo.reset()
    backend = aot_autograd(fw_compiler=lambda gm, example_inputs: gm, bw_compiler=broken_backward)
    w = torch.ones(3, requires_grad=True)
    fn = compiling.CompiledOrEager(lambda x: (x * w).sum(), backend=backend)
    with caplog.at_level(logging.WARNING):
        loss = fn(torch.arange(3.0))
        loss.backward()
    assert not fn.active and torch.equal(w.grad, torch.arange(3.0))
    warnings = [r.getMessage() for r in caplog.records if "torch.compile failed" in r.getMessage()]
    assert len(warnings) == 1 and "no backward kernels today" in warnings[0], warnings
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
