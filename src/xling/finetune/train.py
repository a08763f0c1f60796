"""One fine-tuning job (one grid cell): train on English, select the epoch on English dev, test
zero-shot on the target language with its own language-specific parameters (paper 3.2)."""

from __future__ import annotations

import copy
import json
import math
import platform
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from xling.finetune.encoder import Encoder, freeze_language_specific
from xling.finetune.job import FinetuneJob
from xling.finetune.schedule import SCHEDULES
from xling.finetune.tasks import TASKS, Item, TaskAdapter
from xling.finetune.text import WordEncoder, WordsToSubwords, line_and_word_tokenizers
from xling.io import atomic_write
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


@dataclass(frozen=True)
class TaskFiles:
    """The task files of one job: English train and dev, the target's dev (optional) and test."""

    train: Path
    en_dev: Path
    tgt_test: Path
    tgt_dev: Path | None = None


@dataclass
class TaskData:
    items: dict[str, list[Item]]  # train, en_dev, tgt_dev (when given), tgt_test
    truncated: dict[str, int]


def load_split(job: FinetuneJob, task: TaskAdapter, name: str, path: Path, lang: str, dictionary,
               words_to_subwords: WordsToSubwords, stanford_home: str | None = None) -> tuple[list[Item], int]:
    """One task file encoded for an encoder with ``dictionary``: ``(items, truncated)``. ``name``
    "train" also fits the task's labels; the others are capped at ``job.max_eval_examples``."""
    if not Path(path).exists():
        raise FileNotFoundError(f"{path}: task file missing")
    raw = task.read(Path(path))
    if name == "train":
        raw = raw[: job.max_train_examples] if job.max_train_examples else raw
        task.fit_labels(raw)
    elif job.max_eval_examples:
        raw = raw[: job.max_eval_examples]
    lines, word = line_and_word_tokenizers(job.tokenize_settings(lang, stanford_home))
    enc = WordEncoder(dictionary, words_to_subwords, job.max_seq_len, split_word=word)
    return task.tensorize(raw, enc, lines)


def load_task_data(job: FinetuneJob, task: TaskAdapter, dictionary, words_to_subwords: Callable[[str], WordsToSubwords],
                   files: TaskFiles, stanford_home: str | None = None) -> TaskData:
    """Read and encode the job's task files. Raw sentences (XNLI) are tokenised like the
    pretraining corpus; given words (NER, UD) are re-tokenised one at a time with the same
    settings, staying one word each."""
    items, truncated = {}, {}
    for name, lang in (("train", job.src_lang), ("en_dev", job.src_lang), ("tgt_dev", job.tgt_lang),
                       ("tgt_test", job.tgt_lang)):
        path = getattr(files, name)
        if path is None:
            continue
        items[name], truncated[name] = load_split(job, task, name, path, lang, dictionary, words_to_subwords(lang),
                                                  stanford_home)
    return TaskData(items, truncated)


def make_optimizer(job: FinetuneJob, shared: list[torch.Tensor], head: torch.nn.Module | list[torch.Tensor],
                   total_steps: int, fused: bool | None = None):
    """Adam over the trainable encoder parameters and the head (a module or its tensors; XNLI: one
    learning rate each), and its schedule over ``total_steps``. ``fused``: torch's fused kernel
    (None: torch's default, foreach)."""
    hp = job.hp
    head_params = list(head.parameters()) if isinstance(head, torch.nn.Module) else list(head)
    if "encoder_lr" in hp:
        groups = [{"params": list(shared), "lr": float(hp["encoder_lr"])},
                  {"params": head_params, "lr": float(hp["classifier_lr"])}]
    else:
        groups = [{"params": list(shared) + head_params, "lr": float(hp["lr"])}]
    optimizer = torch.optim.Adam(groups, fused=fused)
    schedule = job.schedule or ("constant" if "encoder_lr" in hp else "warmup_linear")
    factor = SCHEDULES[schedule]
    warmup = float(job.warmup_fraction)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: factor(step, total_steps, warmup))
    return optimizer, scheduler, schedule


