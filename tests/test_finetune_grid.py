"""The cells of a fine-tuning grid trained together in one job (xling.finetune.grid): with dropout
off they equal each cell trained alone as a module (xling.finetune.loop.ModuleCell, through the
same loop), a grid of one included; a diverging cell leaves the others alone, and each cell's
result.json is the one its own job writes."""

from __future__ import annotations

import copy
import json
import math
import random
from pathlib import Path

import pytest
import torch

from support.tiny_checkpoint import BERT_OPTIONS
from support.toy_tasks import LANGS, WORDS, files, finetune_one, job, per_word, write_task_dir
from xling.config import grid_cells, hp_id, load_yaml
from xling.finetune import GridSettings, finetune_grid, run_grid
from xling.finetune.cell_encoder import CellEncoder
from xling.finetune.cells import CellOptimizers, CellParameters
from xling.finetune.grid import bucket, check_grid, default_buckets
from xling.finetune.job import Hyperparameters, cells_by_batch_size
from xling.finetune.tasks import TASKS, Item
from xling.model.checkpoint import LoadedEncoder
from xling.pretrain.dictionary import TokenDictionary
from xling.pretrain.encoder import MLMEncoder, paper_model_args
from xling.report.collect import read_result

# the cells' weights are rows of one buffer (xling.finetune.cells); autograd's note on it is expected
pytestmark = pytest.mark.filterwarnings("ignore:grad and param do not obey the gradient layout contract")

EAGER = GridSettings.from_params(dict(compile=False, bf16=False))
HP = {  # three cells of one batch size, as a grid job gets them
    "xnli": [{"batch_size": 8, "encoder_lr": lr, "classifier_lr": 3 * lr} for lr in (1e-4, 3e-4, 1e-3)],
    "ner": [{"batch_size": 8, "lr": lr} for lr in (1e-4, 1e-3, 3e-3)],
    "parsing": [{"batch_size": 8, "lr": lr, "arc_mlp": 16, "label_mlp": 8} for lr in (1e-4, 1e-3, 3e-3)],
}


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory):
    return write_task_dir(tmp_path_factory.mktemp("grid_tasks"), seed=1, sizes={"train": 64, "dev": 30, "test": 30})


# XLM's model (the paper config's): language embeddings, the tied head, eps 1e-12, no dropout after the activation
XLM = {"language_embeddings": True, "mlm_head": "xlm", "layer_norm_eps": 1e-12, "activation_dropout": 0.0,
       "param_init": "xlm"}


def tiny_encoder(separate_embeddings=False, separate_layers=0, dropout=0.0, attention_dropout=None,
                 seed=0, **options) -> LoadedEncoder:
    """The pretraining stage's encoder (what load_encoder returns), small and randomly initialised;
    ``options``: the model's options over BERT's (``XLM``: XLM's)."""
    torch.manual_seed(seed)
    args = paper_model_args(encoder_layers=2, encoder_embed_dim=32, encoder_ffn_embed_dim=64,
                            encoder_attention_heads=4, max_positions=64, dropout=dropout,
                            attention_dropout=dropout if attention_dropout is None else attention_dropout,
                            separate_embeddings=separate_embeddings, separate_layers=separate_layers,
                            **{**BERT_OPTIONS, "activation_dropout": dropout, **options})
    d = TokenDictionary()
    for w in WORDS:
        d.add_symbol(w)
    return LoadedEncoder(MLMEncoder(args, len(d), d.pad(), len(LANGS), None), d, LANGS)


def assert_same_result(single: dict, grid: dict) -> None:
    """The record of a grid cell is its own job's: same keys, same scores and epochs, the same
    training losses to float tolerance; only the clock and the host may differ."""
    assert set(grid) == set(single)
    for key in set(single) - {"timing", "host", "history"}:
        assert grid[key] == single[key], key
    assert set(grid["timing"]) == set(single["timing"])
    for g, s in zip(grid["history"], single["history"], strict=True):
        assert g["epoch"] == s["epoch"] and g["en_dev"] == s["en_dev"]
        assert g["train_loss"] == pytest.approx(s["train_loss"], rel=1e-5)


