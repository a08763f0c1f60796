"""Benchmark: tokens/s of the pretraining step the pipeline runs (fairseq's Trainer.train_step with
our plugin, built from the same fairseq-train command a GPU job gets) against the best plain
PyTorch MLM step of the same model we can write, on the same batches, device and precision, timed
in alternating blocks in one process.

    python bench/bench_pretrain.py                          # CPU, tiny model, fp32, eager
    python bench/bench_pretrain.py --device cuda --dim 768 --layers 8 --heads 12 --ffn 3072 \\
        --tokens-per-sample 256 --batch 96 --vocab-per-language 40000 --json bench.json   # paper size

The reference ("plain"): post-LN layers with one packed q/k/v projection into
``scaled_dot_product_attention``, embedding and softmax tables padded like ours, the masked
positions as an index built before the step, the loss inside the (compiled) function, fused
AdamW, gradient clipping as configured, autocast in ``--precision`` (fp16 with a GradScaler), and
``torch.compile`` as ``--compile`` says, like ``../shared/tools/gpu-anchors/pretrain_anchor.py``
(which leaves out the feed-forward activation's dropout that our model has: the same maths here).
Sep Emb (``--sep-emb``): the reference has a token and position table per language and the
language's vocabulary mask, as ours.

An outside reference (``--transformers``): the same model in ``transformers``, its ``BertModel``
(post-LN layers, learned positions, GELU, the language embeddings as BERT's token types) with
``attn_implementation="sdpa"``, the tied head on the predicted positions (XLM's projection alone,
or BERT's transform before it, as ours has), the same weights, batches, masks, optimizer, precision
and compile as the plain step.

A/B switches, each measured on its own run (the engines agree before any rate, whatever the
switch): ``--sdpa`` restricts every engine's attention to one SDPA backend (flash, cuDNN, memory
efficient, math); ``--adamw foreach`` gives the plain and transformers steps the multi-tensor
AdamW instead of the fused one (the fairseq step's is fused on a GPU: its deferred gradient norm
needs the fused kernel); ``--compile-mode reduce-overhead`` compiles the plain and transformers
steps with CUDA graphs (the fairseq step's mode is the plugin's); ``--batch`` a larger batch per
GPU (the paper's update is 768 streams whatever the GPUs: 192 a GPU on 4 of them).

Agreement first: every engine's losses, dropout off, on the same batches with the same weights,
against the fairseq engine's model in float64 on the same device, within what the device rounds
(tests/support/rounding.py): in fp32 each predicted position's and their mean, in ``--precision``
their mean, each within 4x the fairseq engine's own distance from float64 in that precision
(plus a floor of 1e-6 of the reference). A bound from the device, not a tolerance set on one:
an H200 rounds other than an H100. Engines that do not compute one model stop the benchmark
before any rate.

Protocol: each engine's first step (torch.compile included) is timed apart; then blocks of
``--steps`` steps alternate between the engines until each engine's last three blocks lie within
``--settle`` of their median (at most ``--max-warmup-blocks``); then ``--blocks`` (>= 5) timed
blocks per engine, alternating which runs first, the device synchronised around each block.
Prints min / median / max tokens/s per engine and the ratio of the medians fairseq / plain.

``--json`` writes the result; its ``achieved_flops_per_s`` (model FLOPs of the fairseq step,
xling.pretrain.schedule) is what ``python -m xling.cluster.budget --rate-from`` plans with."""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from xling.pretrain.command import fairseq_train_command
from xling.pretrain.encoder import padded_rows
from xling.pretrain.job import PretrainJob
from xling.pretrain.schedule import train_flops_per_token

# The tiny corpora and the in-process fairseq trainer are test support (tests/support/), not
# part of the package: put the repository's tests/ on sys.path to import them as the tests do.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.inprocess import build_trainer  # noqa: E402
from support.rounding import FLOOR, ROUNDINGS, mean_rounding, rounding, rounding_bound  # noqa: E402
from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data  # noqa: E402

# dense fp16/bf16 tensor-core peaks (TFLOP/s) for the MFU line
PEAK_TFLOPS = {"H100": 989.0, "H200": 989.0, "A100": 312.0, "V100": 125.0}
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": None}
SDPA = ("default", "flash", "efficient", "cudnn", "math")


class PlainBlock(nn.Module):
    """A post-LN BERT layer: packed q/k/v, SDPA, GELU feed-forward, dropout where our layer (torch's
    TransformerEncoderLayer) has it: attention weights, both residual branches and the feed-forward
    activation (``activation_dropout``: XLM's model has none there; the gpu-anchors' reference
    leaves it out)."""

    def __init__(self, dim, heads, ffn, dropout, attention_dropout, activation_dropout, eps):
        super().__init__()
        self.heads, self.p, self.pa, self.pact = heads, dropout, attention_dropout, activation_dropout
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc1, self.fc2 = nn.Linear(dim, ffn), nn.Linear(ffn, dim)
        self.ln1, self.ln2 = nn.LayerNorm(dim, eps=eps), nn.LayerNorm(dim, eps=eps)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, dropout_p=self.pa if self.training else 0.0)
        x = self.ln1(x + F.dropout(self.proj(a.transpose(1, 2).reshape(b, t, d)), self.p, self.training))
        h = F.dropout(F.gelu(self.fc1(x)), self.pact, self.training)
        return self.ln2(x + F.dropout(self.fc2(h), self.p, self.training))


