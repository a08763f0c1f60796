"""The training loop of every fine-tuning job (paper 3.2): train on English, keep each cell's
epoch with the best English dev score, restore it at the end.

A job trains the cells of one grid (one (model, task, batch size, seed): cells that differ only in
their learning rates) at once. They see one stream of seeded permutations of the training set, so
an epoch may be shorter or longer than the data (XLM's XNLI epochs are 20,000 examples). What runs
a step is a :class:`Cells`:

- the grid's batched model (:class:`xling.finetune.grid.GridModel`): every cell of the pipeline's
  encoder in one forward and backward pass, a grid of one included; every Table 1 job runs it;
- :class:`ModuleCell`: one cell of any encoder with the interface of
  :class:`xling.model.encoder.Encoder` and a head, trained as a module (m-BERT and the study's
  models in Liu et al.'s XNLI job, Figure 5's new layers on a fixed bottom, the tests' encoders).

The loop itself (the data order, the epochs, the best epoch) is this module's :func:`train_cells`
for both.
"""

from __future__ import annotations

import copy
import math
import random
import time
from typing import Callable, Protocol, Sequence

import numpy as np
import torch

from xling.finetune.examples import TaskData
from xling.finetune.job import FinetuneJob
from xling.finetune.schedule import SCHEDULES
from xling.finetune.tasks import Item, TaskAdapter
from xling.model.encoder import Encoder
from xling.progress import progress


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _forward(encoder: Encoder, tokens: torch.Tensor, lang: str, pad: int) -> torch.Tensor:
    return encoder.encode(tokens, lang, padding_mask=tokens.eq(pad))[-1]


@torch.no_grad()
def evaluate(task: TaskAdapter, encoder: Encoder, head, items: list[Item], lang: str, device,
             batch_size: int = 32) -> dict:
    """The task's scores of ``items`` with ``lang``'s language-specific parameters."""
    encoder.train(False)
    head.train(False)
    pad = encoder.dictionary.pad()
    order = sorted(range(len(items)), key=lambda i: len(items[i].ids))  # similar lengths: less padding
    preds: list = [None] * len(items)
    for s in range(0, len(order), batch_size):
        idx = order[s : s + batch_size]
        chunk = [items[i] for i in idx]
        batch = task.batch(chunk, pad, device)
        hidden = _forward(encoder, batch["tokens"], lang, pad)
        for i, p in zip(idx, task.predict(head, hidden, batch, chunk)):
            preds[i] = p
    return task.score(items, preds)


def make_optimizer(job: FinetuneJob, shared: Sequence[torch.Tensor], head: torch.nn.Module | Sequence[torch.Tensor],
                   total_steps: int, fused: bool | None = None):
    """Adam over the trainable encoder parameters and the head (a module or its tensors; XNLI: one
    learning rate each), and its schedule over ``total_steps``. ``fused``: torch's fused kernel
    (None: torch's default, foreach)."""
    hp = job.hp
    head_params: list[torch.Tensor] = list(head.parameters()) if isinstance(head, torch.nn.Module) else list(head)
    encoder_lr, head_lr = hp.learning_rates()
    if hp.split_lr:
        groups = [{"params": list(shared), "lr": encoder_lr}, {"params": head_params, "lr": head_lr}]
    else:
        groups = [{"params": list(shared) + head_params, "lr": encoder_lr}]
    optimizer = torch.optim.Adam(groups, fused=fused)
    schedule = job.schedule or ("constant" if hp.split_lr else "warmup_linear")
    factor = SCHEDULES[schedule]
    warmup = float(job.warmup_fraction)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: factor(step, total_steps, warmup))
    return optimizer, scheduler, schedule


class Cells(Protocol):
    """What :func:`train_cells` needs of the model it trains: ``cells`` weight sets, each with its
    own optimizer, schedule and best epoch."""

    cells: int

    def start(self, jobs: list[FinetuneJob], total_steps: int) -> list[str]:
        """Make each cell's optimizer and schedule (over ``total_steps``); their schedules' names."""

    def step(self, chunk: list[Item], lang: str) -> torch.Tensor:
        """One update of every cell on ``chunk`` (dropout on); the cells' losses [M], not read back."""

    def scores(self, items: list[Item], lang: str) -> list[dict]:
        """Every cell's task scores of ``items`` with ``lang``'s language-specific parameters."""

    def keep(self, cell: int) -> None:
        """Remember cell ``cell``'s weights as its best."""

    def restore_best(self) -> None:
        """Every cell's best weights back in place."""


