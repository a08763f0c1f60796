"""A fine-tuning job: the grid cells of one (model, task, batch size, fine-tuning seed) trained
together, a single cell being a grid of one.

At the grid's small batches a cell's step is a few milliseconds of kernel launches and optimizer
work, whatever the batch. Cells that share the batch size and the seed see the same data in the
same order, so one job trains them as one batched model (xling.finetune.cell_encoder,
xling.finetune.cells): each cell keeps its own weights, Adam moments, learning rates and
schedule, its best epoch on English dev and its result record (``result_record``). With dropout
off each cell equals the same cell trained alone to float tolerance (``tests/test_finetune_grid.py``);
with dropout they differ by its noise. The loop (data order, epochs, best epoch) is
:func:`xling.finetune.loop.train_cells`, which also trains one cell of any other encoder
(:class:`xling.finetune.loop.ModuleCell`).

Fast steps (``GridSettings``): the batch goes to the device without a host sync, the cells'
losses are read once per epoch, torch's fused Adam updates each cell (skipping a cell whose loss
is not finite), and on request (default: on CUDA) the step is compiled and run under bf16
autocast; batches are then padded to a bounded set of lengths so that it compiles once per
length, not per batch.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import torch
from torch import nn
from torch.func import functional_call, vmap

from xling.finetune.cell_encoder import CellEncoder
from xling.finetune.cells import CellOptimizers, CellParameters
from xling.finetune.examples import TaskFiles, load_task_data
from xling.finetune.job import FinetuneJob
from xling.finetune.loop import ModuleCell, make_optimizer, set_seed, train_cells
from xling.finetune.result import result_record, write_result
from xling.finetune.tasks import TASKS, Item, TaskAdapter
from xling.model.encoder import freeze_language_specific, max_positions
from xling.model.text import WordsToSubwords

LR_KEYS = ("lr", "encoder_lr", "classifier_lr")


@dataclass(frozen=True)
class GridSettings:
    """How the grid's step runs (config ``finetune.grid_jobs``, whose schema gives each field's
    default and meaning); results do not depend on it beyond float rounding (bf16: its noise).

    ``compile``: torch.compile the forward and backward (None: on CUDA only; falls back to eager,
    with a log line, where compiling fails); ``compile_mode``: torch.compile's mode;
    ``bf16``: bf16 autocast with fp32 weights and optimizer (None: when compiled on CUDA, where
    the casts fuse into the kernels; eagerly every weight is cast anew each step, which made a
    batch-4 step slower on an H100 than fp32); ``buckets``:
    the padded lengths of a compiled step (None: ``default_buckets``); ``eval_batch_size``:
    sequences per scoring batch, every cell at once."""

    compile: bool | None
    compile_mode: str
    bf16: bool | None
    buckets: tuple[int, ...] | None
    eval_batch_size: int

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | None = None) -> GridSettings:
        """From a rule's plain ``params`` (a list of buckets), the schema's defaults for what they
        leave out (None or {}: all of them)."""
        from xling.config import section_defaults

        params = {**section_defaults("finetune", "grid_jobs"), **dict(params or {})}
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(params) - known)
        if unknown:
            raise ValueError(f"grid settings: unknown {unknown}; known: {sorted(known)}")
        if params.get("buckets") is not None:
            params["buckets"] = tuple(int(b) for b in params["buckets"])
        return cls(**params)

    def resolved(self, device: torch.device, max_seq_len: int) -> GridSettings:
        cuda = device.type == "cuda"
        buckets = tuple(sorted({b for b in (self.buckets or default_buckets(max_seq_len)) if b < max_seq_len}
                               | {max_seq_len}))
        if self.eval_batch_size < 1:
            raise ValueError(f"eval_batch_size must be positive, got {self.eval_batch_size}")
        compiled = cuda if self.compile is None else bool(self.compile)
        bf16 = cuda and compiled if self.bf16 is None else bool(self.bf16)
        return dataclasses.replace(self, compile=compiled, bf16=bf16, buckets=buckets)

    @property
    def lengths(self) -> tuple[int, ...]:
        """The padded lengths of :meth:`resolved` settings (``buckets`` resolved)."""
        if self.buckets is None:
            raise ValueError("grid settings not resolved: no buckets yet")
        return self.buckets


def default_buckets(max_seq_len: int) -> tuple[int, ...]:
    """Lengths 16, 24, 32, 48, 64, 96, ... (multiples of 8, each about 1.5x the last) up to
    ``max_seq_len``: at most a third of a batch is padding, and 256 tokens take 9 compiles."""
    out, n = [], 16
    while n < max_seq_len:
        out.append(n)
        n = n * 3 // 2 if n & (n - 1) == 0 else n * 4 // 3
        n = -(-n // 8) * 8
    return (*out, max_seq_len)


def bucket(length: int, buckets: tuple[int, ...]) -> int:
    """The smallest bucket that holds ``length`` tokens."""
    for b in buckets:
        if length <= b:
            return b
    raise ValueError(f"a sequence of {length} tokens is longer than the largest bucket {buckets[-1]}")


def check_grid(jobs: list[FinetuneJob]) -> None:
    """Cells of one grid job differ only in their learning rates."""
    if not jobs:
        raise ValueError("a grid job needs at least one cell")
    ref = jobs[0]
    ref_hp = ref.hp.tracked()
    for i, job in enumerate(jobs[1:], 1):
        hp = job.hp.tracked()
        if set(hp) != set(ref_hp):
            raise ValueError(f"grid cell {i}: hyperparameters {sorted(hp)}, cell 0 has {sorted(ref_hp)}")
        for key in hp:
            if key not in LR_KEYS and hp[key] != ref_hp[key]:
                raise ValueError(f"grid cell {i}: {key} {hp[key]!r}, cell 0 has {ref_hp[key]!r} "
                                 "(one grid job trains cells that differ only in learning rates)")
        for f in dataclasses.fields(FinetuneJob):
            if f.name != "hp" and getattr(job, f.name) != getattr(ref, f.name):
                raise ValueError(f"grid cell {i}: {f.name} {getattr(job, f.name)!r}, cell 0 has "
                                 f"{getattr(ref, f.name)!r}")


class _HeadModule(nn.Module):
    """The task with ``head`` as a submodule, so torch.func can call it with a cell's weights."""

    def __init__(self, task: TaskAdapter, head: nn.Module):
        super().__init__()
        self.task, self.head = task, head