class PlainMLM(nn.Module):
    """The MLM with its loss: ``forward(tokens, index, target, lang)`` is the summed cross-entropy
    of the positions ``index`` (flat) predicting ``target`` (``pad``: a slot predicting nothing);
    ``reduction="none"``: each position's. The model our encoder is (read off it): one token table
    per language or one for all, XLM's language embeddings or none, BERT's head (dense, GELU,
    LayerNorm) or XLM's (the tied projection alone), the same LayerNorm epsilon and dropouts."""

    def __init__(self, rows, masks, dim, heads, ffn, layers, max_pos, dropout, attention_dropout, pad,
                 activation_dropout=None, eps=1e-5, languages=0, bert_head=True):
        super().__init__()
        n = masks.shape[0]  # one table per language (Sep Emb) or one for all
        activation_dropout = dropout if activation_dropout is None else activation_dropout
        self.tok = nn.ModuleList(nn.Embedding(rows, dim, padding_idx=pad) for _ in range(n))
        self.pos = nn.ModuleList(nn.Embedding(max_pos, dim) for _ in range(n))
        self.ln = nn.ModuleList(nn.LayerNorm(dim, eps=eps) for _ in range(n))
        self.lang = nn.Embedding(languages, dim) if languages else None
        self.blocks = nn.ModuleList(PlainBlock(dim, heads, ffn, dropout, attention_dropout, activation_dropout, eps)
                                    for _ in range(layers))
        if bert_head:
            self.dense, self.lm_ln = nn.Linear(dim, dim), nn.LayerNorm(dim, eps=eps)
        self.bert_head = bert_head
        self.bias = nn.Parameter(torch.zeros(rows))
        # -inf on the columns a language never predicts (padding rows, other languages' tokens)
        self.register_buffer("column_bias", torch.zeros(masks.shape).masked_fill(~masks, float("-inf")))
        self.p, self.pad = dropout, pad
        self.per_language = n > 1 or languages > 0  # the batch's language selects a table or a row
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                m.weight.data.normal_(0, 0.02)
                if isinstance(m, nn.Linear):
                    m.bias.data.zero_()

    def forward(self, tokens, index, target, lang: int, reduction: str = "sum"):
        e = lang if len(self.tok) > 1 else 0
        x = self.tok[e](tokens) + self.pos[e].weight[: tokens.shape[1]][None]
        if self.lang is not None:
            x = x + self.lang.weight[lang]
        x = F.dropout(self.ln[e](x), self.p, self.training)
        for block in self.blocks:
            x = block(x)
        x = x.flatten(0, 1).index_select(0, index)
        if self.bert_head:
            x = self.lm_ln(F.gelu(self.dense(x)))
        logits = F.linear(x, self.tok[e].weight, self.bias + self.column_bias[e])
        return F.cross_entropy(logits.float(), target, reduction=reduction, ignore_index=self.pad)


def plain_like(encoder, masks: torch.Tensor, args, pad: int) -> PlainMLM:
    """A :class:`PlainMLM` of ``encoder``'s architecture (our EncoderCore) with its weights."""
    first = encoder.shared_layers[0]
    plain = PlainMLM(encoder.vocab_rows, masks, encoder.dim, args.heads, args.ffn, encoder.num_layers,
                     encoder.max_positions_, encoder.dropout.p, first.self_attn.dropout, pad,
                     activation_dropout=first.dropout.p, eps=first.norm1.eps,
                     languages=0 if encoder.embed_languages is None else encoder.n_languages,
                     bert_head=encoder.mlm_head == "bert")
    copy_weights(encoder, plain)
    return plain


@torch.no_grad()
def copy_weights(encoder, plain: PlainMLM) -> None:
    """Our encoder's weights into the plain model, tensor for tensor (the same q/k/v packing as
    torch's attention: query, key, value rows of ``in_proj``)."""
    if len(encoder.language_layers[0]):
        raise ValueError("the plain reference has no separate layers (Sep L1-n): compare shared layers only")
    for e, (tok, pos, ln) in enumerate(zip(plain.tok, plain.pos, plain.ln)):
        p = min(e, len(encoder.embed_positions) - 1)
        tok.weight.copy_(encoder.embed_tokens[e].weight)
        pos.weight.copy_(encoder.embed_positions[p].weight)
        ln.load_state_dict(encoder.emb_layer_norm[p].state_dict())
    if plain.lang is not None:
        plain.lang.weight.copy_(encoder.embed_languages.weight)
    for block, layer in zip(plain.blocks, encoder.shared_layers, strict=True):
        block.qkv.weight.copy_(layer.self_attn.in_proj_weight)
        block.qkv.bias.copy_(layer.self_attn.in_proj_bias)
        block.proj.load_state_dict(layer.self_attn.out_proj.state_dict())
        block.fc1.load_state_dict(layer.linear1.state_dict())
        block.fc2.load_state_dict(layer.linear2.state_dict())
        block.ln1.load_state_dict(layer.norm1.state_dict())
        block.ln2.load_state_dict(layer.norm2.state_dict())
    if plain.bert_head:
        plain.dense.load_state_dict(encoder.lm_dense.state_dict())
        plain.lm_ln.load_state_dict(encoder.lm_layer_norm.state_dict())
    plain.bias.copy_(encoder.lm_bias)


