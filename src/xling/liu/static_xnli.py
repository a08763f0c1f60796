"""XNLI zero-shot transfer with the study's static vectors (Liu et al. 2020, Figures 2, 4, 6: word2vec
and GloVe beside BERT).

The paper sets the static models beside BERT "with the paper's classifier" without describing it.
We use XNLI's own baseline for cross-lingual word embeddings (Conneau et al. 2018): a BiLSTM with
max pooling over the frozen vectors of a sentence's pieces encodes premise and hypothesis (u, v),
an MLP classifies [u, v, |u - v|, u * v] (InferSent's features), trained on the source language
only. The vectors stay fixed, so every language is read through the space the joint training made:
a language transfers exactly as far as its vectors share that space with English.

- Pieces: each sentence tokenised as its corpus was, then cut by the model's BPE (the vectors are
  vectors of BPE pieces); a piece without a vector reads as a zero vector (``<unk>``).
- Schedule: ``epochs`` passes over the (capped) training set with Adam at ``lr``; the epoch with the
  best source-language dev accuracy is kept, as in every fine-tuning job.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from xling.analysis.vec import read_vec
from xling.finetune.data import NLI_LABELS, read_nli
from xling.io import write_result
from xling.metrics.classification import accuracy

Log = Callable[[str], None]
PAD, UNK = 0, 1


def piece_table(words: Sequence[str], vectors: np.ndarray) -> tuple[dict[str, int], torch.Tensor]:
    """Piece -> row of the embedding matrix, rows 0 (padding) and 1 (unknown) being zero vectors."""
    index = {w: i + 2 for i, w in enumerate(words)}
    table = torch.zeros((len(words) + 2, vectors.shape[1]), dtype=torch.float32)
    table[2:] = torch.as_tensor(np.asarray(vectors, dtype=np.float32))
    return index, table


class BiLSTMMaxNLI(nn.Module):
    """InferSent / XNLI's BiLSTM-max classifier over fixed word vectors."""

    def __init__(self, table: torch.Tensor, hidden: int, n_labels: int = len(NLI_LABELS), dropout: float = 0.1):
        super().__init__()
        self.embed = nn.Embedding.from_pretrained(table, freeze=True, padding_idx=PAD)
        self.lstm = nn.LSTM(table.shape[1], hidden, batch_first=True, bidirectional=True)
        self.mlp = nn.Sequential(nn.Dropout(dropout), nn.Linear(8 * hidden, hidden), nn.Tanh(),
                                 nn.Dropout(dropout), nn.Linear(hidden, n_labels))

    def encode(self, ids: torch.Tensor) -> torch.Tensor:
        """[B, T] piece rows (PAD-padded, at least one piece each) -> [B, 2H], max over real positions."""
        lengths = (ids != PAD).sum(dim=1)
        packed = nn.utils.rnn.pack_padded_sequence(self.embed(ids), lengths.cpu(), batch_first=True,
                                                   enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=ids.shape[1],
                                                  padding_value=float("-inf"))
        return out.max(dim=1).values

    def forward(self, premise: torch.Tensor, hypothesis: torch.Tensor) -> torch.Tensor:
        u, v = self.encode(premise), self.encode(hypothesis)
        return self.mlp(torch.cat([u, v, (u - v).abs(), u * v], dim=-1))


def encode_pairs(pairs: Sequence[tuple[list[str], list[str]]], index: Mapping[str, int], max_len: int
                 ) -> list[tuple[list[int], list[int]]]:
    """Premise and hypothesis pieces as rows, cut to ``max_len``; an empty side reads as one ``<unk>``."""
    def rows(pieces):
        return [index.get(p, UNK) for p in pieces][:max_len] or [UNK]

    return [(rows(p), rows(h)) for p, h in pairs]


def _pad(rows: Sequence[list[int]]) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([r + [PAD] * (width - len(r)) for r in rows], dtype=torch.long)


def predict(model: BiLSTMMaxNLI, items: Sequence[tuple[list[int], list[int]]], batch_size: int,
            device: str) -> list[int]:
    model.eval()
    out = []
    with torch.no_grad():
        for s in range(0, len(items), batch_size):
            chunk = items[s : s + batch_size]
            logits = model(_pad([p for p, _ in chunk]).to(device), _pad([h for _, h in chunk]).to(device))
            out += logits.argmax(-1).tolist()
    return out


