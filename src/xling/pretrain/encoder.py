"""The MLM encoder of the paper's models (3.1, 4.3) in plain torch.

Training builds it inside fairseq (``xling.pretrain.fairseq_plugin.mlm_model``); fine-tuning and
analysis rebuild it from a checkpoint with :class:`MLMEncoder`, which imports no fairseq (fairseq's
import costs seconds in every short job). Both share :class:`EncoderCore`, so parameter names
and the computation are one.

Separate embeddings: token + positional embeddings (and their LayerNorm) per language; the
output softmax is tied to the batch language's embeddings, and with a vocabulary mask it only
covers that language's tokens (dict.<lang>.txt), so the other language's rows get no gradient.
Shared positions keep one positional embedding (and LayerNorm) for all languages beside separate
token embeddings: the "fake language" setup of Dufter & Schütze (2020), not one of the paper's
rows. Separate layers k: Transformer layers 1..k per language, the rest shared.

XLM's model (``facebookresearch/XLM``, ``xlm/model/transformer.py``), which the paper ran, where
it differs from BERT's (each a model argument; a checkpoint without it has BERT's, as it was
trained): a learnt embedding per language added to every token (``--language-embeddings``, with
two or more languages); the MLM head one linear layer tied to the embeddings (``--mlm-head xlm``;
BERT's adds dense + activation + LayerNorm); LayerNorm eps 1e-12 (``--layer-norm-eps``); no
dropout between the FFN's activation and its second linear layer (``--activation-dropout 0``;
torch's layer applies the layers' dropout there); XLM's initialisation (``--param-init xlm``).

Sizes for the hardware: the embedding tables (and the softmax they are tied to) have
``vocab_multiple``-aligned rows (``--vocab-multiple``; 1 in checkpoints written before it
existed). The rows past the dictionary are zero, never an input, and their logits are -inf, so
the loss, the gradients of the real rows and every real logit are those of the unpadded model;
:meth:`EncoderCore.output_layer` returns the dictionary's columns only. Training calls
``forward(..., masked_index=, masked_target=)``: the predicted positions as an index built on the
host, and the summed loss computed inside the (optionally compiled) encoder.
"""

from __future__ import annotations

import argparse
import functools
import math
from typing import TYPE_CHECKING, Callable, Mapping, cast

import torch
import torch.nn.functional as F
from torch import nn

from xling.pretrain.names import MODEL_NAME  # noqa: F401 - the loader checks checkpoints against it

if TYPE_CHECKING:
    from xling.pretrain.compiling import CompiledOrEager

    # EncoderCore is always mixed into a Module (MLMEncoder, the fairseq model): typed as one
    _ModuleMixin = nn.Module
else:
    _ModuleMixin = object


def _normal_02(data: torch.Tensor) -> None:
    """fairseq's draw: N(0, 0.02) on the CPU generator, so a model built on a GPU draws the same."""
    data.copy_(data.cpu().normal_(mean=0.0, std=0.02).to(data.device))


def _init_bert_attention(attn: nn.MultiheadAttention) -> None:
    """fairseq's attention holds k_proj, v_proj, q_proj and out_proj as Linear layers, which its
    ``init_bert_params`` reaches first (drawn as Linears, biases zeroed), and then draws q, k and v
    again (the MultiheadAttention branch). torch packs q, k, v in ``in_proj_weight`` (rows q, k, v):
    the same draws in the same order give the same values."""
    d = attn.embed_dim
    q, k, v = (attn.in_proj_weight.data[i * d:(i + 1) * d] for i in range(3))
    for w in (k, v, q):  # the Linear branch, in fairseq's order of the layers
        _normal_02(w)
    _normal_02(attn.out_proj.weight.data)
    for w in (q, k, v):  # the MultiheadAttention branch
        _normal_02(w)
    for b in (attn.in_proj_bias, attn.out_proj.bias):
        if b is not None:
            b.data.zero_()