class TransformersMLM(nn.Module):
    """The same model in ``transformers``: its ``BertModel`` with SDPA attention (post-LN layers,
    learned positions, exact GELU, the language embeddings as BERT's token types: a zero row for a
    model without them) and the tied head on the predicted positions: XLM's projection alone, or
    BERT's transform (``BertPredictionHeadTransform``) before it. ``forward`` as :class:`PlainMLM`'s.
    The token table keeps our padded rows (their logits -inf, as ours)."""

    def __init__(self, encoder, masks: torch.Tensor, pad: int, attn: str = "sdpa"):
        super().__init__()
        from transformers import BertConfig, BertModel
        from transformers.models.bert.modeling_bert import BertPredictionHeadTransform

        from xling.export.huggingface import bert_body_state_dict

        if encoder.separate_embeddings or encoder.separate_layers:
            raise SystemExit("--transformers: BERT has no per-language tables or layers (Sep rows): the reference "
                             "runs on the models whose parts the languages share")
        first = encoder.shared_layers[0]
        if first.dropout.p != 0:
            raise SystemExit(f"--transformers: BERT's layer has no dropout after its activation, this model "
                             f"{first.dropout.p} (model.activation_dropout; the paper's is 0)")
        config = BertConfig(
            vocab_size=encoder.vocab_rows, hidden_size=encoder.dim, num_hidden_layers=encoder.num_layers,
            num_attention_heads=first.self_attn.num_heads, intermediate_size=first.linear1.out_features,
            hidden_act=encoder.lm_activation, hidden_dropout_prob=first.dropout1.p,
            attention_probs_dropout_prob=first.self_attn.dropout, max_position_embeddings=encoder.max_positions_,
            type_vocab_size=encoder.n_languages if encoder.embed_languages is not None else 1,
            layer_norm_eps=first.norm1.eps, pad_token_id=pad)
        self.bert = BertModel._from_config(config, attn_implementation=attn, add_pooling_layer=False)
        self.bert.load_state_dict(bert_body_state_dict(encoder, rows=encoder.vocab_rows), strict=True)
        self.bert_head = encoder.mlm_head == "bert"
        if self.bert_head:
            self.transform = BertPredictionHeadTransform(config)
            self.transform.dense.load_state_dict(encoder.lm_dense.state_dict())
            self.transform.LayerNorm.load_state_dict(encoder.lm_layer_norm.state_dict())
        self.bias = nn.Parameter(encoder.lm_bias.detach().clone().float())
        self.register_buffer("column_bias", torch.zeros(masks.shape).masked_fill(~masks, float("-inf")))
        self.languages, self.pad = encoder.embed_languages is not None, pad
        self.per_language = self.languages

    def forward(self, tokens, index, target, lang: int, reduction: str = "sum"):
        types = torch.full_like(tokens, lang if self.languages else 0)
        x = self.bert(input_ids=tokens, token_type_ids=types).last_hidden_state
        x = x.flatten(0, 1).index_select(0, index)
        if self.bert_head:
            x = self.transform(x)
        logits = F.linear(x, self.bert.embeddings.word_embeddings.weight, self.bias + self.column_bias[0])
        return F.cross_entropy(logits.float(), target, reduction=reduction, ignore_index=self.pad)


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
    ap.add_argument("--vocab-multiple", type=int, default=64, help="pretrain.vocab_multiple (both engines)")
    ap.add_argument("--sep-emb", action="store_true", help="benchmark the Sep Emb model")
    ap.add_argument("--precision", choices=list(DTYPES), default=None,
                    help="pretrain.precision (default: bf16 on cuda, fp32 on cpu)")
    ap.add_argument("--compile", choices=["auto", "true", "false"], default="auto",
                    help="pretrain.compile, for both engines (auto: with cuda, for a step of >= 1e12 FLOPs)")
    ap.add_argument("--clip-norm", type=float, default=5.0, help="pretrain.clip_norm (the paper config's)")
    ap.add_argument("--no-deferred", action="store_true",
                    help="fairseq reads the loss and gradient norm back every step (to measure what that costs)")
    ap.add_argument("--remainder-batch", action="store_true",
                    help="one batch a stream short before the warm-up blocks, as a language's last batch of an "
                         "epoch: the fairseq step pads it to the full shape, the plain one compiles a static graph "
                         "for it; neither step's later graphs turn dynamic")
    ap.add_argument("--transformers", action="store_true",
                    help="a third engine: the same model in transformers (BertModel, SDPA attention), same weights")
    ap.add_argument("--sdpa", choices=SDPA, default="default",
                    help="A/B: every engine's attention through this SDPA backend only (default: torch's choice)")
    ap.add_argument("--adamw", choices=["fused", "foreach"], default="fused",
                    help="A/B: the plain and transformers steps' AdamW kernel")
    ap.add_argument("--compile-mode", choices=["default", "reduce-overhead", "max-autotune"], default="default",
                    help="A/B: torch.compile's mode of the plain and transformers steps (reduce-overhead: CUDA graphs)")
    ap.add_argument("--steps", type=int, default=10, help="steps per block")
    ap.add_argument("--blocks", type=int, default=5, help="timed blocks per engine (at least 5)")
    ap.add_argument("--max-warmup-blocks", type=int, default=20, help="per engine")
    ap.add_argument("--settle", type=float, default=0.05,
                    help="warm-up ends when each engine's last 3 blocks lie within this fraction of their median")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--peak-tflops", type=float, default=None, help="GPU peak for MFU (default: by name)")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    ap.add_argument("--data", type=Path, default=None,
                    help="keep the toy corpus here and reuse it when it was written for the same sizes")
    args = ap.parse_args(argv)
    if args.blocks < 5:
        ap.error("--blocks must be at least 5")
    args.precision = args.precision or ("bf16" if args.device == "cuda" else "fp32")
    torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda but no GPU is visible")
    with tempfile.TemporaryDirectory(prefix="bench_pretrain_") as tmp, sdpa_backend(args.sdpa):
        return run(args, Path(tmp))


