"""One fine-tuning job (one grid cell): train on English, select the epoch on English dev, test
zero-shot on the target language with its own language-specific parameters (paper 3.2)."""

from __future__ import annotations

import copy
import json
import math
import platform
import random
import time
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from xling.finetune.encoder import Encoder, freeze_language_specific
from xling.finetune.schedule import SCHEDULES
from xling.finetune.tasks import TASKS, Item, TaskAdapter
from xling.finetune.text import WordEncoder, WordsToSubwords, line_and_word_tokenizers
from xling.preprocess.tokenize import TokenizeSettings
from xling.io import atomic_write


def _set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _split_file(task_dir: Path, lang: str, split: str, suffix: str) -> Path:
    return Path(task_dir) / lang / f"{split}.{suffix}"


def _forward(encoder: Encoder, tokens: torch.Tensor, lang: str, pad: int) -> torch.Tensor:
    return encoder.encode(tokens, lang, padding_mask=tokens.eq(pad))[-1]


@torch.no_grad()
def evaluate(task: TaskAdapter, encoder: Encoder, head, items: list[Item], lang: str, device, batch_size: int = 32) -> dict:
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


def finetune(
    task_name: str,
    encoder: Encoder,
    words_to_subwords: Callable[[str], WordsToSubwords],
    task_dir: Path,
    src_lang: str,
    tgt_lang: str,
    hp: dict,
    epochs: int,
    seed: int,
    device: str = "cpu",
    max_seq_len: int = 256,
    schedule: str | None = None,
    warmup_fraction: float = 0.1,
    epoch_size: int | None = None,
    tokenize_settings: dict[str, TokenizeSettings] | None = None,
    log: Callable[[str], None] | None = None,
    task_dirs: tuple[str, str] | None = None,
    max_train_examples: int | None = None,
) -> dict:
    """Fine-tune ``encoder`` (modified in place) and return the result record.

    ``words_to_subwords(lang)`` gives the setting's BPE for a language; ``hp`` holds ``batch_size``
    and either ``lr`` or ``encoder_lr`` + ``classifier_lr``; ``epoch_size`` = training examples per
    epoch (None: one pass over the data; XLM's XNLI epochs are 20000 examples)."""
    t_start = time.time()
    _set_seed(seed)
    task: TaskAdapter = TASKS[task_name](hp)
    schedule = schedule or ("constant" if "encoder_lr" in hp else "warmup_linear")
    tokenize_settings = tokenize_settings or {}
    device = torch.device(device)
    dictionary = encoder.dictionary
    log = log or (lambda msg: None)
    limit = _max_positions(encoder)
    if limit is not None and max_seq_len > limit:
        raise ValueError(f"max_seq_len {max_seq_len} exceeds the encoder's {limit} positions")

    dirs = dict(zip((src_lang, tgt_lang), task_dirs or (src_lang, tgt_lang)))

    def load(lang: str, split: str, required: bool = True):
        path = _split_file(task_dir, dirs[lang], split, task.suffix)
        if not path.exists():
            if required:
                raise FileNotFoundError(f"{path}: task file missing")
            return None
        raw = task.read(path)
        if split == "train":
            raw = raw[:max_train_examples] if max_train_examples else raw
            task.fit_labels(raw)
        # Raw sentences (XNLI) are tokenised like the pretraining corpus; given words (NER, UD)
        # are re-tokenised one at a time with the same settings, staying one word each.
        lines, word = line_and_word_tokenizers(tokenize_settings.get(lang) or TokenizeSettings(moses_lang=lang))
        enc = WordEncoder(dictionary, words_to_subwords(lang), max_seq_len, split_word=word)
        items, cut = task.tensorize(raw, enc, lines)
        return items, cut

    data = {"train": load(src_lang, "train"), "en_dev": load(src_lang, "dev")}
    data["tgt_dev"] = load(tgt_lang, "dev", required=False)
    data["tgt_test"] = load(tgt_lang, "test")
    truncated = {k: v[1] for k, v in data.items() if v is not None}
    sizes = {k: len(v[0]) for k, v in data.items() if v is not None}
    train_items = data["train"][0]

    encoder.to(device)
    shared = freeze_language_specific(encoder)
    head = task.make_head(encoder.dim).to(device)
    if "encoder_lr" in hp:
        groups = [{"params": shared, "lr": float(hp["encoder_lr"])},
                  {"params": list(head.parameters()), "lr": float(hp["classifier_lr"])}]
    else:
        groups = [{"params": shared + list(head.parameters()), "lr": float(hp["lr"])}]
    optimizer = torch.optim.Adam(groups)
    batch_size = int(hp["batch_size"])
    per_epoch = epoch_size or len(train_items)
    steps_per_epoch = math.ceil(per_epoch / batch_size)
    total_steps = steps_per_epoch * epochs
    factor = SCHEDULES[schedule]
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: factor(step, total_steps, warmup_fraction))

    gen = torch.Generator().manual_seed(seed)
    pad = dictionary.pad()
    order: list[int] = []
    history, best = [], None
    train_s = eval_s = 0.0
    for epoch in range(1, epochs + 1):
        t0 = time.time()
        encoder.train(True)
        head.train(True)
        losses = []
        for _ in range(steps_per_epoch):
            # A stream of seeded permutations, so an epoch may be shorter or longer than the data.
            while len(order) < batch_size:
                order.extend(torch.randperm(len(train_items), generator=gen).tolist())
            chunk = [train_items[i] for i in order[:batch_size]]
            del order[:batch_size]
            batch = task.batch(chunk, pad, device)
            loss = task.loss(head, _forward(encoder, batch["tokens"], src_lang, pad), batch, chunk)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
        t1 = time.time()
        dev = evaluate(task, encoder, head, data["en_dev"][0], src_lang, device)
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
    t3 = time.time()
    scores = {"en_dev": evaluate(task, encoder, head, data["en_dev"][0], src_lang, device)}
    if data["tgt_dev"] is not None:
        scores["tgt_dev"] = evaluate(task, encoder, head, data["tgt_dev"][0], tgt_lang, device)
    scores["tgt_test"] = evaluate(task, encoder, head, data["tgt_test"][0], tgt_lang, device)
    eval_s += time.time() - t3
    return {
        "task": task_name,
        "metric": task.metric,
        "src_lang": src_lang,
        "tgt_lang": tgt_lang,
        "hp": hp,
        "epochs": epochs,
        "epoch_size": per_epoch,
        "steps": total_steps,
        "schedule": schedule,
        "seed": seed,
        "best_epoch": best_epoch,
        "en_dev": scores["en_dev"][task.metric],
        "tgt_dev": scores["tgt_dev"][task.metric] if "tgt_dev" in scores else None,
        "tgt_test": scores["tgt_test"][task.metric],
        "scores": scores,
        "history": history,
        "labels": task.labels,
        "examples": sizes,
        "truncated": truncated,
        "max_seq_len": max_seq_len,
        "timing": {"train_s": round(train_s, 3), "eval_s": round(eval_s, 3), "total_s": round(time.time() - t_start, 3)},
        "device": str(device) if device.type == "cpu" else torch.cuda.get_device_name(device),
        "host": platform.node(),
    }