@pytest.mark.parametrize("task", ["xnli", "ner", "parsing"])
def test_grid_equals_separate_jobs(task, task_dir, no_dropout):
    jobs = [job(task, hp, 3, seed=3) for hp in HP[task]]
    base = tiny_encoder()
    singles = [finetune_one(j, copy.deepcopy(base), per_word, files(task_dir, task), as_module=True) for j in jobs]
    grid = finetune_grid(jobs, copy.deepcopy(base), per_word, files(task_dir, task), settings=EAGER)
    for s, g in zip(singles, grid, strict=True):
        assert_same_result(s, g)
    # the cells learnt different things (their learning rates differ): not one cell copied thrice
    assert len({tuple(h["train_loss"] for h in g["history"]) for g in grid}) == len(jobs)


@pytest.mark.parametrize("dropout", [0.0, 0.1])
@pytest.mark.parametrize("task", ["xnli", "ner", "parsing"])
def test_a_grid_of_one_equals_the_cell_trained_as_a_module(task, task_dir, dropout):
    """A one-cell job (the demo's grids: one cell a batch size) runs the paper run's batched
    model; it gives what the same cell trained alone as a module gives: the same scores and best
    epoch, the training losses to float tolerance (the batched model's matrix products and fused
    Adam round differently). With one cell the batched forward draws its dropout masks as the
    module does, in the same order: dropout on, they still agree."""
    j = job(task, HP[task][1], 3, seed=3)
    base = tiny_encoder(dropout=dropout, **XLM)
    alone = finetune_one(j, copy.deepcopy(base), per_word, files(task_dir, task), as_module=True)
    grid = finetune_one(j, copy.deepcopy(base), per_word, files(task_dir, task), settings=EAGER)
    assert_same_result(alone, grid)


def test_grid_with_language_embeddings_equals_separate_jobs(task_dir, no_dropout):
    """XLM's language embeddings: every cell trains its own table (English's row moves, the
    target's stays as pretrained), and the target is scored with its own row."""
    jobs = [job("ner", hp, 2, seed=4) for hp in HP["ner"]]
    base = tiny_encoder(**XLM)
    singles = [finetune_one(j, copy.deepcopy(base), per_word, files(task_dir, "ner"), as_module=True) for j in jobs]
    grid = finetune_grid(jobs, copy.deepcopy(base), per_word, files(task_dir, "ner"), settings=EAGER)
    for s, g in zip(singles, grid, strict=True):
        assert_same_result(s, g)


def test_grid_with_frozen_language_parts_equals_separate_jobs(task_dir, no_dropout):
    """Separate embeddings and a separate bottom layer: frozen weights have no cell axis, the
    bottom is computed once for all cells, and the target's own parts score the target."""
    jobs = [job("ner", hp, 2, seed=5) for hp in HP["ner"]]
    base = tiny_encoder(separate_embeddings=True, separate_layers=1)
    singles = [finetune_one(j, copy.deepcopy(base), per_word, files(task_dir, "ner"), as_module=True) for j in jobs]
    grid = finetune_grid(jobs, copy.deepcopy(base), per_word, files(task_dir, "ner"), settings=EAGER)
    for s, g in zip(singles, grid, strict=True):
        assert_same_result(s, g)


@pytest.mark.parametrize("sep_emb,sep_layers,options", [(False, 0, {}), (True, 1, {}), (False, 0, XLM), (True, 1, XLM)])
def test_cell_encoder_is_the_modules_forward_and_backward(sep_emb, sep_layers, options):
    """Each cell's states and gradients are those of the module holding that cell's weights (with
    XLM's language embeddings too: each cell's own table, read at the language's row)."""
    enc = tiny_encoder(sep_emb, sep_layers, **options)
    if options:
        torch.nn.init.normal_(enc.encoder.embed_languages.weight)  # rows far apart: a wrong row would show
    core = enc.encoder
    cells = 2
    trainable = {id(p) for p in enc.shared_parameters()} - {
        id(p) for lang in LANGS for p in enc.language_specific_parameters(lang)}
    named = dict(core.named_parameters())
    ce = CellEncoder(core)
    used = ce.used_parameters(1)
    gen = torch.Generator().manual_seed(0)
    weights = {}
    for n in used:
        p = named[n].detach()
        if id(named[n]) in trainable:  # each cell its own values
            weights[n] = torch.stack([p + 0.05 * torch.randn(p.shape, generator=gen) for _ in range(cells)])
            weights[n].requires_grad_(True)
        else:
            weights[n] = p
    tokens = torch.randint(4, len(enc.dictionary), (3, 7), generator=gen)
    tokens[0, 0], tokens[1, 5:] = enc.dictionary.bos(), enc.dictionary.pad()
    pad = tokens.eq(enc.dictionary.pad())
    out = ce(weights, tokens, 1, pad, cells, training=False)
    assert out.shape == (cells, 3, 7, 32)
    probe = torch.randn(out.shape, generator=gen)
    (out * probe).sum().backward()
    for m in range(cells):
        cell = copy.deepcopy(enc)
        with torch.no_grad():
            for n, w in weights.items():
                if w.dim() > named[n].dim():
                    cell.encoder.get_parameter(n).copy_(w[m])
        ref = cell.encode(tokens, "fr", padding_mask=pad)[-1]
        torch.testing.assert_close(out[m], ref, rtol=1e-5, atol=1e-5)
        (ref * probe[m]).sum().backward()
        for n, w in weights.items():
            if w.requires_grad:
                torch.testing.assert_close(w.grad[m], cell.encoder.get_parameter(n).grad, rtol=1e-4, atol=1e-5)
    frozen = [n for n, w in weights.items() if not w.requires_grad]
    assert bool(frozen) == (sep_emb or sep_layers > 0)