def init_bert_params(module: nn.Module) -> None:
    """BERT's initialisation as fairseq's ``init_bert_params`` gives it under ``module.apply``
    (children before their parent): N(0, 0.02) weights of Linear and Embedding layers and of the
    attention's q, k, v and output projections, zero biases and padding rows, LayerNorms 1 and 0.
    Call it on the root module (not through ``apply``): the packed attention is drawn whole, in
    fairseq's order, so a layer drawn from the same generator state has fairseq's values."""
    if isinstance(module, nn.MultiheadAttention):
        _init_bert_attention(module)
        return
    for child in module.children():
        init_bert_params(child)
    if isinstance(module, nn.Linear):
        _normal_02(module.weight.data)
        if module.bias is not None:
            module.bias.data.zero_()
    if isinstance(module, nn.Embedding):
        _normal_02(module.weight.data)
        if module.padding_idx is not None:
            module.weight.data[module.padding_idx].zero_()


def _bert_linear_and_embedding(module: nn.Module) -> None:
    if isinstance(module, nn.Linear):
        module.weight.data.normal_(mean=0.0, std=0.02)
        if module.bias is not None:
            module.bias.data.zero_()
    if isinstance(module, nn.Embedding):
        module.weight.data.normal_(mean=0.0, std=0.02)
        if module.padding_idx is not None:
            module.weight.data[module.padding_idx].zero_()


def init_bert_params_xavier_attention(module: nn.Module) -> None:
    """BERT's initialisation as this pipeline drew it before it followed fairseq's: N(0, 0.02) for
    Linear and Embedding layers only, so torch's packed q/k/v kept its xavier initialisation
    (``model.init: bert_xavier_attention``: rebuilds, and keeps the params of, models trained so)."""
    module.apply(_bert_linear_and_embedding)


def init_xlm_params(module: nn.Module, embedding_std: float | None = None) -> None:
    """XLM's initialisation (``transformer.py``: ``Embedding``, ``Linear``): N(0, dim^-1/2) for
    every embedding table (``embedding_std``: that std instead), zero padding rows; torch's default
    for linear layers (U(+-1/sqrt(fan_in)) weights and biases), which XLM keeps, its q/k/v/out
    projections being plain ``nn.Linear``; the tied MLM bias as the bias of XLM's
    ``Linear(dim, n_words)``; LayerNorms 1 and 0."""
    for m in module.modules():
        if isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=embedding_std or m.embedding_dim ** -0.5)
            if m.padding_idx is not None:
                nn.init.zeros_(m.weight[m.padding_idx])
        elif isinstance(m, nn.Linear):
            m.reset_parameters()
        elif isinstance(m, nn.MultiheadAttention):
            # torch packs XLM's q_lin, k_lin, v_lin (each Linear(dim, dim)) in one tensor
            bound = m.embed_dim ** -0.5
            nn.init.uniform_(m.in_proj_weight, -bound, bound)
            nn.init.uniform_(m.in_proj_bias, -bound, bound)
    if isinstance(module, EncoderCore):
        bound = module.dim ** -0.5
        nn.init.uniform_(module.lm_bias, -bound, bound)


def init_xlm_params_768(module: nn.Module) -> None:
    """XLM's initialisation with the embeddings at the paper's width's scale, N(0, 768^-1/2) = 0.036,
    whatever the model's width: XLM's formula gives 0.125 at the testbed's 64."""
    init_xlm_params(module, embedding_std=768 ** -0.5)


INITIALISATIONS: dict[str, Callable[[nn.Module], None]] = {
    "bert": init_bert_params, "xlm": init_xlm_params, "xlm_768": init_xlm_params_768,
    "bert_xavier_attention": init_bert_params_xavier_attention}
MLM_HEADS = ("bert", "xlm")


# what the encoder reads of fairseq's arguments (the options of xling_mlm)
MODEL_ARGS = ("encoder_layers", "encoder_embed_dim", "encoder_ffn_embed_dim", "encoder_attention_heads",
              "activation_fn", "dropout", "attention_dropout", "max_positions", "separate_embeddings",
              "shared_positions", "separate_layers", "language_embeddings", "mlm_head", "layer_norm_eps",
              "activation_dropout", "param_init", "vocab_multiple")