def sdpa_backend(name: str):
    """Every scaled_dot_product_attention of the run (compiled graphs included: they are traced
    inside it) through backend ``name`` only; ``default``: torch's choice."""
    if name == "default":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel({"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
                        "cudnn": SDPBackend.CUDNN_ATTENTION, "math": SDPBackend.MATH}[name])


def fairseq_engine(args, tmp: Path, data: Path):
    """The trainer of the GPU job's fairseq-train command (on a CPU too: it runs there)."""
    model = dict(TINY_MODEL, layers=args.layers, dim=args.dim, heads=args.heads, ffn_dim=args.ffn,
                 tokens_per_sample=args.tokens_per_sample)
    compile_setting = {"auto": "auto", "true": True, "false": False}[args.compile]
    pre = dict(TINY_PRETRAIN, batch_size_per_gpu=args.batch, warmup_updates=1000, precision=args.precision,
               compile=compile_setting, vocab_multiple=args.vocab_multiple, clip_norm=args.clip_norm,
               streams_per_epoch_per_gpu=args.batch * 1000, save_interval_updates=None)
    setting = {"separate": {"embeddings": args.sep_emb, "layers": 0}}
    job = PretrainJob.build(data, setting, model, pre, ["en", "fr"], 1)
    cmd = fairseq_train_command(job, tmp / "ck", 1)
    if args.no_deferred:
        cmd = [c for c in cmd if c not in ("--deferred-grad-norm", "--deferred-loss-log")]
    torch.manual_seed(0)
    return model, pre, build_trainer(cmd)


def full_batches(trainer, n: int) -> list[dict]:
    """``n`` batches of the most common shape without padding (a language's last stream is
    shorter), so that both engines see the same shapes and the plain step needs no padding mask;
    pinned as fairseq's data loader pins them."""
    itr = trainer.get_train_iterator(epoch=1).next_epoch_itr(shuffle=True)
    pool = [b for b in (next(itr) for _ in range(min(len(itr), 4 * n))) if not b["net_input"]["padded"]]
    shape = Counter(tuple(b["net_input"]["src_tokens"].shape) for b in pool).most_common(1)[0][0]
    chosen = [b for b in pool if tuple(b["net_input"]["src_tokens"].shape) == shape][:n]

    def pin(x):
        if isinstance(x, dict):
            return {k: pin(v) for k, v in x.items()}
        return x.pin_memory() if torch.is_tensor(x) and torch.cuda.is_available() else x

    return [pin(b) for b in chosen]


def vocab_masks(args, task) -> torch.Tensor:
    """[tables, rows] booleans: the columns each table's softmax predicts (Sep Emb: a language's
    vocabulary; else the dictionary's rows, not the padding rows)."""
    d = task.source_dictionary
    vocab, rows = len(d), padded_rows(len(d), args.vocab_multiple)
    if args.sep_emb:
        masks = torch.zeros(2, rows, dtype=torch.bool)
        masks[:, :vocab] = torch.from_numpy(np.stack(task.language_vocabs))
        return masks
    return (torch.arange(rows) < vocab)[None]


def plain_engine(args, task, encoder, pre, dev, compile_on):
    """The plain step of the same model, from ``encoder``'s weights (the fairseq engine's)."""
    model = plain_like(encoder, vocab_masks(args, task), args, task.source_dictionary.pad())
    return reference_step(args, model, pre, dev, compile_on)


