"""The three zero-shot tasks as adapters that turn task files into batches, losses, predictions and
the paper's score. The training loop (xling.finetune.loop) is the same for all three."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from xling.finetune.data import NLI_LABELS, read_bio, read_nli, read_trees
from xling.finetune.heads import BiaffineParser, SentenceClassifier, Tagger
from xling.finetune.job import Hyperparameters
from xling.finetune.mst import decode_mst
from xling.metrics.classification import accuracy
from xling.metrics.ner import span_f1
from xling.metrics.parsing import attachment_scores
from xling.model.text import WordEncoder

IGNORE = -100
# Dropout of the task heads: BERT's 0.1 before a linear layer; Dozat & Manning's 0.33 in the parser's MLPs.
HEAD_DROPOUT = 0.1
PARSER_DROPOUT = 0.33


@dataclass
class Item:
    ids: list[int]
    first: list[int] = field(default_factory=list)
    label: int = IGNORE  # NLI
    targets: list[int] = field(default_factory=list)  # NER tag ids / parsing label ids (kept words)
    heads: list[int] = field(default_factory=list)  # parsing gold heads (kept words)
    gold: object = None  # what the metric compares against (all words)


def _pad(rows: list[list[int]], value: int, width: int = 0) -> torch.Tensor:
    width = max(width, max((len(r) for r in rows), default=0), 1)
    return torch.tensor([r + [value] * (width - len(r)) for r in rows], dtype=torch.long)


class TaskAdapter:
    name: str
    metric: str
    suffix: str

    def __init__(self, hp: Hyperparameters):
        self.hp = hp
        self.labels: list[str] = []

    # -- data
    def read(self, path: Path):
        raise NotImplementedError

    def fit_labels(self, train_raw) -> None:
        raise NotImplementedError

    def tensorize(self, raw, enc: WordEncoder, tokenize_lines: Callable[[list[str]], list[list[str]]]
                  ) -> tuple[list[Item], int]:
        """Items and the number of truncated sequences; ``tokenize_lines`` tokenises raw sentences."""
        raise NotImplementedError

    def batch(self, items: list[Item], pad: int, device, width: int = 0) -> dict:
        """The tensors of a batch. ``width``: pad tokens, and a word-level task's words, to at
        least this many (a compiled step sees a bounded set of shapes); padding changes no loss
        and no prediction."""
        b = {"tokens": _pad([it.ids for it in items], pad, width).to(device)}
        if any(it.first for it in items):  # word-level tasks
            b["first"] = _pad([it.first for it in items], 0, width).to(device)
        return b

    # -- model
    def make_head(self, dim: int) -> torch.nn.Module:
        raise NotImplementedError

    def loss(self, head, hidden: torch.Tensor, batch: dict) -> torch.Tensor:
        """The mean loss of a batch from its tensors alone (a compiled step traces it)."""
        raise NotImplementedError

    def predict(self, head, hidden: torch.Tensor, batch: dict, items: list[Item]) -> list:
        raise NotImplementedError

    def score(self, items: list[Item], predictions: list) -> dict:
        raise NotImplementedError


class NliTask(TaskAdapter):
    name, metric, suffix = "xnli", "accuracy", "tsv"

    def read(self, path):
        return read_nli(path)

    def fit_labels(self, train_raw):
        self.labels = list(NLI_LABELS)

    def tensorize(self, raw, enc, tokenize_lines):
        items, cut = [], 0
        toks = tokenize_lines([ex.premise for ex in raw] + [ex.hypothesis for ex in raw])
        for k, ex in enumerate(raw):
            e = enc.encode_pair(toks[k], toks[len(raw) + k])
            cut += e.truncated
            lab = self.labels.index(ex.label)
            items.append(Item(e.ids, label=lab, gold=lab))
        return items, cut

    def make_head(self, dim):
        return SentenceClassifier(dim, len(self.labels), HEAD_DROPOUT)

    def batch(self, items, pad, device, width=0):
        b = super().batch(items, pad, device, width)
        b["labels"] = torch.tensor([it.label for it in items], dtype=torch.long).to(device)
        return b

    def loss(self, head, hidden, batch):
        return F.cross_entropy(head(hidden), batch["labels"])

    def predict(self, head, hidden, batch, items):
        return head(hidden).argmax(-1).tolist()

    def score(self, items, predictions):
        return {"accuracy": accuracy([it.gold for it in items], predictions)}


class NerTask(TaskAdapter):
    name, metric, suffix = "ner", "f1", "bio"

    def read(self, path):
        return read_bio(path)

    def fit_labels(self, train_raw):
        tags = sorted({t for s in train_raw for t in s.tags} - {"O"})
        self.labels = ["O", *tags]

    def tensorize(self, raw, enc, tokenize_lines):
        items, cut = [], 0
        index = {t: i for i, t in enumerate(self.labels)}
        for s in raw:
            e = enc.encode_words(s.words)
            cut += e.truncated
            # A tag unseen in English training cannot be predicted; it is still scored (gold).
            targets = [index.get(t, IGNORE) for t in s.tags[: len(e.first)]]
            items.append(Item(e.ids, e.first, targets=targets, gold=s.tags))
        return items, cut

    def batch(self, items, pad, device, width=0):
        b = super().batch(items, pad, device, width)
        b["targets"] = _pad([it.targets for it in items], IGNORE, b["first"].size(1)).to(device)
        return b

    def make_head(self, dim):
        return Tagger(dim, len(self.labels), HEAD_DROPOUT)

    def loss(self, head, hidden, batch):
        logits = head(hidden, batch["first"])
        return F.cross_entropy(logits.flatten(0, 1), batch["targets"].flatten(), ignore_index=IGNORE)

    def predict(self, head, hidden, batch, items):
        pred = head(hidden, batch["first"]).argmax(-1).tolist()
        # Words cut by max_seq_len are predicted O.
        return [[self.labels[k] for k in p[: len(it.first)]] + ["O"] * (len(it.gold) - len(it.first))
                for p, it in zip(pred, items)]

    def score(self, items, predictions):
        return {"f1": span_f1([it.gold for it in items], predictions)}


class ParsingTask(TaskAdapter):
    name, metric, suffix = "parsing", "las", "conllu"

    def read(self, path):
        return read_trees(path)

    def fit_labels(self, train_raw):
        counts = Counter(r for t in train_raw for r in t.deprels)
        self.labels = sorted(counts)
        self.fallback_label = counts.most_common(1)[0][0]

    def tensorize(self, raw, enc, tokenize_lines):
        items, cut = [], 0
        index = {t: i for i, t in enumerate(self.labels)}
        for t in raw:
            e = enc.encode_words(t.words)
            cut += e.truncated
            k = len(e.first)
            # Words whose gold head was cut away are not trained on.
            heads = [h if h <= k else IGNORE for h in t.heads[:k]]
            targets = [index.get(r, IGNORE) if h != IGNORE else IGNORE for r, h in zip(t.deprels[:k], heads)]
            items.append(Item(e.ids, e.first, targets=targets, heads=heads, gold=list(zip(t.heads, t.deprels))))
        return items, cut

    def batch(self, items, pad, device, width=0):
        b = super().batch(items, pad, device, width)
        # Node 0 (ROOT) has no head: IGNORE in position 0.
        nodes = 1 + b["first"].size(1)
        b["heads"] = _pad([[IGNORE, *it.heads] for it in items], IGNORE, nodes).to(device)
        b["targets"] = _pad([[IGNORE, *it.targets] for it in items], IGNORE, nodes).to(device)
        n_nodes = torch.tensor([1 + len(it.first) for it in items])
        b["node_mask"] = (torch.arange(nodes).unsqueeze(0) < n_nodes.unsqueeze(1)).to(device)
        return b

    def make_head(self, dim):
        arc_mlp, label_mlp = self.hp.arc_mlp, self.hp.label_mlp
        if arc_mlp is None or label_mlp is None:
            raise ValueError(f"a parsing cell needs arc_mlp and label_mlp (finetune.parsing's): {self.hp.tracked()}")
        return BiaffineParser(dim, len(self.labels), int(arc_mlp), int(label_mlp), PARSER_DROPOUT)

    def _masked_arcs(self, head, nodes, batch):
        arcs = head.arc_scores(nodes)
        width = arcs.size(1)
        allowed = batch["node_mask"].unsqueeze(1) & ~torch.eye(width, dtype=torch.bool, device=arcs.device)
        # A large finite penalty, not -inf: rows with no allowed arc (padding) must not give NaN gradients.
        return arcs.masked_fill(~allowed, -1e9)

    def loss(self, head, hidden, batch):
        nodes = head.nodes(hidden, batch["first"])
        arcs = self._masked_arcs(head, nodes, batch)
        gold = batch["heads"]
        arc_loss = F.cross_entropy(arcs.flatten(0, 1), gold.flatten(), ignore_index=IGNORE)
        labels = head.label_scores(nodes, gold)
        label_loss = F.cross_entropy(labels.flatten(0, 1), batch["targets"].flatten(), ignore_index=IGNORE)
        return arc_loss + label_loss

    def predict(self, head, hidden, batch, items):
        nodes = head.nodes(hidden, batch["first"])
        arcs = self._masked_arcs(head, nodes, batch).log_softmax(-1).cpu().numpy()
        pred_heads = []
        for b, it in enumerate(items):
            n = 1 + len(it.first)
            pred_heads.append(decode_mst(arcs[b, :n, :n]) if n > 1 else np.array([-1]))
        width = nodes.size(1)
        heads_t = torch.tensor(
            [list(h) + [0] * (width - len(h)) for h in pred_heads], dtype=torch.long, device=nodes.device
        )
        label_ids = head.label_scores(nodes, heads_t).argmax(-1).tolist()
        out = []
        for b, it in enumerate(items):
            k = len(it.first)
            pred = [(int(pred_heads[b][d]), self.labels[label_ids[b][d]]) for d in range(1, k + 1)]
            # Words cut by max_seq_len: attached to the predicted root word, most frequent label.
            root_word = next((d for d, (h, _) in enumerate(pred, 1) if h == 0), 0)
            pred += [(root_word, self.fallback_label)] * (len(it.gold) - k)
            out.append(pred)
        return out

    def score(self, items, predictions):
        s = attachment_scores([it.gold for it in items], predictions)
        return {"las": s.las, "uas": s.uas}


TASKS = {"xnli": NliTask, "ner": NerTask, "parsing": ParsingTask}