class _Loss(_HeadModule):
    def forward(self, hidden: torch.Tensor, batch: dict) -> torch.Tensor:
        return self.task.loss(self.head, hidden, batch)


class _Predict(_HeadModule):
    def forward(self, hidden: torch.Tensor, batch: dict, items: list[Item]) -> list:
        return self.task.predict(self.head, hidden, batch, items)


def to_device(batch: dict, device: torch.device) -> dict:
    """The batch on ``device`` without waiting for it (pinned memory, asynchronous copy)."""
    if device.type != "cuda":
        return {k: v.to(device) for k, v in batch.items()}
    return {k: v.pin_memory().to(device, non_blocking=True) for k, v in batch.items()}


class GridModel:
    """M cells of one loaded encoder (an EncoderCore inside, as ``load_encoder`` gives) and a head."""

    def __init__(self, encoder, task: TaskAdapter, head: nn.Module, trainable: list[nn.Parameter], cells: int,
                 langs: list[str], device: torch.device, settings: GridSettings,
                 log: Callable[[str], None] = lambda msg: None):
        core = getattr(encoder, "encoder", None)
        self.cell_encoder = CellEncoder(core if core is not None else encoder)
        self.encoder, self.task, self.cells, self.device, self.settings, self.log = (
            encoder, task, cells, device, settings, log)
        self.pad = encoder.dictionary.pad()
        trained = {id(p) for p in trainable}
        used = {n for lang in langs for n in self.cell_encoder.used_parameters(encoder.lang_id(lang))}
        named = dict(self.cell_encoder.core.named_parameters())
        enc_trained = {n: p for n, p in named.items() if n in used and id(p) in trained}
        head = head.to(device)
        self.params = CellParameters(enc_trained, {f"head.{n}": p for n, p in head.named_parameters()}, cells,
                                     device)
        frozen = {n: p.detach().to(device) for n, p in named.items() if n in used and id(p) not in trained}
        self.weights = {**frozen, **{n: self.params.stacked[n] for n in enc_trained}}
        self.head_weights = {n: self.params.stacked[n] for n in self.params.head_names}
        self.loss_module, self.predict_module = _Loss(task, head), _Predict(task, head)
        self._losses = self._cell_losses
        if settings.compile:
            # one graph per padded length; raise dynamo's limit past the number of buckets
            torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit,
                                                       len(settings.lengths) + 2)
            self._losses = torch.compile(self._cell_losses, dynamic=False, mode=settings.compile_mode)

    def _autocast(self):
        return torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=bool(self.settings.bf16))

    def _cell_losses(self, weights: dict, head_weights: dict, batch: dict, lang: int,
                     training: bool = True) -> torch.Tensor:
        with self._autocast():
            tokens = batch["tokens"]
            hidden = self.cell_encoder(weights, tokens, lang, tokens.eq(self.pad), self.cells, training=training)

            def one(w, h):
                return functional_call(self.loss_module, w, (h, batch))

            losses = vmap(one, randomness="same")(head_weights, hidden)  # one dropout mask, as in the encoder
        return losses.float()

    def losses(self, batch: dict, lang: int) -> torch.Tensor:
        """The cells' training losses [M] of one batch (dropout on), with their graph."""
        self.loss_module.train(True)
        try:
            return self._losses(self.weights, self.head_weights, batch, lang)
        except Exception as err:  # noqa: BLE001 - any compiler failure: train eagerly instead
            if self._losses == self._cell_losses:
                raise
            self.log(f"torch.compile failed ({type(err).__name__}: {str(err)[:300]}); training eagerly")
            self._losses = self._cell_losses
            return self._losses(self.weights, self.head_weights, batch, lang)

    @torch.no_grad()
    def eval_losses(self, batch: dict, lang: int) -> torch.Tensor:
        """The cells' losses [M] of one batch with dropout off, eagerly: what a check compares."""
        self.loss_module.train(False)
        try:
            return self._cell_losses(self.weights, self.head_weights, batch, lang, training=False)
        finally:
            self.loss_module.train(True)

    @torch.no_grad()
    def predict(self, items: list[Item], lang: str) -> list[list]:
        """Predictions of every cell for ``items`` with ``lang``'s language-specific parameters."""
        self.predict_module.train(False)
        lang_id = self.encoder.lang_id(lang)
        order = sorted(range(len(items)), key=lambda i: len(items[i].ids))  # similar lengths: less padding
        preds: list[list] = [[None] * len(items) for _ in range(self.cells)]
        heads = [{n: t[m] for n, t in self.head_weights.items()} for m in range(self.cells)]
        size = self.settings.eval_batch_size
        for s in range(0, len(order), size):
            idx = order[s : s + size]
            chunk = [items[i] for i in idx]
            batch = self.task.batch(chunk, self.pad, self.device)
            tokens = batch["tokens"]
            with self._autocast():
                hidden = self.cell_encoder(self.weights, tokens, lang_id, tokens.eq(self.pad), self.cells,
                                           training=False)
            for m in range(self.cells):
                out = functional_call(self.predict_module, heads[m], (hidden[m].float(), batch, chunk))
                for i, p in zip(idx, out):
                    preds[m][i] = p
        return preds

    def evaluate(self, items: list[Item], lang: str) -> list[dict]:
        """Every cell's task scores of ``items``."""
        return [self.task.score(items, p) for p in self.predict(items, lang)]

    # -- what the loop (xling.finetune.loop.train_cells) calls --------------------------------------
    def start(self, jobs: list[FinetuneJob], total_steps: int) -> list[str]:
        self.optimizers, schedules = cell_optimizers(jobs, self.params, total_steps)
        return schedules

    def step(self, chunk: list[Item], lang: str) -> torch.Tensor:
        buckets = self.settings.lengths if self.settings.compile else ()
        return train_step(self, self.optimizers, chunk, self.encoder.lang_id(lang), buckets)

    def scores(self, items: list[Item], lang: str) -> list[dict]:
        return self.evaluate(items, lang)

    def keep(self, cell: int) -> None:
        self.params.keep(cell)

    def restore_best(self) -> None:
        self.params.restore_best()


