"""Benchmark: training examples/s of the fine-tuning loop (xling.finetune.train.train_epochs, the
code every finetune job runs) on a randomly initialised encoder of the configured size, for each
task and batch size of the paper's grids, against a bare loop over the same batches (tensors
built once, on the device: encoder forward, the task's loss, Adam), timed in the same process.

    python bench/bench_finetune.py                                  # CPU, tiny model
    python bench/bench_finetune.py --device cuda --dim 768 --layers 8 --heads 12 --ffn 3072 \\
        --vocab 80000 --json bench_finetune.json                     # the paper's model on a GPU

Prints examples/s of both loops and their ratio (train_epochs / bare; the gap is the loop's
per-step host work: padding lists into tensors, moving them, the scheduler). The examples are
synthetic, with lengths drawn around each task's typical English training sentence (options
below), so the rates transfer to the real data only as far as those lengths do. The measured
train_epochs rates plan the fine-tuning rows of ``python -m xling.cluster.budget``
(``--rate xnli=EX_PER_S`` ...)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from xling.finetune.encoder import freeze_language_specific
from xling.finetune.tasks import TASKS, Item
from xling.finetune.train import FinetuneJob, TaskData, make_optimizer, train_epochs
from xling.pretrain.dictionary import TokenDictionary
from xling.pretrain.encoder import MLMEncoder, fill_model_args
from xling.pretrain.loader import LoadedEncoder

NER_TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"]
N_DEPRELS = 37  # UD English-EWT v2.3's relation labels with subtypes, about


def random_encoder(args) -> LoadedEncoder:
    torch.manual_seed(0)
    margs = argparse.Namespace(encoder_layers=args.layers, encoder_embed_dim=args.dim,
                               encoder_ffn_embed_dim=args.ffn, encoder_attention_heads=args.heads,
                               max_positions=args.max_positions)
    fill_model_args(margs)
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


def make_task(name: str, hp: dict):
    task = TASKS[name](hp)
    if name == "xnli":
        task.fit_labels([])
    elif name == "ner":
        task.labels = list(NER_TAGS)
    else:
        task.labels = [f"rel{i}" for i in range(N_DEPRELS)]
        task.fallback_label = task.labels[0]
    return task


def hyperparameters(name: str, batch: int) -> dict:
    if name == "xnli":  # the grid's middle learning rates; speed does not depend on them
        return {"batch_size": batch, "encoder_lr": 2.5e-6, "classifier_lr": 2.5e-5}
    hp = {"batch_size": batch, "lr": 3e-5}
    if name == "parsing":
        hp.update(arc_mlp=512, label_mlp=128)
    return hp


def bench_task(name: str, batch: int, args, device) -> dict:
    rng = np.random.default_rng(0)
    encoder = random_encoder(args).to(device)
    pad = encoder.dictionary.pad()
    hp = hyperparameters(name, batch)
    task = make_task(name, hp)
    n_train = batch * args.steps
    data = TaskData({"train": synthetic_items(name, n_train, args, encoder.dictionary, rng),
                     "en_dev": synthetic_items(name, args.dev_examples, args, encoder.dictionary, rng)}, {})
    job = FinetuneJob(task=name, src_lang="en", tgt_lang="fr", hp=hp, epochs=1, seed=1, max_seq_len=256,
                      warmup_fraction=0.1, epoch_size=n_train)
    shared = freeze_language_specific(encoder)
    head = task.make_head(encoder.dim).to(device)
    # bare loop: the same batches as tensors on the device, built once
    batches = [(task.batch(data.items["train"][s : s + batch], pad, device), data.items["train"][s : s + batch])
               for s in range(0, n_train, batch)]
    optimizer, _, _ = make_optimizer(job, shared, head, len(batches))

    def bare_epoch():
        encoder.train(True)
        head.train(True)
        for b, chunk in batches:
            hidden = encoder.encode(b["tokens"], "en", padding_mask=b["tokens"].eq(pad))[-1]
            loss = task.loss(head, hidden, b)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    times = {"train_epochs": 0.0, "bare": 0.0}
    eval_s = 0.0
    bare_epoch()  # warm-up of both (kernels, allocator)
    train_epochs(job, task, encoder, head, shared, data, device, log=lambda msg: None)
    for r in range(args.rounds):
        order = ["train_epochs", "bare"] if r % 2 == 0 else ["bare", "train_epochs"]
        for which in order:
            sync()
            t0 = time.perf_counter()
            if which == "bare":
                bare_epoch()
            else:
                run = train_epochs(job, task, encoder, head, shared, data, device, log=lambda msg: None)
                eval_s += run["eval_s"]
            sync()
            elapsed = time.perf_counter() - t0
            # train_epochs' own clock leaves out its English dev evaluation
            times[which] += run["train_s"] if which == "train_epochs" else elapsed
    eps = {k: n_train * args.rounds / v for k, v in times.items()}
    mean_tokens = float(np.mean([len(it.ids) for it in data.items["train"]]))
    return {"task": name, "batch_size": batch, "examples_per_s": eps,
            "ratio_train_epochs_over_bare": eps["train_epochs"] / eps["bare"],
            "dev_examples_per_s": args.dev_examples * args.rounds / eval_s, "mean_tokens": mean_tokens}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=4000, help="dictionary size (the paper's joint BPE: about 80k)")
    ap.add_argument("--max-positions", type=int, default=256)
    ap.add_argument("--tasks", nargs="+", default=["xnli", "ner", "parsing"], choices=sorted(TASKS))
    ap.add_argument("--batches", nargs="+", type=int, default=None,
                    help="batch sizes (default: the paper's grid: XNLI 4 and 8, NER and parsing 16 and 32)")
    # typical English training examples: MultiNLI premise + hypothesis about 33 words, WikiAnn
    # about 8 words, UD English-EWT v2.3 16.3 words (204,585 words in 12,543 sentences)
    ap.add_argument("--xnli-tokens", type=int, default=48, help="mean pieces of a premise-hypothesis pair")
    ap.add_argument("--ner-words", type=int, default=8)
    ap.add_argument("--parsing-words", type=int, default=16)
    ap.add_argument("--steps", type=int, default=30, help="training steps per timed block")
    ap.add_argument("--rounds", type=int, default=3, help="alternating blocks per loop")
    ap.add_argument("--dev-examples", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda but no GPU is visible")
    device = torch.device(args.device)
    grid = {"xnli": [4, 8], "ner": [16, 32], "parsing": [16, 32]}
    rows = []
    for name in args.tasks:
        for batch in args.batches or grid[name]:
            row = bench_task(name, batch, args, device)
            rows.append(row)
            e = row["examples_per_s"]
            print(f"{name:8s} batch {batch:3d}: train_epochs {e['train_epochs']:9.1f} ex/s  bare {e['bare']:9.1f} ex/s"
                  f"  ratio {row['ratio_train_epochs_over_bare']:.3f}  dev {row['dev_examples_per_s']:9.1f} ex/s"
                  f"  ({row['mean_tokens']:.0f} pieces per example)")
    result = {"device": torch.cuda.get_device_name(0) if device.type == "cuda" else f"cpu ({args.threads} thread(s))",
              "model": {"layers": args.layers, "dim": args.dim, "heads": args.heads, "ffn": args.ffn,
                        "vocab": args.vocab}, "rows": rows}
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