def transformers_engine(args, task, encoder, pre, dev, compile_on):
    """The transformers step of the same model, from ``encoder``'s weights."""
    model = TransformersMLM(encoder, vocab_masks(args, task), task.source_dictionary.pad())
    return reference_step(args, model, pre, dev, compile_on)


def reference_step(args, model, pre, dev, compile_on):
    """``(model, prepare, step)``: the training step of ``model`` (a module whose ``forward(tokens,
    index, target, lang)`` is the summed loss): fused (``--adamw``) AdamW, the loss inside the
    compiled function (``--compile-mode``), autocast in ``--precision``, clipping as configured."""
    model = model.to(dev).train()
    opt = torch.optim.AdamW(model.parameters(), lr=pre["lr"], betas=tuple(pre["adam_betas"]), eps=pre["adam_eps"],
                            weight_decay=pre["weight_decay"],
                            **({"fused": True} if args.adamw == "fused" else {"foreach": True}))
    dtype = DTYPES[args.precision]
    scaler = torch.amp.GradScaler(dev.type) if args.precision == "fp16" else None
    fn = torch.compile(model, dynamic=False, mode=args.compile_mode) if compile_on else model
    params = [p for p in model.parameters()]
    per_language = model.per_language

    def prepare(b):
        """A batch's tensors on the device, before the step (the language selects tables with Sep
        Emb and the row of XLM's language embeddings: elsewhere a second value would recompile)."""
        return (b["net_input"]["src_tokens"].to(dev), b["masked_index"].to(dev), b["masked_target"].to(dev),
                b["n_predicted"], b["net_input"]["src_lang"] if per_language else 0)

    def step(prepared):
        tokens, index, target, n, lang = prepared
        with torch.autocast(dev.type, dtype=dtype or torch.float32, enabled=dtype is not None):
            loss = fn(tokens, index, target, lang) / max(n, 1)
        (scaler.scale(loss) if scaler else loss).backward()
        if args.clip_norm > 0:
            if scaler:
                scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(params, args.clip_norm, foreach=True)
        if scaler:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        opt.zero_grad(set_to_none=True)

    return model, prepare, step


# Every engine on the same batches with the same weights and dropout off computes one model. The
# reference is the fairseq engine's model in float64 on the same device; what the device rounds in
# a precision is the fairseq engine's own distance from it there, measured on these batches: in
# fp32 each engine's every predicted position and their mean lie within support.rounding's bound of
# it (4x that rounding + 1e-6 of the reference; a LayerNorm bias off by 0.05 moves a position by
# 1e-2), in the run's precision their mean (against the mean absolute rounding, which no sign can
# cancel). Checked before any step is timed.
CHECK_BATCHES = 4


def fairseq_position_losses(encoder, batch, lang: int) -> torch.Tensor:
    """Each predicted position's loss under our encoder (its ``mlm_loss`` before the sum; at least
    in float32, as there, and in float64 for the float64 model)."""
    x, _ = encoder.extract_features(batch[0], lang)
    logits = encoder._logits(x.flatten(0, 1).index_select(0, batch[1]), lang)
    logits = logits.to(torch.promote_types(logits.dtype, torch.float32))
    return F.cross_entropy(logits, batch[2], reduction="none", ignore_index=encoder.padding_idx)


def float64_copy(encoder):
    """The fairseq engine's encoder in float64 (a copy, without its compiled loss): the exact model."""
    compiled, encoder._compiled_loss = encoder._compiled_loss, None
    try:
        exact = copy.deepcopy(encoder)
    finally:
        encoder._compiled_loss = compiled
    return exact.double()


def engine_losses_fn(name: str, module):
    """``(tokens, index, target, lang) -> each predicted position's loss`` of engine ``name``."""
    if name in ("fairseq", "float64"):
        return lambda tokens, index, target, lang: fairseq_position_losses(module, (tokens, index, target), lang)
    return lambda tokens, index, target, lang: module(tokens, index, target, lang, reduction="none")


@torch.no_grad()
def engine_losses(engines: dict, prepared: list, dev, precision: str, pad: int) -> dict[str, torch.Tensor]:
    """Each engine's losses of the predicted positions of ``prepared`` batches (padding slots left
    out), in ``precision`` (``fp64``: no autocast, the float64 model), dropout off."""
    dtype = DTYPES.get(precision)
    out: dict[str, torch.Tensor] = {}
    for name, module in engines.items():
        was, fn, got = module.training, engine_losses_fn(name, module), []
        module.train(False)
        try:
            with torch.autocast(dev.type, dtype=dtype or torch.float32, enabled=dtype is not None):
                for tokens, index, target, _, lang in prepared:
                    got.append(fn(tokens, index, target, int(lang)).cpu())
        finally:
            module.train(was)
        out[name] = torch.cat(got)[torch.cat([b[2].cpu().ne(pad) for b in prepared])]
    return out


