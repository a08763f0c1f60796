"""Benchmark: the fine-tuning grid job (xling.finetune.grid: the M cells of one batch size trained
together in one process) against the same cells as separate jobs, each a grid of one (what a job
of one cell runs), and against the best single-cell step we can write (the encoder's own modules,
batches prebuilt on the device, fused Adam, compiled and bf16 like the grid when it is). One
process, a randomly initialised encoder of the given size, synthetic examples of each task's
typical length; the variants alternate block by block, after a warm-up block each (compilation
included there, and reported), and each reports min / median / max over ``--rounds`` blocks of
``--steps`` steps.

    python bench/bench_finetune.py                                   # CPU, the demo's model size
    python bench/bench_finetune.py --device cuda --layers 8 --dim 768 --heads 12 --ffn 3072 \\
        --vocab 80000 --tasks xnli --json ft.json                     # the paper's model on a GPU

Rates are cell-examples per second: a grid block trains M cells on ``steps`` batches (M x steps x
batch cell-examples); a separate job trains one cell, and M of them run one after another, so
one cell's rate is also theirs together. ``ratio_grid_over_*`` compares the grid's whole rate
with those. The cells of a grid are the paper grid's at that batch size (config/config.yaml;
``--cells`` overrides their number): learning rates do not change the cost of a step.

Before any block is timed, the three engines start from the same weights (the encoder, one head)
and their losses on the first batches, dropout off, must agree: every cell of the grid, the grid
of one and the single step, per batch, within what the device rounds (tests/support/rounding.py):
the reference is the single step's computation in float64 on the same device, the device's
rounding the single step's own distance from it in the run's precision, the largest over every
training batch of the row (a loss is one number a batch: a maximum over many batches cannot be
small by chance), and each engine within 4x that plus 1e-6 of the loss. A loss that is not
finite, then or after the timed blocks, stops the benchmark with no rate.

Job start-up (``--startup-runs``): a job is a fresh Python process that imports torch and the
package before it trains; the benchmark times that many such processes and reports the median.
``job_s`` then compares, for cells of ``--job-examples`` training examples each (default: the
demo's XNLI job), M separate jobs (M starts + M cells at today's rate) with one grid job (one
start + the grid at its rate). Extra grid variants (``--grid-variants``, e.g. ``fp32-eager
bf16-eager``) are measured the same way afterwards, one at a time: which precision pays where.

Each row (and grid variant) reports the most GPU memory it allocated (``peak_memory_gb``) and
what was still allocated once its models were freed (``memory_after_release_gb``): a grid model and
its compiled step hold each other, so the variants are freed explicitly (:func:`free`) before the
next is built.

``--json`` keeps every row; ``python -m xling.cluster.budget --finetune-rate-from`` plans the
fine-tuning jobs from ``examples_per_s.grid`` (one job per batch size)."""

from __future__ import annotations

import argparse
import copy
import dataclasses
import gc
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from xling.config import grid_cells, load_yaml
from xling.finetune.grid import GridModel, GridSettings, bucket, cell_optimizers, train_step
from xling.finetune.job import FinetuneJob, Hyperparameters
from xling.finetune.loop import make_optimizer
from xling.finetune.tasks import TASKS, Item
from xling.model.checkpoint import LoadedEncoder
from xling.model.encoder import freeze_language_specific
from xling.pretrain.dictionary import TokenDictionary
from xling.pretrain.encoder import MLMEncoder, paper_model_args

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the test support: the agreement's rounding bound
from support.rounding import FLOOR, ROUNDINGS, rounding_bound  # noqa: E402

NER_TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"]
N_DEPRELS = 37  # UD English-EWT v2.3's relation labels with subtypes, about
STARTUP = "import torch, xling.finetune.grid, xling.model.checkpoint"
CHECK_BATCHES = 3


def random_encoder(args) -> LoadedEncoder:
    torch.manual_seed(0)
    # the paper config's model (XLM's) at the given sizes
    margs = paper_model_args(encoder_layers=args.layers, encoder_embed_dim=args.dim, encoder_ffn_embed_dim=args.ffn,
                             encoder_attention_heads=args.heads, max_positions=args.max_positions)
    dictionary = TokenDictionary()
    for i in range(args.vocab - len(dictionary.symbols)):
        dictionary.add_symbol(f"w{i}")
    encoder = MLMEncoder(margs, len(dictionary), dictionary.pad(), 2, None)
    return LoadedEncoder(encoder, dictionary, ["en", "fr"])