class ModuleCell:
    """One cell: ``encoder`` (an :class:`Encoder`) and ``head`` trained as modules, ``trainable``
    the encoder's parameters that train (the rest stay as they are)."""

    cells = 1

    def __init__(self, task: TaskAdapter, encoder: Encoder, head: torch.nn.Module,
                 trainable: list[torch.nn.Parameter], device):
        self.task, self.encoder, self.head, self.trainable = task, encoder, head, list(trainable)
        self.device = torch.device(device)
        self.pad = encoder.dictionary.pad()
        self.best: tuple[list[torch.Tensor], dict] | None = None
        self.training = False

    def start(self, jobs: list[FinetuneJob], total_steps: int) -> list[str]:
        if len(jobs) != 1:
            raise ValueError(f"a ModuleCell trains one cell, got {len(jobs)}")
        self.optimizer, self.scheduler, schedule = make_optimizer(jobs[0], self.trainable, self.head, total_steps)
        return [schedule]

    def step(self, chunk: list[Item], lang: str) -> torch.Tensor:
        if not self.training:
            self.encoder.train(True)
            self.head.train(True)
            self.training = True
        batch = self.task.batch(chunk, self.pad, self.device)
        loss = self.task.loss(self.head, _forward(self.encoder, batch["tokens"], lang, self.pad), batch)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.scheduler.step()
        return loss.detach().reshape(1)

    def scores(self, items: list[Item], lang: str) -> list[dict]:
        self.training = False  # evaluate switches dropout off
        return [evaluate(self.task, self.encoder, self.head, items, lang, self.device)]

    def keep(self, cell: int) -> None:
        # only the trained encoder parameters change; kept on the CPU until the end
        self.best = ([p.detach().to("cpu", copy=True) for p in self.trainable], copy.deepcopy(self.head.state_dict()))

    def restore_best(self) -> None:
        assert self.best is not None, "restore_best before any epoch was kept"
        with torch.no_grad():
            for p, saved in zip(self.trainable, self.best[0]):
                p.copy_(saved.to(p.device))
        self.head.load_state_dict(self.best[1])


def train_cells(jobs: list[FinetuneJob], task: TaskAdapter, model: Cells, data: TaskData,
                log: Callable[[str], None]) -> list[dict]:
    """Train every cell of ``model`` on ``data``'s English training set (the cells of ``jobs``:
    one grid, so one batch size, seed and length) and keep each cell's epoch with the best English
    dev score, restored at the end. One run record per cell."""
    job, cells = jobs[0], model.cells
    train_items = data.items["train"]
    batch_size = int(job.hp.batch_size)
    per_epoch = job.epoch_size or len(train_items)
    steps_per_epoch = math.ceil(per_epoch / batch_size)
    total_steps = steps_per_epoch * job.epochs
    schedules = model.start(jobs, total_steps)
    gen = torch.Generator().manual_seed(job.seed)
    order: list[int] = []
    history: list[list[dict]] = [[] for _ in range(cells)]
    best: list[tuple[float, int] | None] = [None] * cells
    train_s = eval_s = 0.0
    for epoch in range(1, job.epochs + 1):
        t0 = time.time()
        loss_sum: torch.Tensor | None = None
        for _ in progress(range(steps_per_epoch), desc=f"{job.task} x{cells} epoch {epoch}/{job.epochs}",
                          unit="step"):
            # a stream of seeded permutations: an epoch may be shorter or longer than the data
            while len(order) < batch_size:
                order.extend(torch.randperm(len(train_items), generator=gen).tolist())
            chunk = [train_items[i] for i in order[:batch_size]]
            del order[:batch_size]
            losses = model.step(chunk, job.src_lang).double()
            loss_sum = losses if loss_sum is None else loss_sum + losses
        assert loss_sum is not None
        train_loss = (loss_sum / steps_per_epoch).tolist()  # the epoch's one read of the device
        t1 = time.time()
        dev = [s[task.metric] for s in model.scores(data.items["en_dev"], job.src_lang)]
        t2 = time.time()
        train_s += t1 - t0
        eval_s += t2 - t1
        for m in range(cells):
            history[m].append({"epoch": epoch, "train_loss": float(train_loss[m]), "en_dev": dev[m]})
            kept = best[m]
            if kept is None or dev[m] > kept[0]:
                best[m] = (dev[m], epoch)
                model.keep(m)
        log(f"epoch {epoch}: loss " + " ".join(f"{x:.4f}" for x in train_loss)
            + f" | en dev {task.metric} " + " ".join(f"{x:.2f}" for x in dev))
    model.restore_best()
    best_epochs = [b[1] for b in best if b is not None]
    assert len(best_epochs) == cells  # the first epoch is every cell's best so far
    return [{"best_epoch": best_epochs[m], "history": history[m], "epoch_size": per_epoch, "steps": total_steps,
             "schedule": schedules[m], "train_s": train_s, "eval_s": eval_s} for m in range(cells)]