def agreement(engines: dict, prepared: list, dev, precision: str, pad: int) -> dict:
    """The check above (``engines``: name -> module, the fairseq engine's encoder first); ``ok``
    and why not. The float64 reference is computed with SDPA's math kernel (the others take no
    float64)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.MATH):
        exact = engine_losses({"float64": float64_copy(engines["fairseq"])}, prepared, dev, "fp64", pad)["float64"]
    rec: dict = {"batches": len(prepared), "positions": len(exact), "roundings": ROUNDINGS, "floor": FLOOR,
                 "reference": "the fairseq engine's model in float64 on the same device",
                 "float64_mean_loss": float(exact.mean())}
    problems = []
    for prec in dict.fromkeys(["fp32", precision]):
        got = engine_losses(engines, prepared, dev, prec, pad)
        own = got["fairseq"]
        measured = {"position": rounding(own, exact), "mean": mean_rounding(own, exact)}
        bound = {"position": rounding_bound(measured["position"], float(exact.abs().max())),
                 "mean": rounding_bound(measured["mean"], abs(float(exact.mean())))}
        apart = {name: {"position": rounding(v, exact), "mean": abs(float(v.mean()) - float(exact.mean()))}
                 for name, v in got.items()}
        rec[prec] = {"mean_loss": {name: float(v.mean()) for name, v in got.items()}, "rounding": measured,
                     "bound": bound if prec == "fp32" else {"mean": bound["mean"]}, "apart": apart}
        for name, v in got.items():
            if not torch.isfinite(v).all():
                problems.append(f"{prec}: {name}'s loss is not finite at a position (mean {float(v.mean())})")
            elif prec == "fp32" and apart[name]["position"] > bound["position"]:
                problems.append(f"fp32: {name}'s loss at a position lies {apart[name]['position']:.3g} nats from the "
                                f"float64 model's, bound {bound['position']:.3g} (the device's own rounding there "
                                f"{measured['position']:.3g})")
            elif apart[name]["mean"] > bound["mean"]:
                problems.append(f"{prec}: {name}'s mean loss {float(v.mean()):.6f} lies {apart[name]['mean']:.3g} "
                                f"from the float64 model's {float(exact.mean()):.6f}, bound {bound['mean']:.3g} (the "
                                f"device's mean rounding there {measured['mean']:.3g})")
    rec["ok"], rec["problems"] = not problems, problems
    return rec


def finite_after(engines: dict, prepared: list, dev, precision: str, pad: int) -> dict:
    """After the timed steps: every engine's losses still finite (a diverged step times nothing real)."""
    got = engine_losses(engines, prepared, dev, precision, pad)
    finite = {k: bool(torch.isfinite(v).all()) for k, v in got.items()}
    return {"finite": finite, "ok": all(finite.values()),
            "mean_loss": {k: float(v.float().nanmean()) for k, v in got.items()}}


def remainder_batch(batch: dict, pad: int, mask_prob: float) -> dict:
    """``batch`` less its last stream, its host fields recomputed: the shape of a language's last
    batch in an epoch (the fairseq step pads it back to the full shape when compiled)."""
    from xling.pretrain.batches import add_host_fields

    net = batch["net_input"]
    smaller = {**batch, "target": batch["target"][:-1].clone(), "nsentences": batch["nsentences"] - 1,
               "net_input": {**net, "src_tokens": net["src_tokens"][:-1].clone(),
                             "src_lengths": net["src_lengths"][:-1].clone(),
                             "src_lang_id": net["src_lang_id"][:-1].clone()}}
    if "lang_id" in batch:
        smaller["lang_id"] = batch["lang_id"][:-1].clone()
    return add_host_fields(smaller, pad, mask_prob)


