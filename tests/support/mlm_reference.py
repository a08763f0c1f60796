"""The MLM loss as the pretraining step computed it before the padded tables and the loss without
host syncs (``xling/pretrain/encoder.py``
at commit 0370f82 under fairseq's ``masked_lm`` criterion), on an encoder's parameters: torch's own
``nn.TransformerEncoderLayer`` forward, a padding mask looked up on the tokens, the predicted
positions picked by boolean indexing, logits over the unpadded table plus the bias, out-of-language
columns set to -inf, cross-entropy summed over the predictions. Tests hold the current step to it."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def reference_mlm_loss(enc, tokens: torch.Tensor, lang: int, target: torch.Tensor) -> torch.Tensor:
    """Summed loss of ``enc`` (an EncoderCore whose tables have exactly ``enc.vocab_size`` rows) on
    ``tokens`` [B, T] whose predicted positions hold their token in ``target`` (else padding)."""
    assert enc.vocab_rows == enc.vocab_size, "the reference is the unpadded model"
    pad = enc.padding_idx
    padding_mask = tokens.eq(pad)
    if not padding_mask.any():
        padding_mask = None
    e, p = enc._emb_index(lang), enc._pos_index(lang)
    positions = torch.arange(tokens.size(1))
    x = enc.embed_tokens[e](tokens) + enc.embed_positions[p](positions)[None]
    if enc.embed_languages is not None:  # XLM's language embeddings
        x = x + enc.embed_languages.weight[lang]
    x = enc.dropout(enc.emb_layer_norm[p](x))
    if padding_mask is not None:
        x = x.masked_fill(padding_mask.unsqueeze(-1), 0.0)
    for layer in list(enc.language_layers[lang]) + list(enc.shared_layers):
        x = nn.TransformerEncoderLayer.forward(layer, x, src_key_padding_mask=padding_mask)
    masked = target.ne(pad)
    h = x[masked]
    if enc.mlm_head == "bert":  # BERT's transform before the tied softmax; XLM's head is that alone
        h = enc.lm_layer_norm(F.gelu(enc.lm_dense(h)))
    logits = F.linear(h, enc.embed_tokens[e].weight) + enc.lm_bias
    if enc.vocab_mask is not None:
        logits = logits.masked_fill(~enc.vocab_mask[lang], float("-inf"))
    lprobs = F.log_softmax(logits, dim=-1, dtype=torch.float32)  # fairseq.modules.cross_entropy
    return F.nll_loss(lprobs, target[masked], reduction="sum", ignore_index=pad)
