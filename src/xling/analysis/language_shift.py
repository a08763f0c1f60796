"""Language-specific information as a mean vector, and token translation by shifting it
(Liu et al. 2020, Section 4).

- Mean of language (MoL, 4.1.1): ``R_L^l``, the mean of every context-dependent representation
  ``h_{x,i}^l`` of a language's corpus at layer ``l`` (:class:`LanguageMeans`, :func:`language_means`).
- Mean difference shift (MDS): ``D^l(L1 -> L2) = R_L2^l - R_L1^l`` (:func:`mean_difference`).
- Unsupervised token translation (4.2.1): add ``alpha * D^l`` to every token's hidden state at
  layer ``l``, run the remaining layers and the MLM head on the unmasked input, and take the argmax
  token at every position (:func:`translate_tokens`; the shift itself is :func:`shift_at`, which
  also serves 4.3's shifted fine-tuned classifier). Convert rate and BLEU-1 are in
  ``xling.metrics.translation``.

Layers are numbered as in the paper and as ``transformers``' ``hidden_states``: 0 is the embedding
output, ``l`` in 1..L the output of the l-th Transformer block. Two model kinds: ``transformers``
BERT models (m-BERT; our exported testbed models, ``xling.export.huggingface``) and the project's
encoder (``xling.pretrain.encoder.EncoderCore``, bare or inside a ``LoadedEncoder``), whose blocks
for a language are its language layers, then the shared layers.

Which tokens enter a mean is the caller's ``mask``. The paper averages over "all the
context-dependent representation in the corpora", i.e. every position of the model's input, so
:func:`language_means` counts the special tokens ([CLS]/[SEP], ``<s>``/``</s>``) unless they are
named in ``exclude_ids``; padding never counts.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterable, Iterator, Sequence, cast

import numpy as np
import torch
from torch import nn

from xling.pretrain.encoder import EncoderCore

# ---------------------------------------------------------------------------------------------
# The model's parts


def _tensor(x) -> torch.Tensor:
    """A torch tensor of ``x`` (tensor, numpy array or nested list)."""
    return x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x))


def _core(model, lang: int | str) -> tuple[EncoderCore, int] | None:
    """(encoder, language id) for the project's encoder, bare or in a LoadedEncoder; else None."""
    inner = getattr(model, "encoder", None)
    if not isinstance(model, EncoderCore) and isinstance(inner, EncoderCore) and hasattr(model, "lang_id"):
        lang = model.lang_id(lang) if isinstance(lang, str) else lang
        model = inner
    if not isinstance(model, EncoderCore):
        return None
    if not isinstance(lang, int) or not 0 <= lang < model.n_languages:
        raise ValueError(f"lang must be a language id in 0..{model.n_languages - 1} of this encoder, got {lang!r}")
    return model, lang


def _bert(model):
    """The ``BertModel`` of a transformers BERT model (itself, or its ``.bert``); else None."""
    # imported here: the project's encoder alone needs no transformers (seconds of import)
    from transformers import BertModel

    if isinstance(model, BertModel):
        return model
    inner = getattr(model, "bert", None)
    return inner if isinstance(inner, BertModel) else None


def _unknown(model) -> TypeError:
    return TypeError(f"expected a transformers BERT model (BertModel, BertForMaskedLM, ...) or an "
                     f"xling.pretrain.encoder.EncoderCore (or LoadedEncoder), got {type(model).__name__}")


def blocks(model: nn.Module, lang: int | str = 0) -> list[nn.Module]:
    """The Transformer blocks in the order they run: block ``l`` (1-based) is ``blocks(...)[l - 1]``.

    For the project's encoder, ``lang``'s language layers then the shared layers (a language name
    is accepted with a LoadedEncoder); BERT models have one stack and ignore ``lang``."""
    core = _core(model, lang)
    if core is not None:
        enc, lang = core
        return list(cast(nn.ModuleList, enc.language_layers[lang])) + list(enc.shared_layers)
    bert = _bert(model)
    if bert is None:
        raise _unknown(model)
    return list(bert.encoder.layer)


def hidden_size(model: nn.Module) -> int:
    """D, the width of the hidden states."""
    core = _core(model, 0)
    if core is not None:
        return core[0].dim
    bert = _bert(model)
    if bert is None:
        raise _unknown(model)
    return bert.config.hidden_size


def _embedding_output(model: nn.Module, lang: int | str) -> nn.Module:
    """The module whose output is layer 0 (before the encoder's dropout and padding zeroing)."""
    core = _core(model, lang)
    if core is not None:
        enc, lang = core
        return enc.emb_layer_norm[enc._pos_index(lang)]
    return _bert(model).embeddings