def model_args(model: Mapping, vocab_multiple: int, **overrides) -> argparse.Namespace:
    """fairseq's arguments of ``xling_mlm`` for a config ``model:`` section as the schema fills it
    (``activation_dropout`` null: the layers' dropout), every parameter shared; ``overrides``:
    arguments by their fairseq names (``separate_layers=1``...)."""
    args = argparse.Namespace(
        encoder_layers=int(model["layers"]), encoder_embed_dim=int(model["dim"]),
        encoder_ffn_embed_dim=int(model["ffn_dim"]), encoder_attention_heads=int(model["heads"]),
        activation_fn=model["activation"], dropout=float(model["dropout"]),
        attention_dropout=float(model["attention_dropout"]), max_positions=int(model["tokens_per_sample"]),
        separate_embeddings=False, shared_positions=False, separate_layers=0,
        language_embeddings=bool(model["language_embeddings"]), mlm_head=model["mlm_head"],
        layer_norm_eps=float(model["layer_norm_eps"]), activation_dropout=model["activation_dropout"],
        param_init=model["init"], vocab_multiple=int(vocab_multiple))
    for key, value in overrides.items():
        if key not in MODEL_ARGS:
            raise ValueError(f"{key}: not an argument of {MODEL_NAME} ({', '.join(MODEL_ARGS)})")
        setattr(args, key, value)
    if args.activation_dropout is None:
        args.activation_dropout = args.dropout
    return args


@functools.cache
def _paper_model() -> tuple[dict, int]:
    from xling.config import REPO, load

    cfg = load(REPO / "config" / "config.yaml")
    return dict(cfg["model"]), int(cfg["pretrain"]["vocab_multiple"])


def paper_model_args(**overrides) -> argparse.Namespace:
    """The paper's model (3.1) as fairseq's arguments: config/config.yaml's ``model:`` section,
    its optional keys at the schema's defaults (the one place either is written); ``overrides``
    as :func:`model_args` takes them (a testbed's sizes)."""
    model, multiple = _paper_model()
    return model_args(model, overrides.pop("vocab_multiple", multiple), **overrides)


def check_model_args(args) -> None:
    """Every argument the encoder reads, there: a checkpoint written before one of them existed
    is refused (retrain it), not given a value it may not have had."""
    missing = [k for k in MODEL_ARGS if getattr(args, k, None) is None]
    if missing:
        raise ValueError(f"model arguments {', '.join('--' + k.replace('_', '-') for k in missing)} missing: a "
                         "model of code from before them (retrain it with this pipeline)")


def padded_rows(vocab: int, multiple: int) -> int:
    """Rows of the embedding table for ``vocab`` entries: the next multiple of ``multiple``
    (matrix products over 79,897 columns fell back to slow GEMM kernels; 79,936 do not)."""
    if vocab < 1 or multiple < 1:
        raise ValueError(f"vocabulary {vocab} and row multiple {multiple} must be positive")
    return math.ceil(vocab / multiple) * multiple


class EncoderLayer(nn.TransformerEncoderLayer):
    """torch's post-LN (BERT) layer, same parameters and maths, with a leaner training forward: one
    packed q/k/v projection straight into ``scaled_dot_product_attention`` in [B, heads, T, d]
    layout, instead of ``nn.MultiheadAttention``'s checks and transposes to [T, B, D] on every
    call. Evaluation (where torch has its own fused inference kernel) and other uses (attention
    masks, causal, pre-LN, float padding masks) take torch's forward."""

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        if (not self.training or src_mask is not None or is_causal or self.norm_first
                or not self.self_attn.batch_first
                or (src_key_padding_mask is not None and src_key_padding_mask.dtype != torch.bool)):
            return super().forward(src, src_mask, src_key_padding_mask, is_causal)
        attn = self.self_attn
        b, t, d = src.shape
        qkv = F.linear(src, attn.in_proj_weight, attn.in_proj_bias)
        q, k, v = qkv.view(b, t, 3, attn.num_heads, d // attn.num_heads).permute(2, 0, 3, 1, 4)
        # key padding: True marks a pad key; SDPA's boolean mask marks the keys to attend to
        keep = None if src_key_padding_mask is None else ~src_key_padding_mask.view(b, 1, 1, t)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, dropout_p=attn.dropout)
        a = attn.out_proj(a.transpose(1, 2).reshape(b, t, d))
        x = self.norm1(src + self.dropout1(a))
        return self.norm2(x + self._ff_block(x))


def build_layer(dim: int, heads: int, ffn_dim: int, dropout: float, attention_dropout: float, activation: str,
                layer_norm_eps: float = 1e-5, activation_dropout: float | None = None):
    """Post-LN (BERT) Transformer layer, with its own attention dropout and the dropout after the
    FFN's activation (``activation_dropout``; None: ``dropout``, as torch's layer has it)."""
    layer = EncoderLayer(
        dim, heads, ffn_dim, dropout=dropout, activation=activation, batch_first=True, norm_first=False,
        layer_norm_eps=layer_norm_eps)
    layer.self_attn.dropout = attention_dropout
    if activation_dropout is not None:
        layer.dropout.p = float(activation_dropout)
    return layer