def train_epochs(job: FinetuneJob, task: TaskAdapter, encoder: Encoder, head, shared, data: TaskData, device,
                 log: Callable[[str], None]) -> dict:
    """Train on English and keep the epoch with the best English dev score (restored at the end)."""
    train_items = data.items["train"]
    batch_size = int(job.hp["batch_size"])
    per_epoch = job.epoch_size or len(train_items)
    steps_per_epoch = math.ceil(per_epoch / batch_size)
    total_steps = steps_per_epoch * job.epochs
    optimizer, scheduler, schedule = make_optimizer(job, shared, head, total_steps)
    gen = torch.Generator().manual_seed(job.seed)
    pad = encoder.dictionary.pad()
    order: list[int] = []
    history, best = [], None
    train_s = eval_s = 0.0
    for epoch in range(1, job.epochs + 1):
        t0 = time.time()
        encoder.train(True)
        head.train(True)
        losses = []
        for _ in progress(range(steps_per_epoch), desc=f"{job.task} epoch {epoch}/{job.epochs}", unit="step"):
            # A stream of seeded permutations, so an epoch may be shorter or longer than the data.
            while len(order) < batch_size:
                order.extend(torch.randperm(len(train_items), generator=gen).tolist())
            chunk = [train_items[i] for i in order[:batch_size]]
            del order[:batch_size]
            batch = task.batch(chunk, pad, device)
            loss = task.loss(head, _forward(encoder, batch["tokens"], job.src_lang, pad), batch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
        t1 = time.time()
        dev = evaluate(task, encoder, head, data.items["en_dev"], job.src_lang, device)
        t2 = time.time()
        train_s += t1 - t0
        eval_s += t2 - t1
        history.append({"epoch": epoch, "train_loss": float(np.mean(losses)), "en_dev": dev[task.metric]})
        log(f"epoch {epoch}: loss {history[-1]['train_loss']:.4f} en dev {task.metric} {dev[task.metric]:.2f}")
        if best is None or dev[task.metric] > best[0]:
            # The checkpoint of the best epoch so far, kept in memory (on CPU) until the end.
            best = (dev[task.metric], epoch, _state(encoder, shared), copy.deepcopy(head.state_dict()))
    _, best_epoch, enc_state, head_state = best
    _restore(encoder, shared, enc_state)
    head.load_state_dict(head_state)
    return {"best_epoch": best_epoch, "history": history, "epoch_size": per_epoch, "steps": total_steps,
            "schedule": schedule, "train_s": train_s, "eval_s": eval_s}


def finetune(job: FinetuneJob, encoder: Encoder, words_to_subwords: Callable[[str], WordsToSubwords],
             files: TaskFiles, device: str = "cpu", log: Callable[[str], None] | None = None,
             stanford_home: str | None = None) -> dict:
    """Fine-tune ``encoder`` (modified in place) on the job's English data and return the result
    record: English dev and zero-shot target scores of the best English-dev epoch."""
    t_start = time.time()
    set_seed(job.seed)
    task: TaskAdapter = TASKS[job.task](job.hp)
    device = torch.device(device)
    log = log or (lambda msg: None)
    limit = max_positions(encoder)
    if limit is not None and job.max_seq_len > limit:
        raise ValueError(f"max_seq_len {job.max_seq_len} exceeds the encoder's {limit} positions")
    data = load_task_data(job, task, encoder.dictionary, words_to_subwords, files, stanford_home)
    encoder.to(device)
    shared = freeze_language_specific(encoder)
    head = task.make_head(encoder.dim).to(device)
    run = train_epochs(job, task, encoder, head, shared, data, device, log)
    t3 = time.time()
    scores = {"en_dev": evaluate(task, encoder, head, data.items["en_dev"], job.src_lang, device)}
    if "tgt_dev" in data.items:
        scores["tgt_dev"] = evaluate(task, encoder, head, data.items["tgt_dev"], job.tgt_lang, device)
    scores["tgt_test"] = evaluate(task, encoder, head, data.items["tgt_test"], job.tgt_lang, device)
    eval_s = run["eval_s"] + time.time() - t3
    timing = {"train_s": run["train_s"], "eval_s": eval_s, "total_s": time.time() - t_start}
    return result_record(job, task, run, scores, data, timing, device)


def result_record(job: FinetuneJob, task: TaskAdapter, run: dict, scores: dict, data: TaskData, timing: dict,
                  device: torch.device) -> dict:
    """What a finetune job writes to result.json (the report reads en_dev and tgt_test): ``run``
    from training (best_epoch, history, epoch_size, steps, schedule), ``scores`` split -> the
    task's scores of the best epoch, ``timing`` train_s, eval_s and total_s in seconds."""
    return {
        "task": job.task,
        "metric": task.metric,
        "src_lang": job.src_lang,
        "tgt_lang": job.tgt_lang,
        "hp": job.hp,
        "epochs": job.epochs,
        "epoch_size": run["epoch_size"],
        "steps": run["steps"],
        "schedule": run["schedule"],
        "seed": job.seed,
        "best_epoch": run["best_epoch"],
        "en_dev": scores["en_dev"][task.metric],
        "tgt_dev": scores["tgt_dev"][task.metric] if "tgt_dev" in scores else None,
        "tgt_test": scores["tgt_test"][task.metric],
        "scores": scores,
        "history": run["history"],
        "labels": task.labels,
        "examples": {k: len(v) for k, v in data.items.items()},
        "truncated": data.truncated,
        "max_seq_len": job.max_seq_len,
        "timing": {k: round(timing[k], 3) for k in ("train_s", "eval_s", "total_s")},
        "device": str(device) if device.type == "cpu" else torch.cuda.get_device_name(device),
        "host": platform.node(),
    }


def max_positions(encoder) -> int | None:
    """Positions the encoder can embed, when it says (LoadedEncoder wraps a fairseq encoder)."""
    for obj in (encoder, getattr(encoder, "encoder", None)):
        mp = getattr(obj, "max_positions", None)
        if callable(mp):
            mp = mp()
        if isinstance(mp, int):
            return mp
    return None


def _state(encoder: Encoder, shared: list[torch.nn.Parameter]) -> list[torch.Tensor]:
    # Only the trained (shared) encoder parameters change; frozen ones need no copy.
    return [p.detach().to("cpu", copy=True) for p in shared]


def _restore(encoder: Encoder, shared: list[torch.nn.Parameter], state: list[torch.Tensor]) -> None:
    with torch.no_grad():
        for p, saved in zip(shared, state):
            p.copy_(saved.to(p.device))


def run_finetune(job: FinetuneJob, checkpoint: Path, dictionary: Path, bpe: Path, files: TaskFiles,
                 out_json: Path, device: str = "cpu", meta: dict | None = None,
                 log: Callable[[str], None] | None = None, stanford_home: str | None = None) -> dict:
    """The Snakemake job: load the pretrained encoder (``checkpoint`` with its ``dictionary``) and
    the setting's BPE (``bpe``: its manifest), fine-tune, write ``out_json`` atomically."""
    from xling.bpe import SubwordTokenizer
    from xling.pretrain.loader import load_encoder

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {device} requested but CUDA is not available")
    encoder = load_encoder(Path(checkpoint), Path(dictionary))
    result = finetune(job, encoder, lambda lang: SubwordTokenizer(Path(bpe), lang).words_to_subwords, files,
                      device, log, stanford_home)
    return write_result(result, checkpoint, bpe, meta, out_json)


def write_result(result: dict, checkpoint: Path, bpe: Path, meta: dict | None, out_json: Path) -> dict:
    """Add where the model came from and the job's ``meta``, and write result.json atomically."""
    result["checkpoint"] = str(checkpoint)
    result["bpe"] = str(bpe)
    result["meta"] = meta or {}
    with atomic_write(out_json) as fh:
        json.dump(result, fh, indent=2, sort_keys=True)
        fh.write("\n")
    return result