def synthetic_items(task: str, n: int, args, dictionary, rng: np.random.Generator) -> list[Item]:
    """``n`` examples shaped like the task's: a sentence pair for XNLI, words of 1-2 pieces with
    a tag (NER) or a head and relation (parsing) on each first piece."""
    lo = dictionary.nspecial
    items = []
    for _ in range(n):
        if task == "xnli":
            length = int(rng.integers(args.xnli_tokens // 2, args.xnli_tokens * 3 // 2 + 1))
            ids = [dictionary.bos(), *rng.integers(lo, args.vocab, length - 2).tolist(), dictionary.eos()]
            label = int(rng.integers(3))
            items.append(Item(ids, label=label, gold=label))
            continue
        words = args.ner_words if task == "ner" else args.parsing_words
        n_words = int(rng.integers(max(1, words // 2), words * 3 // 2 + 1))
        ids, first = [dictionary.bos()], []
        for _ in range(n_words):
            first.append(len(ids))
            ids += rng.integers(lo, args.vocab, 1 + int(rng.random() < 0.3)).tolist()
        ids.append(dictionary.eos())
        if task == "ner":
            tags = rng.integers(len(NER_TAGS), size=n_words).tolist()
            items.append(Item(ids, first, targets=tags, gold=[NER_TAGS[t] for t in tags]))
        else:
            heads = [int(rng.integers(0, n_words)) if d > 0 else 0 for d in range(n_words)]
            heads = [h if h != d + 1 else 0 for d, h in enumerate(heads)]  # no word heads itself
            rels = rng.integers(N_DEPRELS, size=n_words).tolist()
            items.append(Item(ids, first, targets=rels, heads=heads,
                              gold=[(h, f"rel{r}") for h, r in zip(heads, rels)]))
    return items


def make_task(name: str, hp: Hyperparameters):
    task = TASKS[name](hp)
    if name == "xnli":
        task.fit_labels([])
    elif name == "ner":
        task.labels = list(NER_TAGS)
    else:
        task.labels = [f"rel{i}" for i in range(N_DEPRELS)]
        task.fallback_label = task.labels[0]
    return task


def grid_hyperparameters(name: str, batch: int, cells: int | None) -> list[Hyperparameters]:
    """The paper grid's cells of ``name`` at batch size ``batch`` (``cells``: that many, repeating)."""
    spec = load_yaml(REPO / "config" / "config.yaml")["finetune"][name]
    hps = [dict(c, batch_size=batch) for c in grid_cells(spec) if c["batch_size"] == spec["grid"]["batch_size"][0]]
    if name == "parsing":
        hps = [dict(h, arc_mlp=spec["arc_mlp"], label_mlp=spec["label_mlp"]) for h in hps]
    return [Hyperparameters.of(hps[i % len(hps)]) for i in range(cells or len(hps))]


def settings_tag(s: GridSettings) -> str:
    mode = "eager" if not s.compile else ("graphs" if s.compile_mode == "reduce-overhead" else "compiled")
    return f"{'bf16' if s.bf16 else 'fp32'}-{mode}"


def settings_from_tag(tag: str, base: GridSettings) -> GridSettings:
    precision, _, mode = tag.partition("-")
    if precision not in ("fp32", "bf16") or mode not in ("eager", "compiled", "graphs"):
        raise SystemExit(f"--grid-variants: {tag!r} is not <fp32|bf16>-<eager|compiled|graphs>")
    return dataclasses.replace(base, compile=mode != "eager", bf16=precision == "bf16",
                               compile_mode="reduce-overhead" if mode == "graphs" else "default")


def sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def stats(values: list[float]) -> dict:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


class Setup:
    """One (task, batch size) measurement: the encoder, the synthetic data, the cells' jobs."""

    def __init__(self, name: str, batch: int, args, device):
        self.name, self.batch, self.args, self.device = name, batch, args, device
        rng = np.random.default_rng(0)
        self.encoder = random_encoder(args)
        self.pad = self.encoder.dictionary.pad()
        self.hps = grid_hyperparameters(name, batch, args.cells)
        self.task = make_task(name, self.hps[0])
        n_train = batch * args.steps
        self.items = synthetic_items(name, n_train, args, self.encoder.dictionary, rng)
        self.chunks = [self.items[s : s + batch] for s in range(0, n_train, batch)]
        self.dev = synthetic_items(name, args.dev_examples, args, self.encoder.dictionary, rng)
        self.jobs = [FinetuneJob(task=name, src_lang="en", tgt_lang="fr", hp=hp, epochs=1, seed=1,
                                 max_seq_len=args.max_positions, warmup_fraction=0.1, epoch_size=n_train)
                     for hp in self.hps]
        self.trainable = freeze_language_specific(self.encoder)
        self.head = self.task.make_head(self.encoder.dim)  # every engine starts from a copy


class Runner:
    """An engine: ``block()`` trains ``steps`` steps, ``losses(batch)`` a batch's loss per cell with
    dropout off (no update), ``last`` the losses of its last step (on the device)."""

    def __init__(self, block, losses, model=None):
        self.block, self.losses, self.model, self.last = block, losses, model, None


def grid_runner(setup: Setup, settings: GridSettings, cells: int | None = None) -> Runner:
    """A block of the grid job: ``steps`` steps of every cell (train_step, what run_grid runs);
    ``cells``: the first that many (1: a job of one cell)."""
    s = settings.resolved(setup.device, setup.args.max_positions)
    jobs = setup.jobs[:cells]
    model = GridModel(setup.encoder, setup.task, copy.deepcopy(setup.head), setup.trainable, len(jobs),
                      ["en", "fr"], setup.device, s, log=print)
    optimizers, _ = cell_optimizers(jobs, model.params, 10 * len(setup.chunks))
    buckets = s.buckets if s.compile else ()

    def block():
        for chunk in setup.chunks:
            runner.last = train_step(model, optimizers, chunk, 0, buckets)

    def losses(chunk):
        width = bucket(max(len(it.ids) for it in chunk), buckets) if buckets else 0
        batch = {k: v.to(setup.device) for k, v in setup.task.batch(chunk, setup.pad, "cpu", width=width).items()}
        return model.eval_losses(batch, 0)

    runner = Runner(block, losses, model)
    return runner


def single_loss(core, head, task, batch: dict, pad: int, bf16: bool):
    """The best single step's loss of ``batch``: the encoder's modules called directly with the
    padding mask (no data-dependent branch), the task's loss; in bf16 autocast or not (in the
    modules' own dtype: float64 stays float64)."""
    tokens = batch["tokens"]
    with torch.autocast(tokens.device.type, dtype=torch.bfloat16, enabled=bf16):
        mask = tokens.eq(pad)
        positions = torch.arange(tokens.size(1), device=tokens.device)
        x = core.embed_tokens[0](tokens) + core.embed_positions[0](positions)[None]
        if core.embed_languages is not None:
            x = x + core.embed_languages.weight[0]
        x = core.dropout(core.emb_layer_norm[0](x)).masked_fill(mask.unsqueeze(-1), 0.0)
        for layer in list(core.language_layers[0]) + list(core.shared_layers):
            x = layer(x, src_key_padding_mask=mask)
        loss = task.loss(head, x, batch)
    return loss.to(torch.promote_types(loss.dtype, torch.float32))


@torch.no_grad()
def float64_losses(setup: Setup, chunks: list) -> torch.Tensor:
    """The single step's loss of each of ``chunks`` in float64 on the device, dropout off: the
    exact reference (copies of the encoder and the head; SDPA's math kernel, the one that takes
    float64)."""
    core = copy.deepcopy(setup.encoder.encoder).to(setup.device).double().eval()
    head = copy.deepcopy(setup.head).to(setup.device).double().eval()
    out = []
    with sdpa_kernel(SDPBackend.MATH):
        for chunk in chunks:
            batch = {k: v.to(setup.device) for k, v in setup.task.batch(chunk, setup.pad, "cpu").items()}
            out.append(single_loss(core, head, setup.task, batch, setup.pad, False).cpu())
    return torch.stack(out)


def single_runner(setup: Setup, settings: GridSettings) -> Runner:
    """A block of the best single-cell step we can write: the encoder's modules called directly
    with the padding mask (no data-dependent branch), the task's loss, fused Adam, batches
    prebuilt and padded on the device; compiled and bf16 as ``settings`` say."""
    s = settings.resolved(setup.device, setup.args.max_positions)
    enc, task, device = setup.encoder.to(setup.device), setup.task, setup.device
    core = enc.encoder
    head = copy.deepcopy(setup.head).to(device)
    optimizer, _, _ = make_optimizer(setup.jobs[0], setup.trainable, head, 10 * len(setup.chunks), fused=True)

    def loss_of(batch):
        return single_loss(core, head, task, batch, setup.pad, bool(s.bf16))

    step_loss = torch.compile(loss_of, dynamic=False, mode=s.compile_mode) if s.compile else loss_of

    def on_device(chunk):
        width = bucket(max(len(it.ids) for it in chunk), s.buckets) if s.compile else 0
        return {k: v.to(device) for k, v in task.batch(chunk, setup.pad, "cpu", width=width).items()}

    batches = [on_device(chunk) for chunk in setup.chunks]

    def block():
        enc.train(True)
        head.train(True)
        for b in batches:
            loss = step_loss(b)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        runner.last = loss.detach().reshape(1)

    @torch.no_grad()
    def losses(chunk):
        enc.train(False)
        head.train(False)
        return loss_of(on_device(chunk)).reshape(1)

    runner = Runner(block, losses)
    return runner


def agreement(setup: Setup, runners: dict[str, Runner], bf16: bool) -> dict:
    """The engines' losses on the first batches before any update, dropout off: every cell of
    each engine, per batch, within the device's rounding of the float64 single step (above); all
    finite."""
    exact = float64_losses(setup, setup.chunks)  # [batches]: every training batch of the row
    single = torch.stack([runners["single_best"].losses(chunk).float().cpu()[0] for chunk in setup.chunks])
    measured = float((single.double() - exact).abs().max())  # the device's rounding, over every batch
    bounds = [rounding_bound(measured, abs(float(e))) for e in exact[:CHECK_BATCHES]]
    got = {k: [r.losses(chunk).float().cpu() for chunk in setup.chunks[:CHECK_BATCHES]] for k, r in runners.items()}
    rec: dict = {"batches": len(bounds), "rounding_batches": len(exact), "precision": "bf16" if bf16 else "fp32",
                 "reference": "the single step in float64 on the same device", "float64": exact.tolist(),
                 "rounding": measured, "roundings": ROUNDINGS, "floor": FLOOR, "bound": bounds,
                 "losses": {k: [g.tolist() for g in v] for k, v in got.items()}}
    problems = []
    for k, v in got.items():
        cells = torch.stack(v).double()  # [batches, cells]
        if not torch.isfinite(cells).all():
            problems.append(f"{k}: a loss is not finite ({cells.tolist()})")
            continue
        apart = (cells - exact[: len(bounds), None]).abs().amax(1)  # [batches]: the farthest cell
        rec[f"{k}_apart"] = apart.tolist()
        for b, (a, bound) in enumerate(zip(apart.tolist(), bounds)):
            if a > bound:
                problems.append(f"{k}: batch {b + 1}'s losses {cells[b].tolist()} lie {a:.3g} from the float64 "
                                f"single step's {float(exact[b]):.6f}, bound {bound:.3g} (the device's rounding "
                                f"{measured:.3g})")
    rec["ok"], rec["problems"] = not problems, problems
    return rec


def timed(fn, device) -> float:
    sync(device)
    t0 = time.perf_counter()
    own = fn()
    sync(device)
    return own if isinstance(own, float) else time.perf_counter() - t0


def free(device) -> float | None:
    """Frees what the caller's ``del`` left: a grid model and its compiled step hold each other
    (``torch.compile`` of a bound method), so only the garbage collector ends them, at whatever
    allocation triggers it; then the allocator's cache. Returns the GPU memory still allocated
    (GiB; None on a CPU)."""
    gc.collect()
    if device.type != "cuda":
        return None
    torch.cuda.empty_cache()
    return torch.cuda.memory_allocated(device) / 2**30


def peak_memory(device, reset: bool = False) -> float | None:
    """The GPU memory allocated at most (GiB) since the last reset; ``reset``: start anew."""
    if device.type != "cuda":
        return None
    if reset:
        torch.cuda.reset_peak_memory_stats(device)
        return None
    return torch.cuda.max_memory_allocated(device) / 2**30


def bench_task(name: str, batch: int, args, device, settings: GridSettings) -> dict:
    peak_memory(device, reset=True)
    setup = Setup(name, batch, args, device)
    cells, per_block = len(setup.jobs), batch * args.steps
    single = settings if args.single_compile is None else dataclasses.replace(settings, compile=args.single_compile)
    runners = {"grid": grid_runner(setup, settings), "one_cell": grid_runner(setup, settings, cells=1),
               "single_best": single_runner(setup, single)}
    model = runners["grid"].model
    agree = agreement(setup, runners, model.settings.bf16)
    if not agree["ok"]:
        raise SystemExit(f"{name} batch {batch}: the engines do not train the same cells, no rate measured: "
                         + "; ".join(agree["problems"]))
    warmup = {k: timed(r.block, device) for k, r in runners.items()}  # compilation, allocations, optimizer state
    times: dict[str, list[float]] = {k: [] for k in runners}
    for r in range(args.rounds):
        for k in (list(runners) if r % 2 == 0 else list(reversed(runners))):
            times[k].append(timed(runners[k].block, device))
    finite = {k: bool(torch.isfinite(r.last).all()) for k, r in runners.items()}
    if not all(finite.values()):
        raise SystemExit(f"{name} batch {batch}: a loss is not finite after the timed blocks ({finite}): the rates "
                         "time diverged training, not reported")
    # cell-examples per second, per block: the grid trains every cell, a separate job one
    rates = {k: [per_block * (cells if k == "grid" else 1) / t for t in v] for k, v in times.items()}
    t0 = time.perf_counter()
    model.evaluate(setup.dev, "en")
    dev_rate = cells * len(setup.dev) / (time.perf_counter() - t0)
    med = {k: stats(v)["median"] for k, v in rates.items()}
    row = {"task": name, "batch_size": batch, "cells": cells, "settings": settings_tag(model.settings),
           "single_settings": settings_tag(single.resolved(device, args.max_positions)),
           "examples_per_s": med, "blocks": {k: stats(v) for k, v in rates.items()},
           "grid_per_cell_examples_per_s": med["grid"] / cells,
           "ratio_grid_over_one_cell": med["grid"] / med["one_cell"],
           "ratio_grid_over_single_best": med["grid"] / med["single_best"],
           "warmup_s": warmup, "dev_cell_examples_per_s": dev_rate,
           "mean_tokens": float(np.mean([len(it.ids) for it in setup.items])), "agreement": agree}
    row["peak_memory_gb"] = peak_memory(device)
    del model, runners
    row["memory_after_release_gb"] = free(device)
    variants = {}
    for tag in args.grid_variants:
        peak_memory(device, reset=True)
        variant = grid_runner(setup, settings_from_tag(tag, settings))
        w = timed(variant.block, device)
        v = [cells * per_block / timed(variant.block, device) for _ in range(args.rounds)]
        variants[tag] = {**stats(v), "warmup_s": w, "peak_memory_gb": peak_memory(device)}
        del variant
        variants[tag]["memory_after_release_gb"] = free(device)
    if variants:
        row["grid_variants"] = variants
    return row


def startup_seconds(runs: int) -> float:
    """Median wall time of a fresh Python that imports torch and the fine-tuning package."""
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", STARTUP], check=True)
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def job_seconds(row: dict, startup: float, examples: int) -> dict:
    """M separate jobs against one grid job, for cells of ``examples`` training examples."""
    e, m = row["examples_per_s"], row["cells"]
    separate = m * (startup + examples / e["one_cell"])
    grid = startup + m * examples / e["grid"]
    return {"separate_jobs_s": separate, "grid_job_s": grid, "ratio_separate_over_grid": separate / grid}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--ffn", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=4000, help="dictionary size (the paper's joint BPE: about 80k)")
    ap.add_argument("--max-positions", type=int, default=256)
    ap.add_argument("--tasks", nargs="+", default=["xnli", "ner", "parsing"], choices=sorted(TASKS))
    ap.add_argument("--batches", nargs="+", type=int, default=None,
                    help="batch sizes (default: the paper's grid: XNLI 4 and 8, NER and parsing 16 and 32)")
    ap.add_argument("--cells", type=int, default=None, help="cells per grid job (default: the paper grid's)")
    # typical English training examples: MultiNLI premise + hypothesis about 33 words, WikiAnn
    # about 8 words, UD English-EWT v2.3 16.3 words (204,585 words in 12,543 sentences)
    ap.add_argument("--xnli-tokens", type=int, default=48, help="mean pieces of a premise-hypothesis pair")
    ap.add_argument("--ner-words", type=int, default=8)
    ap.add_argument("--parsing-words", type=int, default=16)
    ap.add_argument("--steps", type=int, default=30, help="training steps per timed block")
    ap.add_argument("--rounds", type=int, default=5, help="timed blocks per variant (at least 5)")
    ap.add_argument("--dev-examples", type=int, default=256)
    ap.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                    help="torch.compile the grid's and the single-cell step (default: on CUDA only)")
    ap.add_argument("--single-compile", action=argparse.BooleanOptionalAction, default=None,
                    help="compile the single-cell step too (default: as the grid's)")
    ap.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=None,
                    help="bf16 autocast in both (default: on CUDA only)")
    ap.add_argument("--buckets", nargs="+", type=int, default=None, help="padded lengths of compiled steps")
    ap.add_argument("--grid-variants", nargs="*", default=[], help="more grid settings to measure, e.g. fp32-eager")
    ap.add_argument("--startup-runs", type=int, default=5, help="fresh processes timed for a job's start (0: none)")
    ap.add_argument("--job-examples", type=int, default=1000,
                    help="training examples of one cell's job for job_s (the demo's XNLI: 2 epochs x 500)")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here (after every row)")
    args = ap.parse_args(argv)
    if args.rounds < 5:
        ap.error("--rounds: at least 5 blocks per variant")
    torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda but no GPU is visible")
    device = torch.device(args.device)
    settings = GridSettings.from_params(dict(compile=args.compile, bf16=args.bf16,
                                             buckets=tuple(args.buckets) if args.buckets else None))
    grid = {"xnli": [4, 8], "ner": [16, 32], "parsing": [16, 32]}
    startup = startup_seconds(args.startup_runs) if args.startup_runs else None
    result = {"device": torch.cuda.get_device_name(0) if device.type == "cuda" else f"cpu ({args.threads} thread(s))",
              "torch": torch.__version__,
              "model": {"layers": args.layers, "dim": args.dim, "heads": args.heads, "ffn": args.ffn,
                        "vocab": args.vocab},
              "steps_per_block": args.steps, "rounds": args.rounds, "startup_s": startup, "rows": []}
    for name in args.tasks:
        for batch in args.batches or grid[name]:
            row = bench_task(name, batch, args, device, settings)
            if startup is not None:
                row["job_s"] = job_seconds(row, startup, args.job_examples)
            result["rows"].append(row)
            e, b = row["examples_per_s"], row["blocks"]["grid"]
            print(f"{name:8s} batch {batch:3d} x {row['cells']} cells ({row['settings']}): grid {e['grid']:9.1f} "
                  f"cell-ex/s (min {b['min']:.1f}, max {b['max']:.1f}; {row['grid_per_cell_examples_per_s']:.1f} per "
                  f"cell)  separate jobs {e['one_cell']:8.1f}  best single {e['single_best']:8.1f}  "
                  f"grid/separate {row['ratio_grid_over_one_cell']:.2f}  grid/single "
                  f"{row['ratio_grid_over_single_best']:.2f}", flush=True)
            if row["peak_memory_gb"] is not None:
                print(f"    peak GPU memory {row['peak_memory_gb']:.2f} GiB; "
                      f"{row['memory_after_release_gb']:.2f} GiB left once freed", flush=True)
            for tag, v in row.get("grid_variants", {}).items():
                print(f"    grid {tag:14s} {v['median']:9.1f} cell-ex/s (min {v['min']:.1f}, max {v['max']:.1f}; "
                      f"warm-up {v['warmup_s']:.1f} s)", flush=True)
            if "job_s" in row:
                j = row["job_s"]
                print(f"    jobs of {args.job_examples} examples a cell, {startup:.2f} s start-up each: "
                      f"{row['cells']} separate {j['separate_jobs_s']:.1f} s, one grid job {j['grid_job_s']:.1f} s "
                      f"(x{j['ratio_separate_over_grid']:.2f})", flush=True)
            if args.json:
                args.json.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
