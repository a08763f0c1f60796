"""Sentence representations for Section 5: every layer's hidden states, mean-pooled over the
sentence's subwords with the special tokens (<s>, </s>) and padding left out (paper 5.1.3, 5.2)."""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from xling.model.encoder import Encoder
from xling.model.text import WordEncoder, WordsToSubwords
from xling.progress import progress


@torch.no_grad()
def mean_pooled_layers(
    encoder: Encoder,
    lang: str,
    sentences: list[str],
    tokenize_lines: Callable[[list[str]], list[list[str]]],
    words_to_subwords: WordsToSubwords,
    max_seq_len: int = 256,
    batch_size: int = 64,
    device: str = "cpu",
    return_lengths: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """``[1 + num_layers, len(sentences), dim]`` float32: row i of layer l is the mean of sentence
    i's subword states at layer l (L0 = embedding output). ``tokenize_lines`` turns raw sentences
    into words as the pretraining corpus was tokenised (xling.model.text); a sentence longer than
    ``max_seq_len`` is cut, one that yields no subword raises (its mean is undefined).
    ``return_lengths``: also the number of subwords each mean is over (length-controlled CKA)."""
    enc = WordEncoder(encoder.dictionary, words_to_subwords, max_seq_len)
    ids = [enc.encode_words(words).ids for words in tokenize_lines(list(sentences))]
    for i, seq in enumerate(ids):
        if len(seq) < 3:
            raise ValueError(f"sentence {i} ({sentences[i][:60]!r}) has no subword to pool")
    pad = encoder.dictionary.pad()
    encoder.train(False)
    out: np.ndarray | None = None
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # similar lengths: less padding
    for s in progress(range(0, len(order), batch_size), desc=f"encode {lang}", unit="batch"):
        idx = order[s : s + batch_size]
        width = max(len(ids[i]) for i in idx)
        tokens = torch.full((len(idx), width), pad, dtype=torch.long)
        keep = torch.zeros((len(idx), width), dtype=torch.bool)
        for r, i in enumerate(idx):
            tokens[r, : len(ids[i])] = torch.tensor(ids[i])
            keep[r, 1 : len(ids[i]) - 1] = True  # not <s> (first), not </s> (last), not padding
        tokens, keep = tokens.to(device), keep.to(device)
        states = encoder.encode(tokens, lang, padding_mask=tokens.eq(pad))
        w = keep.unsqueeze(-1).to(states[0].dtype)
        pooled = torch.stack([(h * w).sum(1) / w.sum(1) for h in states])  # [L+1, B, D]
        if out is None:
            out = np.empty((len(states), len(ids), pooled.shape[-1]), dtype=np.float32)
        out[:, idx] = pooled.float().cpu().numpy()
    if out is None:
        raise ValueError("no sentences to encode")
    if return_lengths:
        return out, np.array([len(seq) - 2 for seq in ids], dtype=np.int64)
    return out
