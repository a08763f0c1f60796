"""Benchmark: tokens/s of a fairseq training step with our plugin (task + model + fairseq's
Trainer, as fairseq-train runs it) against a plain PyTorch MLM loop on a model of the same
size, on the same batches and device, timed in alternating blocks in one process.

    python bench/bench_pretrain.py                       # CPU, tiny model
    python bench/bench_pretrain.py --device cuda --dim 768 --layers 8 --heads 12 --ffn 3072 \
        --tokens-per-sample 256 --batch 96              # paper size on a GPU, prints MFU

Prints one line per engine and the ratio fairseq/plain (target >= 1.0). The plain loop is
what one writes without fairseq: nn.TransformerEncoder of the same layers, the LM head and tied
softmax on the masked positions only (as our model computes them), cross-entropy, torch Adam
(autocast fp16 on GPU). ``--json`` also records the achieved model FLOP/s of the fairseq step,
which ``python -m xling.cluster.budget --rate-from`` (or planning.pretrain_benchmark) plans with."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from xling.pretrain.command import fairseq_train_command
from xling.pretrain.schedule import train_flops_per_token

# The tiny corpora and the in-process fairseq trainer are test support (tests/support/), not
# part of the package: put the repository's tests/ on sys.path to import them as the tests do.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.inprocess import build_trainer
from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data

# dense fp16/bf16 tensor-core peaks (TFLOP/s) for the MFU line
PEAK_TFLOPS = {"H100": 989.0, "H200": 989.0, "A100": 312.0, "V100": 125.0}


class PlainMLM(nn.Module):
    """BERT-style MLM written directly in PyTorch, with the sizes of our fairseq model."""

    def __init__(self, vocab, dim, heads, ffn, layers, max_pos, dropout, pad):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim, padding_idx=pad)
        self.pos = nn.Embedding(max_pos, dim)
        self.ln = nn.LayerNorm(dim)
        self.drop = nn.Dropout(dropout)
        layer = nn.TransformerEncoderLayer(dim, heads, ffn, dropout, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.dense = nn.Linear(dim, dim)
        self.lm_ln = nn.LayerNorm(dim)
        self.bias = nn.Parameter(torch.zeros(vocab))
        self.pad = pad

    def forward(self, tokens, masked):
        pad_mask = tokens.eq(self.pad)
        x = self.tok(tokens) + self.pos(torch.arange(tokens.size(1), device=tokens.device))[None]
        x = self.encoder(self.drop(self.ln(x)), src_key_padding_mask=pad_mask if pad_mask.any() else None)
        x = self.lm_ln(F.gelu(self.dense(x[masked])))  # the head only where a token is predicted
        return F.linear(x, self.tok.weight) + self.bias


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--layers", type=int, default=TINY_MODEL["layers"])
    ap.add_argument("--dim", type=int, default=TINY_MODEL["dim"])
    ap.add_argument("--heads", type=int, default=TINY_MODEL["heads"])
    ap.add_argument("--ffn", type=int, default=TINY_MODEL["ffn_dim"])
    ap.add_argument("--tokens-per-sample", type=int, default=TINY_MODEL["tokens_per_sample"])
    ap.add_argument("--batch", type=int, default=TINY_PRETRAIN["batch_size_per_gpu"])
    ap.add_argument("--vocab-per-language", type=int, default=2000)
    ap.add_argument("--sep-emb", action="store_true", help="benchmark the Sep Emb model")
    ap.add_argument("--steps", type=int, default=10, help="steps per timed block")
    ap.add_argument("--rounds", type=int, default=4, help="alternating blocks per engine")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--peak-tflops", type=float, default=None, help="GPU peak for MFU (default: by name)")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda but no GPU is visible")

    with tempfile.TemporaryDirectory(prefix="bench_pretrain_") as tmp:
        return run(args, Path(tmp))


def run(args, tmp: Path) -> dict:
    cuda = args.device == "cuda"
    n_sent = max(200, args.batch * (args.steps * (args.rounds + 1) + args.warmup) * args.tokens_per_sample // 12)
    data = write_toy_data(tmp / "bin", ["en", "fr"], n_train=n_sent, n_valid=4,
                          vocab_per_language=args.vocab_per_language, seed=0)
    model_cfg = dict(TINY_MODEL, layers=args.layers, dim=args.dim, heads=args.heads, ffn_dim=args.ffn,
                     tokens_per_sample=args.tokens_per_sample)
    n_batches = args.warmup + args.steps * args.rounds
    # an epoch long enough for every timed batch, checkpointed once per epoch (never reached)
    pre = dict(TINY_PRETRAIN, batch_size_per_gpu=args.batch, warmup_updates=1000, precision="fp16",
               streams_per_epoch_per_gpu=args.batch * n_batches, save_interval_updates=None)
    setting = {"separate": {"embeddings": args.sep_emb, "layers": 0}}
    cmd = fairseq_train_command(data, tmp / "ck", setting, model_cfg, pre, ["en", "fr"],
                                n_gpus=1 if cuda else 0, cpu=not cuda, seed=1)
    cfg, task, trainer = build_trainer(cmd)
    itr = trainer.get_train_iterator(epoch=1).next_epoch_itr(shuffle=True)
    batches = [next(itr) for _ in range(n_batches)]
    # only full batches, so both engines see identical shapes
    batches = [b for b in batches if b["net_input"]["src_tokens"].shape == batches[0]["net_input"]["src_tokens"].shape]

    dev = torch.device("cuda" if cuda else "cpu")
    pad = task.source_dictionary.pad()
    fs_model = trainer.model
    plain = PlainMLM(len(task.source_dictionary), args.dim, args.heads, args.ffn, args.layers,
                     args.tokens_per_sample, model_cfg["dropout"], pad).to(dev)
    n_fs = sum(p.numel() for p in fs_model.parameters())
    n_plain = sum(p.numel() for p in plain.parameters())
    opt = torch.optim.Adam(plain.parameters(), lr=pre["lr"], betas=tuple(pre["adam_betas"]))
    scaler = torch.amp.GradScaler("cuda", enabled=cuda)
    plain_batches = [(b["net_input"]["src_tokens"].to(dev), b["target"].to(dev)) for b in batches]
    plain_batches = [(tokens, target, target.ne(pad)) for tokens, target in plain_batches]

    def fairseq_step(i):
        trainer.train_step([batches[i % len(batches)]])

    def plain_step(i):
        tokens, target, masked = plain_batches[i % len(plain_batches)]
        with torch.autocast("cuda", dtype=torch.float16, enabled=cuda):
            logits = plain(tokens, masked)
            loss = F.cross_entropy(logits.float(), target[masked], reduction="sum")
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss / masked.sum()).backward()
        scaler.step(opt)
        scaler.update()

    def sync():
        if cuda:
            torch.cuda.synchronize()

    tokens_per_batch = [int(b["net_input"]["src_tokens"].ne(pad).sum()) for b in batches]
    predicted_per_batch = [int(b["target"].ne(pad).sum()) for b in batches]
    for i in range(args.warmup):
        fairseq_step(i)
        plain_step(i)
    times = {"fairseq": 0.0, "plain": 0.0}
    tokens = {"fairseq": 0, "plain": 0}
    predicted = 0
    step = args.warmup
    for r in range(args.rounds):
        order = [("fairseq", fairseq_step), ("plain", plain_step)]
        if r % 2:
            order.reverse()  # neither engine always runs first
        for name, fn in order:
            sync()
            t0 = time.perf_counter()
            for j in range(args.steps):
                fn(step + j)
            sync()
            times[name] += time.perf_counter() - t0
            tokens[name] += sum(tokens_per_batch[(step + j) % len(batches)] for j in range(args.steps))
            if name == "fairseq":
                predicted += sum(predicted_per_batch[(step + j) % len(batches)] for j in range(args.steps))
        step += args.steps

    tps = {k: tokens[k] / times[k] for k in times}
    result = {
        "device": torch.cuda.get_device_name(0) if cuda else f"cpu ({args.threads} thread(s))",
        "model": model_cfg, "batch": args.batch, "sep_emb": args.sep_emb,
        "params_fairseq": n_fs, "params_plain": n_plain,
        "tokens_per_s": tps, "ratio_fairseq_over_plain": tps["fairseq"] / tps["plain"],
    }
    print(f"params: fairseq {n_fs:,}  plain {n_plain:,}")
    for k in ("fairseq", "plain"):
        print(f"{k:8s} {tps[k]:12.1f} tokens/s  ({tokens[k]} tokens in {times[k]:.2f} s)")
    print(f"ratio fairseq/plain = {result['ratio_fairseq_over_plain']:.3f}")
    # model FLOPs of the fairseq steps (xling.pretrain.schedule), at the masked fraction they had
    per_token = train_flops_per_token(args.layers, args.dim, args.ffn, args.tokens_per_sample,
                                      len(task.source_dictionary), predicted / tokens["fairseq"])
    achieved = per_token * tokens["fairseq"] / times["fairseq"]
    result.update(flops_per_token=per_token, achieved_flops_per_s=achieved)
    print(f"fairseq step: {achieved / 1e12:.3f} TFLOP/s of model FLOPs ({per_token / 1e6:.2f} MFLOP per token)")
    if cuda:
        name = torch.cuda.get_device_name(0)
        peak = args.peak_tflops or next((v for k, v in PEAK_TFLOPS.items() if k in name), None)
        if peak:
            result["mfu"] = achieved / 1e12 / peak
            print(f"MFU: {100 * result['mfu']:.1f}% of {peak:.0f} TFLOP/s peak")
        else:
            print("unknown GPU peak: pass --peak-tflops for MFU")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