@contextmanager
def shift_at(model: nn.Module, layer: int, delta, lang: int | str = 0) -> Iterator[None]:
    """Within the block, every forward adds ``delta`` ([D]; broadcast over batch and time, padding
    included) to the hidden states of ``layer``: the output of block ``layer`` (1..L), or for
    ``layer == 0`` the embedding output. Later layers, the MLM head and ``hidden_states[layer]``
    see the shifted states; the hook is removed on exit, also on an error.

    With the project's encoder, torch runs a hooked ``TransformerEncoderLayer`` on its plain path
    instead of the fused eval fast path: a zero shift then reproduces the logits to float rounding
    (about 1e-8), not bit for bit (BERT: bit for bit)."""
    stack = blocks(model, lang)
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer <= len(stack):
        raise ValueError(f"shift_at: layer must be an int in 0..{len(stack)} (0 = embedding output), got {layer!r}")
    dim = hidden_size(model)
    delta = _tensor(delta).detach()
    if delta.shape != (dim,):
        raise ValueError(f"shift_at: delta must be a vector of the hidden size [{dim}], got shape {tuple(delta.shape)}")
    if not bool(torch.isfinite(delta).all()):
        raise ValueError("shift_at: delta contains NaN or inf")
    target = stack[layer - 1] if layer > 0 else _embedding_output(model, lang)

    def add(module, args, output):
        if isinstance(output, tuple):  # older transformers' BertLayer: (hidden_states, attentions...)
            return (output[0] + delta.to(output[0]),) + tuple(output[1:])
        return output + delta.to(output)

    # prepend: transformers records hidden_states with forward hooks on the same blocks; running
    # first makes the recorded state the shifted one that the next block reads
    handle = target.register_forward_hook(add, prepend=True)
    try:
        yield
    finally:
        handle.remove()


@contextmanager
def _inference(model: nn.Module) -> Iterator[None]:
    """Eval mode (no dropout) and no autograd, restoring the model's mode afterwards."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        model.train(was_training)


def hidden_states(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                  lang: int | str = 0) -> list[torch.Tensor]:
    """The 1 + L hidden states [B, T, D] of the (unmasked) input, in eval mode without gradients.

    ``attention_mask``: 1 at real tokens, 0 at padding; None means all real (BERT) or the
    encoder's own padding index (project encoder)."""
    core = _core(model, lang)
    with _inference(model):
        if core is not None:
            enc, lang = core
            padding = None if attention_mask is None else ~attention_mask.bool()
            _, states = enc.extract_features(input_ids, lang, padding_mask=padding, return_all_hiddens=True)
            return list(states)
        bert = _bert(model)
        if bert is None:
            raise _unknown(model)
        # the inner BertModel: an MLM model's vocabulary projection is not needed here
        return list(bert(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True).hidden_states)


# ---------------------------------------------------------------------------------------------
# Mean of language and mean difference shift


def token_mask(input_ids: torch.Tensor, attention_mask: torch.Tensor, exclude_ids: Iterable[int] = ()) -> torch.Tensor:
    """Bool [B, T]: the positions a language mean counts (real tokens, less ``exclude_ids``)."""
    mask = _tensor(attention_mask).bool()
    exclude = torch.tensor(sorted(set(int(i) for i in exclude_ids)), dtype=input_ids.dtype, device=input_ids.device)
    if exclude.numel():
        mask = mask & ~torch.isin(input_ids, exclude)
    return mask