def toy_corpus(args, n_pool: int, tmp: Path) -> Path:
    """The binarised toy corpus: enough ~12-token sentences per language for ``n_pool`` batches
    of each language in streams; kept in ``--data`` and reused for the same sizes."""
    n_sent = max(400, 3 * n_pool * args.batch * args.tokens_per_sample // 12)
    sizes = {"n_train": n_sent, "vocab_per_language": args.vocab_per_language, "seed": 0}
    out = args.data or tmp / "bin"
    marker = out / "bench_corpus.json"
    if marker.exists() and json.loads(marker.read_text()) == sizes:
        return out
    write_toy_data(out, ["en", "fr"], n_valid=4, **sizes)
    marker.write_text(json.dumps(sizes) + "\n")
    return out


def summary(rates: list[float]) -> dict:
    return {"min": min(rates), "median": statistics.median(rates), "max": max(rates)}


class Blocks:
    """Timed blocks of steps of each engine, on the same batches in the same order."""

    def __init__(self, steps: dict, tokens_of: list[int], sync):
        self.steps, self.tokens_of, self.sync = steps, tokens_of, sync
        self.names = list(steps)

    def first_pass(self) -> dict[str, float]:
        """Seconds of every batch once per engine: each language's graphs compile here."""
        first = {}
        for name in self.names:
            self.sync()
            t0 = time.perf_counter()
            for i in range(len(self.tokens_of)):
                self.steps[name](i)
            self.sync()
            first[name] = time.perf_counter() - t0
        return first

    def rate(self, name: str, start: int, steps: int) -> float:
        """tokens/s of ``steps`` steps of engine ``name`` from batch ``start``."""
        self.sync()
        t0 = time.perf_counter()
        for j in range(steps):
            self.steps[name](start + j)
        self.sync()
        return sum(self.tokens_of[(start + j) % len(self.tokens_of)] for j in range(steps)) / (time.perf_counter() - t0)

    def warm_up(self, args) -> tuple[dict[str, list[float]], bool, int]:
        """Blocks of each engine until the last 3 of every one lie within ``--settle`` of their
        median (at most ``--max-warmup-blocks``): ``(rates, settled, the next batch)``."""
        warm: dict[str, list[float]] = {name: [] for name in self.names}
        settled, start = False, 0
        while not settled and len(warm["fairseq"]) < args.max_warmup_blocks:
            for name in self.names:
                warm[name].append(self.rate(name, start, args.steps))
            start += args.steps
            settled = all(len(r) >= 3 and (max(r[-3:]) - min(r[-3:])) <= args.settle * statistics.median(r[-3:])
                          for r in warm.values())
        return warm, settled, start

    def measure(self, args, start: int) -> dict[str, list[float]]:
        """``--blocks`` rounds of one block per engine, alternating which runs first."""
        rates: dict[str, list[float]] = {name: [] for name in self.names}
        for r in range(args.blocks):
            for name in (self.names if r % 2 == 0 else self.names[::-1]):  # no engine always runs first
                rates[name].append(self.rate(name, start, args.steps))
            start += args.steps
        return rates


def run(args, tmp: Path) -> dict:
    cuda, dev = args.device == "cuda", torch.device(args.device)
    n_pool = max(4, min(args.steps, 16))
    model_cfg, pre, (cfg, task, trainer) = fairseq_engine(args, tmp, toy_corpus(args, n_pool, tmp))
    # the other steps compile where the fairseq engine's model does (auto: a GPU and a large enough step)
    compile_on = bool(trainer.model.encoder.compiled)
    batches = full_batches(trainer, n_pool)
    encoder, pad = trainer.model.encoder, task.source_dictionary.pad()
    builders = {"plain": plain_engine, **({"transformers": transformers_engine} if args.transformers else {})}
    others = {name: build(args, task, encoder, pre, dev, compile_on) for name, build in builders.items()}
    prepared = [others["plain"][1](b) for b in batches]  # every other engine takes the same tensors
    agree = agreement({"fairseq": encoder, **{name: e[0] for name, e in others.items()}}, prepared[:CHECK_BATCHES],
                      dev, args.precision, pad)
    print(f"the engines' losses on {agree['batches']} batches ({agree['positions']} positions), same weights, "
          f"dropout off, against the float64 model's (mean {agree['float64_mean_loss']:.5f}): " + "; ".join(
              f"{k} " + ", ".join(f"{n} {v['apart'][n]['position']:.2e}" for n in v["apart"])
              + f" at most (the device's rounding {v['rounding']['position']:.2e})"
              for k, v in agree.items() if isinstance(v, dict) and "apart" in v))
    if not agree["ok"]:
        raise SystemExit("the engines do not compute the same model, no rate measured: " + "; ".join(agree["problems"]))
    tokens_of = [int(b["net_input"]["src_tokens"].ne(pad).sum()) for b in batches]
    steps = {"fairseq": lambda i: trainer.train_step([batches[i % len(batches)]])}
    for name, (_, _, run_step) in others.items():
        steps[name] = lambda i, run_step=run_step: run_step(prepared[i % len(prepared)])
    blocks = Blocks(steps, tokens_of, torch.cuda.synchronize if cuda else (lambda: None))
    t_warm = time.perf_counter()
    first = blocks.first_pass()
    if args.remainder_batch:
        small = remainder_batch(batches[0], pad, cfg.task.mask_prob)
        trainer.train_step([small])
        for _, prepare, run_step in others.values():
            run_step(prepare(small))
    warm, settled, start = blocks.warm_up(args)
    warmup = {"first_steps_s": first, "first_steps": len(batches), "blocks": len(warm["fairseq"]),
              "settled": settled, "seconds": time.perf_counter() - t_warm}
    rates = blocks.measure(args, start)
    after = finite_after({"fairseq": encoder, **{name: e[0] for name, e in others.items()}}, prepared[:CHECK_BATCHES],
                         dev, args.precision, pad)
    if not after["ok"]:
        raise SystemExit(f"a loss is not finite after the timed steps ({after['mean_loss']}): the rates time "
                         "diverged training, not reported")
    predicted = sum(b["n_predicted"] for b in batches) / sum(tokens_of)
    result = results(args, rates, warmup, predicted, model_cfg, compile_on, task, trainer,
                     {name: e[0] for name, e in others.items()})
    result["agreement"], result["after_timing"] = agree, after
    print_results(args, result)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        tmp_json = args.json.with_name(args.json.name + ".tmp")
        tmp_json.write_text(json.dumps(result, indent=2) + "\n")
        tmp_json.replace(args.json)
    return result


def results(args, rates: dict, warmup: dict, predicted: float, model_cfg: dict, compile_on: bool, task, trainer,
            others: dict) -> dict:
    """The record of a run: every engine's rates, the fairseq step's ratio to each, the model FLOP/s
    (and MFU on a GPU)."""
    cuda = args.device == "cuda"
    stats = {name: summary(r) for name, r in rates.items()}
    tps = {name: s["median"] for name, s in stats.items()}
    round_ratios = [f / p for f, p in zip(rates["fairseq"], rates["plain"])]
    per_token = train_flops_per_token(args.layers, args.dim, args.ffn, args.tokens_per_sample,
                                      len(task.source_dictionary), predicted)
    result = {
        "device": torch.cuda.get_device_name(0) if cuda else f"cpu ({args.threads} thread(s))",
        "torch": torch.__version__,
        "model": model_cfg, "batch": args.batch, "sep_emb": args.sep_emb, "precision": args.precision,
        "compile": compile_on, "deferred_logs": not args.no_deferred, "clip_norm": args.clip_norm,
        "remainder_batch": args.remainder_batch, "engines": list(rates),
        "ab": {"sdpa": args.sdpa, "adamw": args.adamw, "compile_mode": args.compile_mode},
        "vocab": len(task.source_dictionary), "vocab_rows": trainer.model.encoder.vocab_rows,
        "params_fairseq": sum(p.numel() for p in trainer.model.parameters()),
        **{f"params_{name}": sum(p.numel() for p in m.parameters()) for name, m in others.items()},
        "tokens_per_s": tps, "blocks_tokens_per_s": rates, "stats": stats,
        **{f"ratio_fairseq_over_{name}": tps["fairseq"] / tps[name] for name in others},
        "round_ratios": round_ratios, "round_ratio_median": statistics.median(round_ratios),
        "warmup": warmup, "steps_per_block": args.steps, "predicted_fraction": predicted,
        "flops_per_token": per_token, "achieved_flops_per_s": per_token * tps["fairseq"],
    }
    if cuda:
        peak = gpu_peak_tflops(args, result["device"])
        if peak:
            result["mfu"] = result["achieved_flops_per_s"] / 1e12 / peak
            for name in others:
                result[f"mfu_{name}"] = per_token * tps[name] / 1e12 / peak
        result["peak_memory_gb"] = torch.cuda.max_memory_allocated() / 2**30
    return result


def gpu_peak_tflops(args, device: str) -> float | None:
    """``--peak-tflops``, else the peak of the GPU by name (None when unknown)."""
    return args.peak_tflops or next((v for k, v in PEAK_TFLOPS.items() if k in device), None)


def print_results(args, result: dict) -> None:
    w = result["warmup"]
    ab = ", ".join(f"{k} {v}" for k, v in result["ab"].items() if v not in ("default", "fused"))
    print(f"{result['device']}, torch {result['torch']}, {args.precision}, compile "
          f"{'on' if result['compile'] else 'off'}, batch {args.batch} x {args.tokens_per_sample}, vocab "
          f"{result['vocab']} ({result['vocab_rows']} rows){', Sep Emb' if args.sep_emb else ''}"
          + (f"; A/B: {ab}" if ab else ""))
    print("params: " + "  ".join(f"{name} {result[f'params_{name}']:,}" for name in result["engines"]))
    print("first pass over the {} batches (compile included): ".format(w["first_steps"])
          + ", ".join(f"{k} {v:.1f} s" for k, v in w["first_steps_s"].items())
          + f"; warm-up {w['blocks']} blocks per engine, {'settled' if w['settled'] else 'NOT settled'}, "
          f"{w['seconds']:.0f} s")
    print(f"{'tokens/s':12s} {'min':>12s} {'median':>12s} {'max':>12s}   ({args.blocks} blocks of {args.steps} steps)")
    for name in result["engines"]:
        s = result["stats"][name]
        print(f"{name:12s} {s['min']:12.1f} {s['median']:12.1f} {s['max']:12.1f}")
    ratios = result["round_ratios"]
    print(f"ratio fairseq/plain = {result['ratio_fairseq_over_plain']:.3f} (medians); per round: median "
          f"{result['round_ratio_median']:.3f}, {min(ratios):.3f} - {max(ratios):.3f}"
          + (f"; fairseq/transformers = {result['ratio_fairseq_over_transformers']:.3f}"
             if "ratio_fairseq_over_transformers" in result else ""))
    print(f"fairseq step: {result['achieved_flops_per_s'] / 1e12:.3f} TFLOP/s of model FLOPs "
          f"({result['flops_per_token'] / 1e6:.2f} MFLOP per token)")
    if "mfu" in result:
        print(f"MFU: fairseq {100 * result['mfu']:.1f}%, " + ", ".join(
            f"{name} {100 * result[f'mfu_{name}']:.1f}%" for name in result["engines"][1:])
              + f" of {gpu_peak_tflops(args, result['device']):.0f} TFLOP/s")
    elif args.device == "cuda":
        print("unknown GPU peak: pass --peak-tflops for MFU")


if __name__ == "__main__":
    main()