def test_a_diverging_cell_does_not_spoil_the_others(task_dir, no_dropout):
    """A cell whose learning rate blows it up (losses become NaN) is skipped from then on; the
    other cells end exactly as they do in a grid without it, and the job finishes."""
    hp = HP["ner"]
    bad = {**hp[1], "lr": math.inf}
    base = tiny_encoder()
    with_bad = finetune_grid([job("ner", h, 2, seed=2) for h in (hp[0], bad, hp[2])], copy.deepcopy(base), per_word,
                             files(task_dir, "ner"), settings=EAGER)
    without = finetune_grid([job("ner", h, 2, seed=2) for h in (hp[0], hp[2])], copy.deepcopy(base), per_word,
                            files(task_dir, "ner"), settings=EAGER)
    for g, ref in zip((with_bad[0], with_bad[2]), without, strict=True):
        assert_same_result(ref, g)
    assert not all(math.isfinite(h["train_loss"]) for h in with_bad[1]["history"])
    json.dumps(with_bad[1])


def test_dropout_masks_are_shared_by_the_cells(task_dir, one_thread):
    """With dropout on (hidden states and the head), two cells of the same learning rates train
    identically, as two jobs of one seed would: one mask for all cells; and the masks act. Bit for
    bit on one thread (on two, the cells' sums may be split differently: the losses then differ
    in the 8th digit)."""
    hp = HP["ner"][1]
    jobs = [job("ner", hp, 2, seed=6) for _ in range(2)]
    base = tiny_encoder(dropout=0.3, attention_dropout=0.0)
    same = finetune_grid(jobs, copy.deepcopy(base), per_word, files(task_dir, "ner"), settings=EAGER)
    assert same[0]["history"] == same[1]["history"] and same[0]["scores"] == same[1]["scores"]
    quiet = tiny_encoder(dropout=0.0)
    off = finetune_grid(jobs[:1], quiet, per_word, files(task_dir, "ner"), settings=EAGER)
    assert off[0]["history"][0]["train_loss"] != same[0]["history"][0]["train_loss"]


def test_cell_optimizers_skip_only_the_non_finite_cell():
    """found_inf of torch's fused Adam, per cell: a cell with a NaN loss keeps its weights and
    moments; the others take the step plain Adam takes."""
    torch.manual_seed(0)
    enc = {"w": torch.randn(3, 4)}
    head = {"b": torch.randn(5)}
    params = CellParameters(enc, head, cells=3, device="cpu")
    lrs = [0.1, 0.2, 0.3]

    def make(m, e, h):
        opt = torch.optim.Adam([{"params": [e], "lr": lrs[m]}, {"params": [h], "lr": 2 * lrs[m]}], fused=True)
        return opt, torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0)

    opts = CellOptimizers(params, make)
    grads = torch.randn(3, params.width)
    grads[1] = float("nan")
    params.grad.copy_(grads)
    before = params.flat.clone()
    opts.step(torch.tensor([1.0, float("nan"), 2.0]))
    assert torch.equal(params.flat[1], before[1])
    assert all(not s or torch.count_nonzero(s["exp_avg"]) == 0 for s in opts.optimizers[1].state.values())
    assert torch.count_nonzero(params.grad) == 0  # cleared for the next step
    for m in (0, 2):
        ref = {n: v.detach().clone().requires_grad_(True) for n, v in (("w", enc["w"]), ("b", head["b"]))}
        adam = torch.optim.Adam([{"params": [ref["w"]], "lr": lrs[m]}, {"params": [ref["b"]], "lr": 2 * lrs[m]}])
        for n in ref:
            ref[n].grad = params._view(grads, n)[m].clone()
        adam.step()
        for n in ref:
            torch.testing.assert_close(params.stacked[n][m], ref[n].detach())


