"""What fine-tuning and Section 5 need from a pretrained encoder, and the freezing of
language-specific parts.

``xling.model.checkpoint.LoadedEncoder`` (the pipeline's models) and
``xling.model.huggingface.TransformersEncoder`` (a ``transformers`` directory) satisfy this
protocol; nothing downstream looks inside it, so any encoder with this interface (the tests use a
tiny Transformer) is read and fine-tuned the same way.
"""

from __future__ import annotations

from typing import Iterable, Protocol, runtime_checkable

import torch


class Vocabulary(Protocol):
    """An encoder's token ids: ``xling.pretrain.dictionary.TokenDictionary`` (a fairseq
    dictionary read without fairseq), fairseq's ``Dictionary``, m-BERT's
    ``xling.model.huggingface.TokenizerDictionary``."""

    def index(self, symbol: str, /) -> int: ...

    def __getitem__(self, i: int, /) -> str: ...

    def __len__(self) -> int: ...

    def bos(self) -> int: ...

    def eos(self) -> int: ...

    def pad(self) -> int: ...

    def unk(self) -> int: ...


@runtime_checkable
class Encoder(Protocol):
    languages: list[str]
    dim: int

    @property
    def dictionary(self) -> Vocabulary: ...

    def encode(self, tokens: torch.Tensor, lang: str, padding_mask: torch.Tensor | None = None) -> list[torch.Tensor]:
        """1 + num_layers hidden states [B, T, dim]; uses ``lang``'s own language-specific parameters."""

    def shared_parameters(self) -> Iterable[torch.nn.Parameter]: ...

    def language_specific_parameters(self, lang: str) -> Iterable[torch.nn.Parameter]: ...

    # torch.nn.Module methods used to move / switch dropout
    def to(self, device): ...

    def train(self, mode: bool = True): ...


def freeze_language_specific(encoder: Encoder) -> list[torch.nn.Parameter]:
    """Freeze every language's specific parameters (paper 3.2); return the shared ones to train.

    A parameter listed as both shared and language-specific is treated as language-specific."""
    frozen = set()
    for lang in encoder.languages:
        for p in encoder.language_specific_parameters(lang):
            p.requires_grad_(False)
            frozen.add(id(p))
    trainable, seen = [], set()
    for p in encoder.shared_parameters():
        if id(p) in frozen or id(p) in seen:
            continue
        seen.add(id(p))
        p.requires_grad_(True)
        trainable.append(p)
    return trainable


def max_positions(encoder) -> int | None:
    """Positions the encoder can embed, when it says (LoadedEncoder wraps a fairseq encoder)."""
    for obj in (encoder, getattr(encoder, "encoder", None)):
        mp = getattr(obj, "max_positions", None)
        if callable(mp):
            mp = mp()
        if isinstance(mp, int):
            return mp
    return None
