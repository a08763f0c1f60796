"""The pretrained encoder's forward pass for M grid cells at once (xling.finetune.grid).

The cells share the input batch but each has its own trained weights: a weight the cells train
has a leading cell axis ``[M, ...]`` and its matrix products are batched over it (``baddbmm``);
a frozen weight (a language's own embeddings or bottom layers) is one tensor for all cells. Hidden
states are ``[N, D]`` (N = batch x length) until the first per-cell weight, then ``[M, N, D]``,
so a frozen bottom is computed once. Dropout of hidden states draws one mask for all cells (as
jobs of one seed draw from one random stream); attention dropout stays per cell. The computation
is :class:`xling.pretrain.encoder.EncoderCore`'s ``extract_features`` (post-LN torch Transformer
layers) written out; ``tests/test_finetune_grid.py`` checks it against the module cell by cell.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping, cast

import torch
import torch.nn.functional as F
from torch import nn

if TYPE_CHECKING:
    from xling.pretrain.encoder import EncoderCore

Weights = Mapping[str, torch.Tensor]


def linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``x W^T + b``; ``x`` [N, in] or [M, N, in], ``w`` [out, in] or [M, out, in], ``b`` [out] or [M, out]."""
    if w.dim() == 2:
        y = F.linear(x, w, b if b.dim() == 1 else None)
        return y if b.dim() == 1 else y + b.unsqueeze(-2)
    if x.dim() == 2:
        x = x.expand(w.size(0), *x.shape)
    if b.dim() == 2:
        return torch.baddbmm(b.unsqueeze(1), x, w.transpose(1, 2))
    return torch.bmm(x, w.transpose(1, 2)) + b


def layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float) -> torch.Tensor:
    """LayerNorm over the last axis with a shared ([D]) or per-cell ([M, D]) affine map."""
    if w.dim() == 1 and b.dim() == 1:
        return F.layer_norm(x, x.shape[-1:], w, b, eps)
    y = F.layer_norm(x, x.shape[-1:], None, None, eps)
    return y * (w.unsqueeze(-2) if w.dim() == 2 else w) + (b.unsqueeze(-2) if b.dim() == 2 else b)


def dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Dropout with one mask for all cells of ``x`` [M, N, D] (as jobs of one seed draw from one
    random stream; and M times less random-number work)."""
    if not training or p == 0.0:
        return x
    if x.dim() == 2:
        return F.dropout(x, p, True)
    return x * F.dropout(torch.ones_like(x[0]), p, True)


class _Layer:
    """The constants of one torch TransformerEncoderLayer (post-LN, as ``build_layer`` makes them)."""

    def __init__(self, prefix: str, layer: nn.Module):
        if not isinstance(layer, nn.TransformerEncoderLayer):
            raise TypeError(f"{prefix}: a torch TransformerEncoderLayer expected, got {type(layer).__name__}")
        attn = layer.self_attn
        if layer.norm_first or not attn.batch_first or not attn._qkv_same_embed_dim or attn.in_proj_bias is None:
            raise TypeError(f"{prefix}: only post-LN, batch-first layers with one biased qkv projection "
                            "(xling.pretrain.encoder.build_layer) are supported")
        self.prefix = prefix
        self.heads = attn.num_heads
        self.p_attn = float(attn.dropout)
        self.p_out, self.p_ffn, self.p_res = layer.dropout1.p, layer.dropout.p, layer.dropout2.p
        self.eps1, self.eps2 = layer.norm1.eps, layer.norm2.eps
        self.activation: Callable[[torch.Tensor], torch.Tensor] = layer.activation

    def __call__(self, w: Weights, x: torch.Tensor, key_bias: torch.Tensor, batch: int, length: int,
                 training: bool) -> torch.Tensor:
        """``key_bias`` [B, T]: 0 at a token, -inf at padding (as torch's attention makes of a
        key padding mask)."""
        p = self.prefix
        dim = x.size(-1)
        qkv = linear(x, w[p + "self_attn.in_proj_weight"], w[p + "self_attn.in_proj_bias"])  # [(M,) N, 3D]
        lead = qkv.shape[:-2]
        q, k, v = qkv.reshape(-1, length, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        bias = key_bias.repeat(q.size(0) // batch, 1).view(q.size(0), 1, 1, length)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=self.p_attn if training else 0.0)
        a = a.transpose(1, 2).reshape(*lead, batch * length, dim)
        a = linear(a, w[p + "self_attn.out_proj.weight"], w[p + "self_attn.out_proj.bias"])
        x = layer_norm(x + dropout(a, self.p_out, training), w[p + "norm1.weight"], w[p + "norm1.bias"], self.eps1)
        f = self.activation(linear(x, w[p + "linear1.weight"], w[p + "linear1.bias"]))
        f = linear(dropout(f, self.p_ffn, training), w[p + "linear2.weight"], w[p + "linear2.bias"])
        return layer_norm(x + dropout(f, self.p_res, training), w[p + "norm2.weight"], w[p + "norm2.bias"],
                          self.eps2)


class CellEncoder:
    """``EncoderCore.extract_features`` (last layer) over weights that may carry a cell axis.

    ``core``: the loaded model's encoder (``LoadedEncoder.encoder``); the weights are passed per
    call under its parameter names, so the same code runs eagerly and compiled."""

    def __init__(self, core: EncoderCore):
        for attr in ("embed_tokens", "embed_positions", "emb_layer_norm", "language_layers", "shared_layers",
                     "_emb_index", "_pos_index"):
            if not hasattr(core, attr):
                raise TypeError(f"grid fine-tuning needs an xling.pretrain.encoder.EncoderCore, "
                                f"got {type(core).__name__} (no {attr})")
        self.core = core
        self.max_positions = core.max_positions_
        self.p_embed = core.dropout.p
        self.eps_embed = [cast(nn.LayerNorm, ln).eps for ln in core.emb_layer_norm]
        # XLM's language embeddings (a table every cell trains; a row per language)
        self.language_table = "embed_languages.weight" if getattr(core, "embed_languages", None) is not None else None
        self.language_layers = [[_Layer(f"language_layers.{lang}.{i}.", layer)
                                 for i, layer in enumerate(cast(nn.ModuleList, layers))]
                                for lang, layers in enumerate(core.language_layers)]
        self.shared_layers = [_Layer(f"shared_layers.{i}.", layer) for i, layer in enumerate(core.shared_layers)]

    def used_parameters(self, lang: int) -> list[str]:
        """Names of the parameters a forward pass in language ``lang`` reads."""
        e, p = self.core._emb_index(lang), self.core._pos_index(lang)
        names = [f"embed_tokens.{e}.weight", f"embed_positions.{p}.weight", f"emb_layer_norm.{p}.weight",
                 f"emb_layer_norm.{p}.bias"] + ([self.language_table] if self.language_table else [])
        params = dict(self.core.named_parameters())
        for layer in self.language_layers[lang] + self.shared_layers:
            names += [n for n in params if n.startswith(layer.prefix)]
        return names

    def __call__(self, w: Weights, tokens: torch.Tensor, lang: int, padding_mask: torch.Tensor, cells: int,
                 training: bool) -> torch.Tensor:
        """Last-layer states [cells, B, T, D] of ``tokens`` [B, T] (``padding_mask`` True at padding)."""
        batch, length = tokens.shape
        if length > self.max_positions:
            raise ValueError(f"sequence of {length} tokens exceeds {self.max_positions} positions")
        e, p = self.core._emb_index(lang), self.core._pos_index(lang)
        table = w[f"embed_tokens.{e}.weight"]  # [V, D] or [M, V, D]
        x = table.index_select(-2, tokens.reshape(-1))  # [(M,) N, D]
        pos = w[f"embed_positions.{p}.weight"][..., :length, :]
        x = (x.unflatten(-2, (batch, length)) + pos.unsqueeze(-3)).flatten(-3, -2)
        if self.language_table:
            x = x + w[self.language_table][..., lang, :].unsqueeze(-2)  # [(M,) 1, D]: every token
        x = layer_norm(x, w[f"emb_layer_norm.{p}.weight"], w[f"emb_layer_norm.{p}.bias"], self.eps_embed[p])
        x = dropout(x, self.p_embed, training)
        x = x.masked_fill(padding_mask.reshape(-1, 1), 0.0)
        key_bias = torch.zeros(padding_mask.shape, dtype=x.dtype, device=x.device).masked_fill(padding_mask,
                                                                                               float("-inf"))
        for layer in self.language_layers[lang] + self.shared_layers:
            x = layer(w, x, key_bias, batch, length, training)
        if x.dim() == 2:  # nothing trained (no cell axis yet): every cell has the same states
            x = x.expand(cells, *x.shape)
        return x.view(cells, batch, length, -1)