@pytest.mark.parametrize("task", ["xnli", "ner", "parsing"])
def test_padding_to_a_bucket_changes_no_loss(task, no_dropout):
    """A compiled step pads batches to a bucket's length: the loss is the same."""
    torch.manual_seed(0)
    adapter = TASKS[task](Hyperparameters.of(HP[task][0]))
    rng = random.Random(0)
    items = []
    for _ in range(4):
        n = rng.randint(2, 5)
        ids = [0] + [rng.randint(4, 20) for _ in range(n)] + [2]
        if task == "xnli":
            adapter.fit_labels([])
            items.append(Item(ids, label=rng.randint(0, 2)))
        else:
            adapter.labels = ["O", "B-X", "I-X", "nsubj", "obj"]
            heads = [0] + [1] * (n - 1)
            items.append(Item(ids, list(range(1, n + 1)), targets=[rng.randint(0, 4) for _ in range(n)], heads=heads))
    adapter.fallback_label = "O"
    head = adapter.make_head(8)
    plain, padded = adapter.batch(items, 1, "cpu"), adapter.batch(items, 1, "cpu", width=16)
    assert plain["tokens"].size(1) == 7 and padded["tokens"].size(1) == 16
    hidden = torch.randn(4, 16, 8)
    loss = adapter.loss(head, hidden[:, :7], plain)
    torch.testing.assert_close(adapter.loss(head, hidden, padded), loss)


def test_buckets_bound_the_shapes():
    assert default_buckets(256) == (16, 24, 32, 48, 64, 96, 128, 192, 256)
    assert default_buckets(20) == (16, 20)
    assert all(b % 8 == 0 for b in default_buckets(256))
    assert bucket(17, (16, 24)) == 24 and bucket(16, (16, 24)) == 16
    with pytest.raises(ValueError, match="longer than the largest bucket 24"):
        bucket(25, (16, 24))
    s = GridSettings.from_params(dict(buckets=(32, 300))).resolved(torch.device("cpu"), 64)
    assert s.buckets == (32, 64) and s.compile is False and s.bf16 is False
    with pytest.raises(ValueError, match=r"unknown \['bucket'\]"):
        GridSettings.from_params({"bucket": [16]})


def test_grid_jobs_must_differ_only_in_learning_rates():
    ok = [job("ner", {"batch_size": 8, "lr": lr}, 2, seed=1) for lr in (1e-4, 2e-4)]
    check_grid(ok)
    with pytest.raises(ValueError, match="grid cell 1: batch_size 16, cell 0 has 8"):
        check_grid([ok[0], job("ner", {"batch_size": 16, "lr": 1e-4}, 2, seed=1)])
    with pytest.raises(ValueError, match="grid cell 1: seed 2, cell 0 has 1"):
        check_grid([ok[0], job("ner", {"batch_size": 8, "lr": 1e-4}, 2, seed=2)])
    with pytest.raises(ValueError, match="at least one cell"):
        check_grid([])


def test_a_grid_job_per_batch_size_covers_the_grid():
    """The paper's grids as grid jobs: XNLI's 18 cells in two jobs of 9 (one per batch size), each
    cell in exactly one job, and a job's cells differ only in learning rates."""
    cfg = load_yaml(Path(__file__).resolve().parents[1] / "config" / "config.yaml")["finetune"]
    for task, jobs, per_job in (("xnli", 2, 9), ("ner", 2, 3), ("parsing", 2, 3)):
        by_batch = cells_by_batch_size(cfg[task])
        assert sorted(by_batch) == sorted(cfg[task]["grid"]["batch_size"]) and len(by_batch) == jobs
        assert all(len(cells) == per_job for cells in by_batch.values())
        ids = [hp_id(c) for cells in by_batch.values() for c in cells]
        assert sorted(ids) == sorted(hp_id(c) for c in grid_cells(cfg[task]))
        for b, cells in by_batch.items():
            check_grid([job(task, c, 1, seed=1) for c in cells])
            assert all(hp_id(c).startswith(f"bs{b}_") for c in cells)