class LanguageMeans:
    """Streaming mean of language: per layer, the float64 mean of the hidden states at the masked
    positions of every batch added. Sums and a token count are kept, so batches of any sizes give
    the mean over all their tokens at once."""

    def __init__(self) -> None:
        self._sum: torch.Tensor | None = None  # [L + 1, D], float64
        self.count = 0

    def add(self, states: Sequence[torch.Tensor] | torch.Tensor, mask: torch.Tensor) -> None:
        """``states``: the 1 + L hidden states [B, T, D] of a batch (a list, or one [L + 1, B, T, D]
        tensor); ``mask``: [B, T], true at the tokens to count (see :func:`token_mask`)."""
        states = [_tensor(s) for s in states]
        mask = _tensor(mask).bool()
        if not states:
            raise ValueError("LanguageMeans.add: no hidden states (expected 1 + L of shape [B, T, D])")
        for l, h in enumerate(states):
            if h.ndim != 3 or h.shape[:2] != mask.shape:
                raise ValueError(f"LanguageMeans.add: layer {l} states must be [B, T, D] with [B, T] = mask's "
                                 f"{tuple(mask.shape)}, got {tuple(h.shape)}")
        shape = (len(states), states[0].shape[-1])
        if self._sum is None:
            self._sum = torch.zeros(shape, dtype=torch.float64)
        elif self._sum.shape != shape:
            raise ValueError(f"LanguageMeans.add: earlier batches had [L + 1, D] = {tuple(self._sum.shape)}, "
                             f"this one {shape}")
        for l, h in enumerate(states):
            self._sum[l] += h[mask.to(h.device)].to(torch.float64).sum(dim=0).cpu()
        self.count += int(mask.sum())

    def mean(self) -> torch.Tensor:
        """[L + 1, D] float64: R^l for every layer l."""
        if self._sum is None or self.count == 0:
            raise ValueError("LanguageMeans.mean: no token was added; the mean of language is undefined")
        return self._sum / self.count


def language_means(model: nn.Module, batches: Iterable[tuple[torch.Tensor, torch.Tensor]], lang: int | str = 0,
                   exclude_ids: Iterable[int] = ()) -> torch.Tensor:
    """R^l (MoL) of one language's corpus under ``model``: [L + 1, D] float64.

    ``batches`` yields ``(input_ids, attention_mask)`` [B, T] as the model reads them (specials
    added); every real token counts except the ids in ``exclude_ids`` (e.g. the special tokens,
    which the paper's "all context-dependent representations" keeps)."""
    exclude = list(exclude_ids)
    means = LanguageMeans()
    for input_ids, attention_mask in batches:
        states = hidden_states(model, input_ids, attention_mask, lang)
        means.add(states, token_mask(input_ids, attention_mask, exclude))
    return means.mean()


def mean_difference(means_src, means_tgt) -> torch.Tensor:
    """Mean difference shift D(src -> tgt) = R_tgt - R_src per layer: [L + 1, D] float64."""
    src, tgt = _tensor(means_src), _tensor(means_tgt)
    if src.ndim != 2 or src.shape != tgt.shape:
        raise ValueError(f"mean_difference: both means must be [L + 1, D] of the same shape, "
                         f"got {tuple(src.shape)} and {tuple(tgt.shape)}")
    return tgt.to(torch.float64) - src.to(torch.float64)


# ---------------------------------------------------------------------------------------------
# Unsupervised token translation


def translate_tokens(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor | None, layer: int,
                     alpha: float, shift, lang: int | str = 0, out_lang: int | str | None = None) -> torch.Tensor:
    """Argmax token ids [B, T] at every position when ``alpha * D`` is added at ``layer`` (4.2.1).

    ``shift``: the per-layer MDS [L + 1, D] (row ``layer`` is used) or one vector [D]. Nothing
    is masked in the input. Models: a ``BertForMaskedLM``, or the project's encoder, which reads
    the input with ``lang``'s parts and predicts with ``out_lang``'s output embeddings and
    vocabulary (default ``lang``). Every position is returned (specials, padding): the caller
    picks the ones to score."""
    shift = _tensor(shift)
    if shift.ndim == 2:
        if not 0 <= layer < shift.shape[0]:
            raise ValueError(f"translate_tokens: layer {layer} has no row in the per-layer shift of shape "
                             f"{tuple(shift.shape)}")
        shift = shift[layer]
    elif shift.ndim != 1:
        raise ValueError(f"translate_tokens: shift must be [L + 1, D] or [D], got shape {tuple(shift.shape)}")
    delta = float(alpha) * shift.to(torch.float64)
    core = _core(model, lang)
    if core is None:
        from transformers import BertForMaskedLM

        if not isinstance(model, BertForMaskedLM):
            raise TypeError(f"translate_tokens needs an MLM head: a BertForMaskedLM or an "
                            f"xling.pretrain.encoder.EncoderCore (or LoadedEncoder), got {type(model).__name__}")
    with _inference(model), shift_at(model, layer, delta, lang):
        if core is None:
            logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
        else:
            enc, lang_id = core
            out_core = core if out_lang is None else _core(model, out_lang)
            assert out_core is not None  # the same model as ``core``
            out_id = out_core[1]
            padding = None if attention_mask is None else ~attention_mask.bool()
            features, _ = enc.extract_features(input_ids, lang_id, padding_mask=padding)
            logits = enc.output_layer(features, out_id)
    return logits.argmax(dim=-1)