def _max_positions(encoder) -> int | None:
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


def run_finetune(
    task: str,
    checkpoint: Path,
    bpe_dir: Path,
    task_dir: Path,
    src_lang: str,
    tgt_lang: str,
    hp: dict,
    epochs: int,
    out_json: Path,
    seed: int,
    device: str = "cpu",
    max_seq_len: int = 256,
    schedule: str | None = None,
    warmup_fraction: float = 0.1,
    epoch_size: int | None = None,
    tokenize_settings: dict[str, TokenizeSettings] | None = None,
    data_dir: Path | None = None,
    meta: dict | None = None,
    log: Callable[[str], None] | None = None,
    task_dirs: tuple[str, str] | None = None,
    max_train_examples: int | None = None,
) -> dict:
    """The Snakemake job: load the pretrained encoder and the setting's BPE, fine-tune, write result.json."""
    from xling.bpe import SubwordTokenizer
    from xling.pretrain.loader import load_encoder

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {device} requested but CUDA is not available")
    encoder = load_encoder(Path(checkpoint), data_dir)
    result = finetune(
        task, encoder, lambda lang: SubwordTokenizer(Path(bpe_dir), lang).words_to_subwords, Path(task_dir),
        src_lang, tgt_lang, hp, epochs, seed, device, max_seq_len, schedule, warmup_fraction, epoch_size,
        tokenize_settings, log, task_dirs, max_train_examples,
    )
    result["checkpoint"] = str(checkpoint)
    result["bpe_dir"] = str(bpe_dir)
    result["meta"] = meta or {}
    with atomic_write(out_json) as fh:
        json.dump(result, fh, indent=2, sort_keys=True)
        fh.write("\n")
    return result