def test_compiled_grid_equals_eager(task_dir, no_dropout):
    """torch.compile of the step (here on CPU, one padded length) gives the eager results."""
    jobs = [job("xnli", hp, 1, seed=4) for hp in HP["xnli"][:2]]
    base = tiny_encoder()
    eager = finetune_grid(jobs, copy.deepcopy(base), per_word, files(task_dir, "xnli"), settings=EAGER)
    logs = []
    compiled = finetune_grid(jobs, copy.deepcopy(base), per_word, files(task_dir, "xnli"), log=logs.append,
                             settings=GridSettings.from_params(dict(compile=True, bf16=False, buckets=(64,))))
    assert not any("failed" in line for line in logs), logs
    for e, c in zip(eager, compiled, strict=True):
        assert_same_result(e, c)


def test_a_failing_compiler_falls_back_to_eager(task_dir, no_dropout, monkeypatch):
    def broken(fn, **kw):
        def run(*a, **k):
            raise RuntimeError("no C compiler")
        return run

    monkeypatch.setattr(torch, "compile", broken)
    jobs = [job("ner", hp, 1, seed=4) for hp in HP["ner"][:2]]
    base = tiny_encoder()
    logs = []
    fallback = finetune_grid(jobs, copy.deepcopy(base), per_word, files(task_dir, "ner"), log=logs.append,
                             settings=GridSettings.from_params(dict(compile=True, bf16=False)))
    eager = finetune_grid(jobs, copy.deepcopy(base), per_word, files(task_dir, "ner"), settings=EAGER)
    assert sum("torch.compile failed (RuntimeError: no C compiler); training eagerly" in line for line in logs) == 1
    for e, f in zip(eager, fallback, strict=True):
        assert_same_result(e, f)


def test_bf16_autocast_trains_close_to_fp32(task_dir, no_dropout):
    jobs = [job("xnli", hp, 2, seed=4) for hp in HP["xnli"][1:]]
    base = tiny_encoder()
    fp32 = finetune_grid(jobs, copy.deepcopy(base), per_word, files(task_dir, "xnli"), settings=EAGER)
    bf16 = finetune_grid(jobs, copy.deepcopy(base), per_word, files(task_dir, "xnli"),
                         settings=GridSettings.from_params(dict(compile=False, bf16=True)))
    for a, b in zip(fp32, bf16, strict=True):
        for ha, hb in zip(a["history"], b["history"], strict=True):
            assert hb["train_loss"] == pytest.approx(ha["train_loss"], rel=2e-2)
            assert abs(hb["en_dev"] - ha["en_dev"]) <= 20


@pytest.fixture(scope="module")
def job_inputs(task_dir, tmp_path_factory):
    from support.tiny_checkpoint import write_tiny_checkpoint

    sentences = {}
    for lang in LANGS:
        words = [line.split("\t")[0] for line in (task_dir / "ner" / lang / "train.bio").read_text().split("\n")
                 if line]
        sentences[lang] = [" ".join(words[i : i + 8]) for i in range(0, len(words), 8)]
    return write_tiny_checkpoint(tmp_path_factory.mktemp("grid_job"), sentences)


def test_run_grid_writes_what_separate_jobs_write(task_dir, job_inputs, tmp_path, no_dropout):
    """The Snakemake grid job: each cell's result.json has its own job's content, at its own path,
    and the report reads it as any cell's."""
    ckpt, bpe, dictionary = job_inputs
    jobs = [job("ner", hp, 2, seed=1) for hp in HP["ner"][:2]]
    paths = [tmp_path / "finetune" / "default" / "en-fr" / "seed1" / "ner" / f"bs8_lr{hp['lr']:g}" / "seed1" /
             "result.json" for hp in HP["ner"][:2]]
    metas = [{"setting": "default", "hp_id": p.parents[1].name} for p in paths]
    run_grid(jobs, ckpt, dictionary, bpe, files(task_dir, "ner"), paths, metas=metas,
             settings=GridSettings.from_params(dict(compile=False)))
    for j, p, meta in zip(jobs, paths, metas, strict=True):
        [own] = run_grid([j], ckpt, dictionary, bpe, files(task_dir, "ner"), [tmp_path / "own" / "result.json"],
                         metas=[meta], settings=GridSettings.from_params(dict(compile=False)))
        saved = json.loads(p.read_text())
        assert_same_result(json.loads(json.dumps(own)), saved)
        assert saved["meta"] == meta and not list(p.parent.glob(".*tmp"))
        cell = read_result(p)
        assert (cell.hp_id, cell.en_dev) == (meta["hp_id"], saved["en_dev"])
    with pytest.raises(ValueError, match="2 cells need as many result paths"):
        run_grid(jobs, ckpt, dictionary, bpe, files(task_dir, "ner"), paths[:1])