def train_nli(model: BiLSTMMaxNLI, train: Sequence[tuple[list[int], list[int]]], labels: Sequence[int],
              dev: Sequence[tuple[list[int], list[int]]], dev_labels: Sequence[int], epochs: int, batch_size: int,
              lr: float, seed: int, device: str, log: Log) -> dict:
    """Adam on the trainable parameters; keeps (and restores) the epoch with the best dev accuracy."""
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr)
    target = torch.tensor(list(labels), dtype=torch.long)
    history, best, best_state = [], None, None
    for epoch in range(1, epochs + 1):
        model.train()
        losses = []
        for batch in torch.randperm(len(train), generator=gen).split(batch_size):
            chunk = [train[i] for i in batch.tolist()]
            logits = model(_pad([p for p, _ in chunk]).to(device), _pad([h for _, h in chunk]).to(device))
            loss = F.cross_entropy(logits, target[batch].to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        dev_acc = accuracy(list(dev_labels), predict(model, dev, batch_size, device))
        history.append({"epoch": epoch, "loss": float(np.mean(losses)), "dev": dev_acc})
        log(f"epoch {epoch}: loss {history[-1]['loss']:.4f}, source dev accuracy {dev_acc:.2f}")
        if best is None or dev_acc > best["dev"]:
            best, best_state = history[-1], copy.deepcopy(model.state_dict())
    if best is None or best_state is None:
        raise ValueError(f"no epoch to keep: epochs {epochs}")
    model.load_state_dict(best_state)
    return {"best_epoch": best["epoch"], "history": history}


def run_static_xnli(vectors: Path, pieces: Callable[[str, list[str]], list[list[str]]], train: Path,
                    dev: Mapping[str, Path], test: Mapping[str, Path], src: str, out_json: Path, meta: dict,
                    hidden: int, epochs: int, batch_size: int, lr: float, max_train_examples: int | None,
                    max_eval_examples: int | None, max_seq_len: int, seed: int = 1, device: str = "cpu",
                    log: Log | None = None) -> dict:
    """``pieces(lang, sentences)``: each raw sentence as the model's BPE pieces (tokenised as the
    corpus was). Trains on ``train`` (the source language), scores every language of ``dev``/``test``."""
    log = log or (lambda _m: None)
    words, vecs = read_vec(Path(vectors))
    index, table = piece_table(words, vecs)
    torch.manual_seed(seed)
    model = BiLSTMMaxNLI(table, hidden).to(device)

    def load(path: Path, lang: str, cap: int | None):
        raw = read_nli(path)[:cap] if cap else read_nli(path)
        cut = pieces(lang, [ex.premise for ex in raw] + [ex.hypothesis for ex in raw])
        items = encode_pairs(list(zip(cut[: len(raw)], cut[len(raw) :])), index, max_seq_len)
        known = sum(r != UNK for p, h in items for r in (*p, *h)) / max(1, sum(len(p) + len(h) for p, h in items))
        return items, [NLI_LABELS.index(ex.label) for ex in raw], known

    train_items, train_labels, _ = load(train, src, max_train_examples)
    dev_src = load(dev[src], src, max_eval_examples)
    run = train_nli(model, train_items, train_labels, dev_src[0], dev_src[1], epochs, batch_size, lr, seed, device, log)
    languages = {}
    for lang in dev:
        scores = {}
        for split, paths in (("dev", dev), ("test", test)):
            items, labels, known = load(paths[lang], lang, max_eval_examples)
            scores[split] = accuracy(labels, predict(model, items, batch_size, device))
            scores[f"{split}_pieces_with_vectors"] = known
        languages[lang] = scores
        log(f"{lang}: dev {scores['dev']:.2f}, test {scores['test']:.2f} "
            f"({100 * scores['test_pieces_with_vectors']:.0f}% of test pieces have a vector)")
    return write_result(out_json, {**meta, "classifier": "BiLSTM-max", "hidden": hidden, "epochs": epochs,
                                   "best_epoch": run["best_epoch"], "history": run["history"],
                                   "examples": {"train": len(train_items)}, "languages": languages})