class EncoderCore(_ModuleMixin):
    """The encoder's modules and computation; a mixin so that the fairseq model (training) and
    :class:`MLMEncoder` (loading, no fairseq import) have the same parameter names."""

    # buffers (registered in _build)
    vocab_mask: torch.Tensor | None
    padding_rows: torch.Tensor
    _compiled_loss: CompiledOrEager | None

    def _build(self, args, vocab: int, padding_idx: int, n_languages: int, vocab_masks: torch.Tensor | None):
        """``vocab``: the dictionary's entries (``<mask>`` included); ``vocab_masks``: [languages,
        vocab or padded rows] booleans of each language's softmax, or None."""
        dim = args.encoder_embed_dim
        self.vocab_size = vocab
        check_model_args(args)
        rows = padded_rows(vocab, int(args.vocab_multiple))
        self.vocab_rows = rows
        self.n_languages = n_languages
        self.num_layers = args.encoder_layers
        self.dim = dim
        self.separate_embeddings = bool(args.separate_embeddings)
        self.separate_layers = int(args.separate_layers)
        if not 0 <= self.separate_layers <= self.num_layers:
            raise ValueError(f"--separate-layers must be in 0..{self.num_layers}, got {self.separate_layers}")
        self.padding_idx = padding_idx
        self.max_positions_ = args.max_positions
        self.dropout = nn.Dropout(args.dropout)
        self.shared_positions = bool(args.shared_positions)
        n_emb = n_languages if self.separate_embeddings else 1
        n_pos = 1 if self.shared_positions else n_emb
        eps = float(args.layer_norm_eps)
        if args.mlm_head not in MLM_HEADS or args.param_init not in INITIALISATIONS:
            raise ValueError(f"--mlm-head {args.mlm_head} / --param-init {args.param_init}: "
                             f"expected one of {MLM_HEADS} / {tuple(INITIALISATIONS)}")
        self.embed_tokens = nn.ModuleList(
            nn.Embedding(rows, dim, padding_idx=self.padding_idx) for _ in range(n_emb))
        self.embed_positions = nn.ModuleList(nn.Embedding(args.max_positions, dim) for _ in range(n_pos))
        self.emb_layer_norm = nn.ModuleList(nn.LayerNorm(dim, eps=eps) for _ in range(n_pos))
        # XLM: one row per language, added to every token's input, only with two languages or more
        self.embed_languages = (nn.Embedding(n_languages, dim) if args.language_embeddings and n_languages > 1
                                else None)

        def layer():
            return build_layer(dim, args.encoder_attention_heads, args.encoder_ffn_embed_dim,
                               args.dropout, args.attention_dropout, args.activation_fn, eps,
                               args.activation_dropout)

        self.language_layers = nn.ModuleList(
            nn.ModuleList(layer() for _ in range(self.separate_layers)) for _ in range(n_languages))
        self.shared_layers = nn.ModuleList(layer() for _ in range(self.num_layers - self.separate_layers))
        self.mlm_head = args.mlm_head
        self.lm_activation = args.activation_fn
        if self.mlm_head == "bert":  # XLM's head is the tied linear layer alone
            self.lm_dense = nn.Linear(dim, dim)
            self.lm_layer_norm = nn.LayerNorm(dim, eps=eps)
        self.lm_bias = nn.Parameter(torch.zeros(rows))
        if vocab_masks is not None:
            masks = vocab_masks.bool()
            if masks.shape[-1] not in (vocab, rows):
                raise ValueError(f"vocabulary masks over {masks.shape[-1]} entries for a vocabulary of {vocab}")
            self.register_buffer("vocab_mask", F.pad(masks, (0, rows - masks.shape[-1]), value=False))
        else:
            self.vocab_mask = None
        # rows past the dictionary: never a target, so their logits are -inf (not saved: derived)
        self.register_buffer("padding_rows", torch.arange(rows) >= vocab, persistent=False)
        INITIALISATIONS[args.param_init](self)
        for emb in self.embed_tokens:  # the rows past the dictionary: zero, never input nor target
            cast(nn.Embedding, emb).weight.data[vocab:] = 0.0
        self.lm_bias.data[vocab:] = 0.0
        self._compiled_loss = None  # see compile_loss

    # -- language handling -------------------------------------------------------------
    @property
    def language_specific(self) -> bool:
        """Whether the computation depends on the language (so the batch must have one)."""
        return (self.separate_embeddings or self.separate_layers > 0 or self.vocab_mask is not None
                or self.embed_languages is not None)

    def batch_language(self, src_lang_id) -> int:
        """The single language of a batch (needed when parts are per language)."""
        if not self.language_specific:
            return 0
        if src_lang_id is None:
            raise ValueError("this model has per-language parts: src_lang_id is required")
        if isinstance(src_lang_id, int):
            lang = src_lang_id
        else:
            lang = int(src_lang_id.reshape(-1)[0])
            if not bool((src_lang_id == lang).all()):
                raise ValueError("a batch must hold one language (use --one-language-batches)")
        if not 0 <= lang < self.n_languages:
            raise ValueError(f"language id {lang} outside 0..{self.n_languages - 1}")
        return lang

    def _emb_index(self, lang: int) -> int:
        return lang if self.separate_embeddings else 0

    def _pos_index(self, lang: int) -> int:
        return 0 if self.shared_positions else self._emb_index(lang)

    def language_specific_parameters(self, lang: int) -> list[nn.Parameter]:
        """``lang``'s own copies of Table 1's separated parts. The language embeddings are one
        table that fine-tuning trains as XLM's XNLI fine-tuning does (``embedder.py``
        ``get_parameters``): only the batch language's row gets a gradient."""
        if not self.separate_embeddings and self.separate_layers == 0:
            return []
        params: list[nn.Parameter] = []
        if self.separate_embeddings:
            params.extend(self.embed_tokens[lang].parameters())
            if not self.shared_positions:
                for mod in (self.embed_positions, self.emb_layer_norm):
                    params.extend(mod[lang].parameters())
        params.extend(self.language_layers[lang].parameters())
        return params

    def shared_parameters(self) -> list[nn.Parameter]:
        specific = {id(p) for lang in range(self.n_languages) for p in self.language_specific_parameters(lang)}
        return [p for p in self.parameters() if id(p) not in specific]

    # -- forward -------------------------------------------------------------------------
    def extract_features(self, src_tokens, lang: int, padding_mask=None, return_all_hiddens=False,
                         padded: bool | None = None):
        """Hidden states [B, T, D] after the last layer, and (if asked) all 1 + L of them.
        ``padded``: whether any position is padding, when the caller knows it on the host
        (None: looked up on the tokens or ``padding_mask``, a device sync on a GPU)."""
        if src_tokens.size(1) > self.max_positions_:
            raise ValueError(f"sequence of {src_tokens.size(1)} tokens exceeds {self.max_positions_} positions")
        if padded is None:
            if padding_mask is None:
                padding_mask = src_tokens.eq(self.padding_idx)
            padded = bool(padding_mask.any())
        if not padded:
            padding_mask = None  # lets torch skip the masking work
        elif padding_mask is None:
            padding_mask = src_tokens.eq(self.padding_idx)
        e, p = self._emb_index(lang), self._pos_index(lang)
        positions = torch.arange(src_tokens.size(1), device=src_tokens.device)
        x = self.embed_tokens[e](src_tokens) + self.embed_positions[p](positions)[None]
        if self.embed_languages is not None:
            x = x + self.embed_languages.weight[lang]
        x = self.dropout(self.emb_layer_norm[p](x))
        if padding_mask is not None:
            x = x.masked_fill(padding_mask.unsqueeze(-1), 0.0)
        states = [x] if return_all_hiddens else None
        for layer in list(cast(nn.ModuleList, self.language_layers[lang])) + list(self.shared_layers):
            x = layer(x, src_key_padding_mask=padding_mask)
            if states is not None:
                states.append(x)
        return x, states

    def _output_bias(self, lang: int):
        """The softmax bias with -inf on the columns ``lang`` never predicts: other languages'
        tokens (a vocabulary mask) and the rows past the dictionary."""
        if self.vocab_mask is not None:  # False on the padding rows too
            return self.lm_bias.masked_fill(~self.vocab_mask[lang], float("-inf"))
        if self.vocab_rows > self.vocab_size:
            return self.lm_bias.masked_fill(self.padding_rows, float("-inf"))
        return self.lm_bias

    def _logits(self, features, lang: int):
        """Logits over every row of the table, [..., vocab_rows]."""
        x = features
        if self.mlm_head == "bert":
            x = self.lm_dense(x)
            x = F.gelu(x) if self.lm_activation == "gelu" else F.relu(x)
            x = self.lm_layer_norm(x)
        table = cast(nn.Embedding, self.embed_tokens[self._emb_index(lang)])
        return F.linear(x, table.weight, self._output_bias(lang))

    def output_layer(self, features, lang: int):
        """MLM logits over the dictionary's entries, [..., vocab_size]."""
        logits = self._logits(features, lang)
        return logits[..., : self.vocab_size] if self.vocab_rows > self.vocab_size else logits

    def mlm_loss(self, src_tokens, lang: int, padded: bool | None, masked_index, masked_target):
        """Summed cross-entropy of the predicted positions: ``masked_index`` indexes the
        flattened [B * T] positions, ``masked_target`` holds their tokens (padding_idx: a slot
        that predicts nothing). Shapes depend on the batch's shape only, never on its values,
        so the step needs no device sync and compiles to one graph per shape."""
        x, _ = self.extract_features(src_tokens, lang, padded=padded)
        x = x.flatten(0, 1).index_select(0, masked_index)  # the head only where a token is predicted
        logits = self._logits(x, lang)
        return F.cross_entropy(logits.float(), masked_target, reduction="sum", ignore_index=self.padding_idx)

    def compile_loss(self, **compile_kwargs) -> None:
        """Run :meth:`mlm_loss` through ``torch.compile`` (eagerly where that fails: see
        :class:`xling.pretrain.compiling.CompiledOrEager`), one static graph per language (where
        the parts are per language), padded length (the batches' shapes:
        :func:`xling.pretrain.batches.pad_to_shape`) and padding or not."""
        from xling.pretrain.batches import length_buckets
        from xling.pretrain.compiling import CompiledOrEager

        languages = self.n_languages if self.language_specific else 1
        compile_kwargs.setdefault("max_graphs", languages * len(length_buckets(self.max_positions_)) * 2)
        self._compiled_loss = CompiledOrEager(self.mlm_loss, **compile_kwargs)

    @property
    def compiled(self) -> bool:
        return self._compiled_loss is not None and self._compiled_loss.active

    def forward(self, src_tokens, src_lengths=None, src_lang_id=None, masked_tokens=None,
                features_only=False, return_all_hiddens=False, src_lang=None, padded=None,
                masked_index=None, masked_target=None, **unused):
        """``(logits, {"inner_states": ...})``; with ``masked_target`` (training):
        ``(summed loss, {})``. ``src_lang``/``padded``: the batch's language and whether it holds
        padding, as the host knows them (else read from ``src_lang_id``/the tokens). Predicted
        positions: ``masked_index`` (flat indices) or ``masked_tokens`` (a boolean mask)."""
        lang = self.batch_language(src_lang if src_lang is not None else src_lang_id)
        if masked_target is not None:
            if masked_index is None:
                raise ValueError("masked_target needs masked_index (the positions it belongs to)")
            # compiled for training only: validation runs eagerly rather than compile a second graph
            loss_fn = self._compiled_loss if self._compiled_loss is not None and self.training else self.mlm_loss
            return loss_fn(src_tokens, lang, padded, masked_index, masked_target), {}
        x, states = self.extract_features(src_tokens, lang, return_all_hiddens=return_all_hiddens, padded=padded)
        if not features_only:
            # project only the masked positions: the softmax is the costly part
            if masked_index is not None:
                x = x.flatten(0, 1).index_select(0, masked_index)
            elif masked_tokens is not None:
                x = x[masked_tokens]
            x = self.output_layer(x, lang)
        return x, {"inner_states": states}

    def max_positions(self):
        return self.max_positions_


class MLMEncoder(EncoderCore, nn.Module):
    """The encoder without fairseq: ``vocab`` entries (the dictionary with ``<mask>``), its
    tables padded as ``args.vocab_multiple`` says."""

    def __init__(self, args, vocab: int, padding_idx: int, n_languages: int, vocab_masks: torch.Tensor | None):
        nn.Module.__init__(self)
        self._build(args, vocab, padding_idx, n_languages, vocab_masks)