def test_finetune_grid_workflow_script(task_dir, job_inputs, tmp_path):
    """workflow/scripts/finetune_grid.py with the objects Snakemake injects."""
    import runpy
    from pathlib import Path
    from types import SimpleNamespace

    from snakemake.iocontainers import Namedlist

    ckpt, bpe, dictionary = job_inputs
    tokenize = {lang: {"moses_lang": lang, "segmenter": "none", "lowercase": False, "stanford_model": None}
                for lang in LANGS}
    jobs = [{"task": "ner", "src_lang": "en", "tgt_lang": "fr", "hp": hp, "epochs": 1, "seed": 1, "max_seq_len": 64,
             "schedule": "warmup_linear", "warmup_fraction": 0.1, "epoch_size": None, "max_train_examples": None,
             "tokenize": tokenize} for hp in HP["ner"][:2]]
    outs = [str(tmp_path / "r" / f"c{i}" / "result.json") for i in range(2)]
    task_files = files(task_dir, "ner")
    sm = SimpleNamespace(
        input=Namedlist(fromdict={"checkpoint": str(ckpt), "bpe": str(bpe), "dictionary": str(dictionary),
                                  **{k: str(getattr(task_files, k)) for k in ("train", "en_dev", "tgt_dev",
                                                                               "tgt_test")}}),
        output=Namedlist(outs),
        params=Namedlist(fromdict={"jobs": jobs, "metas": [{"hp_id": "a"}, {"hp_id": "b"}],
                                   "grid": {"compile": False, "buckets": [32, 64]}}),
        threads=1, resources=Namedlist(fromdict={"gpu": 0}), log=[str(tmp_path / "log" / "grid.log")],
        rule="finetune_grid", wildcards=Namedlist(fromdict={"task": "ner", "bs": "8"}),
    )
    script = Path(__file__).resolve().parents[1] / "workflow" / "scripts" / "finetune_grid.py"
    runpy.run_path(str(script), init_globals={"snakemake": sm}, run_name="__snakemake__")
    recs = [json.loads(Path(p).read_text()) for p in outs]
    assert [r["meta"]["hp_id"] for r in recs] == ["a", "b"] and [r["hp"] for r in recs] == HP["ner"][:2]
    log = (tmp_path / "log" / "grid.log").read_text()
    assert "epoch 1:" in log
    summary = json.loads(log.strip().splitlines()[-1])
    assert summary["rule"] == "finetune_grid" and [c["tgt_test"] for c in summary["cells"]] == [
        r["tgt_test"] for r in recs]


@pytest.mark.gpu
@pytest.mark.slow  # compiled: 24 s on an H100
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("compiled", [False, True])
def test_grid_steps_do_not_wait_for_the_gpu(task_dir, compiled):
    """After a warm-up, training steps (batch to the device, forward, backward, each cell's Adam)
    queue their work without one host sync: torch raises at any."""
    from xling.finetune.examples import load_task_data
    from xling.finetune.grid import GridModel, cell_optimizers, train_step
    from xling.model.encoder import freeze_language_specific

    jobs = [job("parsing", hp, 1, seed=1) for hp in HP["parsing"]]
    enc = tiny_encoder(dropout=0.1)
    task = TASKS["parsing"](jobs[0].hp)
    data = load_task_data(jobs[0], task, enc.dictionary, per_word, files(task_dir, "parsing"))
    device = torch.device("cuda")
    settings = GridSettings.from_params(dict(compile=compiled, bf16=True, buckets=(64,)))
    settings = settings.resolved(device, 64)
    model = GridModel(enc, task, task.make_head(enc.dim), freeze_language_specific(enc), 3, LANGS, device, settings)
    optimizers, _ = cell_optimizers(jobs, model.params, 100)
    items = data.items["train"]
    for s in range(0, 16, 8):  # warm-up: allocations, optimizer state, compilation
        train_step(model, optimizers, items[s : s + 8], 0, settings.buckets)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for s in range(16, 48, 8):
            losses = train_step(model, optimizers, items[s : s + 8], 0, settings.buckets)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert torch.isfinite(losses).all()