def cell_optimizers(jobs: list[FinetuneJob], params: CellParameters, total_steps: int) -> tuple[CellOptimizers, list]:
    """Each cell's fused Adam and schedule, as ``make_optimizer`` builds its own job's; and the
    schedules' names."""
    schedules = []

    def make(m, enc, head):
        opt, sched, name = make_optimizer(jobs[m], [enc], [head], total_steps, fused=True)
        schedules.append(name)
        return opt, sched

    return CellOptimizers(params, make), schedules


def train_step(model: GridModel, optimizers: CellOptimizers, chunk: list[Item], lang: int,
               buckets: tuple[int, ...]) -> torch.Tensor:
    """One update of every cell on ``chunk`` (padded to a bucket if ``buckets``); the cells'
    losses [M], still on the device."""
    width = bucket(max(len(it.ids) for it in chunk), buckets) if buckets else 0
    batch = to_device(model.task.batch(chunk, model.pad, "cpu", width=width), model.device)
    losses = model.losses(batch, lang)
    losses.sum().backward()  # the cells share no weight: each gets its own loss's gradient
    optimizers.step(losses)
    return losses.detach()


def finetune_grid(jobs: list[FinetuneJob], encoder, words_to_subwords: Callable[[str], WordsToSubwords],
                  files: TaskFiles, device: str = "cpu", log: Callable[[str], None] | None = None,
                  stanford_home: str | None = None, settings: GridSettings | None = None,
                  as_module: bool = False) -> list[dict]:
    """Fine-tune every cell of ``jobs`` (one grid: the same job but for learning rates) on
    ``encoder`` in one process: one result record per cell, with the English dev and zero-shot
    target scores of the cell's best English-dev epoch. The pipeline's encoder (what
    ``load_encoder`` returns) trains as the grid's batched model, its weights left as they are;
    any other :class:`xling.model.encoder.Encoder`, or any with ``as_module``, trains one cell
    as a module, in place (what Liu et al.'s XNLI job and Figure 5 run; the reference the grid is
    tested against). Either way its language-specific parameters are marked frozen (paper 3.2).
    Extra test sets (``files.tgt_extra``, ``files.src_extra``) are scored with the target's test,
    by the same best-epoch weights."""
    t_start = time.time()
    check_grid(jobs)
    job = jobs[0]
    set_seed(job.seed)  # the head's initialisation and the data order: each cell's as if alone
    task: TaskAdapter = TASKS[job.task](job.hp)
    dev = torch.device(device)
    log = log or (lambda msg: None)
    limit = max_positions(encoder)
    if limit is not None and job.max_seq_len > limit:
        raise ValueError(f"max_seq_len {job.max_seq_len} exceeds the encoder's {limit} positions")
    data = load_task_data(job, task, encoder.dictionary, words_to_subwords, files, stanford_home)
    model: GridModel | ModuleCell
    if batched(encoder) and not as_module:
        settings = (settings or GridSettings.from_params()).resolved(dev, job.max_seq_len)
        trainable = freeze_language_specific(encoder)
        head = task.make_head(encoder.dim)
        model = GridModel(encoder, task, head, trainable, len(jobs), [job.src_lang, job.tgt_lang], dev, settings,
                          log)
        log(f"{len(jobs)} cells; compile {settings.compile}, bf16 {settings.bf16}, buckets {list(settings.lengths)}")
    elif len(jobs) == 1:
        encoder.to(dev)
        trainable = freeze_language_specific(encoder)
        model = ModuleCell(task, encoder, task.make_head(encoder.dim).to(dev), trainable, dev)
    else:
        raise ValueError(f"{len(jobs)} cells train together only on the pipeline's encoder "
                         f"(xling.model.checkpoint.LoadedEncoder), not a {type(encoder).__name__}")
    runs = train_cells(jobs, task, model, data, log)
    t3 = time.time()
    scores = [{"en_dev": s} for s in model.scores(data.items["en_dev"], job.src_lang)]
    for split, lang in data.scored(job):  # the target's dev and test, and any extra test sets, alike
        for cell, s in zip(scores, model.scores(data.items[split], lang)):
            cell[split] = s
    # the grid's times: its cells trained together
    timing = {"train_s": runs[0]["train_s"], "eval_s": runs[0]["eval_s"] + time.time() - t3,
              "total_s": time.time() - t_start}
    return [result_record(j, task, run, s, data, timing, dev) for j, run, s in zip(jobs, runs, scores)]


def batched(encoder) -> bool:
    """Whether the grid's batched model can train ``encoder``: the pipeline's encoder, an
    EncoderCore inside (xling.finetune.cell_encoder writes out its forward pass)."""
    from xling.pretrain.encoder import EncoderCore

    return isinstance(getattr(encoder, "encoder", None), EncoderCore)


def run_grid(jobs: list[FinetuneJob], checkpoint: Path, dictionary: Path, bpe: Path, files: TaskFiles,
             out_jsons: list[Path], device: str = "cpu", metas: list[dict] | None = None,
             log: Callable[[str], None] | None = None, stanford_home: str | None = None,
             settings: GridSettings | None = None) -> list[dict]:
    """The fine-tuning rule's job: load the pretrained encoder (``checkpoint`` with its
    ``dictionary``) and the setting's BPE (``bpe``: its manifest), fine-tune the cells of ``jobs``
    (:func:`finetune_grid`), write cell i's result.json (atomically) to ``out_jsons[i]`` with
    ``metas[i]``."""
    from xling.model import PretrainedModel

    if len(out_jsons) != len(jobs) or (metas is not None and len(metas) != len(jobs)):
        raise ValueError(f"{len(jobs)} cells need as many result paths (got {len(out_jsons)}) and metas")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {device} requested but CUDA is not available")
    model = PretrainedModel.xling(checkpoint, dictionary, bpe)
    results = finetune_grid(jobs, model.load(), model.subwords, files, device, log, stanford_home, settings)
    return [write_result(r, checkpoint, bpe, metas[i] if metas is not None else None, out_jsons[i])
            for i, r in enumerate(results)]
