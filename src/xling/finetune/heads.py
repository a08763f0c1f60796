"""Task-specific layers of paper 3.2 on top of the encoder's last layer."""

from __future__ import annotations

import torch
from torch import nn


class SentenceClassifier(nn.Module):
    """XNLI: linear map of the first token's representation to the label logits."""

    def __init__(self, dim: int, num_labels: int, dropout: float = 0.1):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.proj = nn.Linear(dim, num_labels)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:  # [B, T, D] -> [B, C]
        return self.proj(self.dropout(hidden[:, 0]))


def gather_words(hidden: torch.Tensor, first: torch.Tensor) -> torch.Tensor:
    """Representations [B, W, D] of each word's first subword; ``first`` [B, W] positions (pad 0)."""
    return hidden.gather(1, first.unsqueeze(-1).expand(-1, -1, hidden.size(-1)))


class Tagger(nn.Module):
    """NER: linear map of each word's first-subword representation to BIO tag logits."""

    def __init__(self, dim: int, num_tags: int, dropout: float = 0.1):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.proj = nn.Linear(dim, num_tags)

    def forward(self, hidden: torch.Tensor, first: torch.Tensor) -> torch.Tensor:  # -> [B, W, K]
        return self.proj(self.dropout(gather_words(hidden, first)))


class _MLP(nn.Sequential):
    def __init__(self, dim_in: int, dim_out: int, dropout: float):
        super().__init__(nn.Linear(dim_in, dim_out), nn.LeakyReLU(0.1), nn.Dropout(dropout))


class BiaffineParser(nn.Module):
    """Dozat & Manning (2017) graph-based parser over first-subword representations.

    Node 0 is ROOT, represented by the <s> token. Arc scores: s[d, h] = dep_d^T U head_h + u^T head_h;
    label scores for an arc (d, h): bilinear(dep_d, head_h) + W [dep_d; head_h] + b."""

    def __init__(self, dim: int, num_labels: int, arc_mlp: int = 512, label_mlp: int = 128, dropout: float = 0.33):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.arc_dep = _MLP(dim, arc_mlp, dropout)
        self.arc_head = _MLP(dim, arc_mlp, dropout)
        self.label_dep = _MLP(dim, label_mlp, dropout)
        self.label_head = _MLP(dim, label_mlp, dropout)
        self.arc_U = nn.Parameter(torch.zeros(arc_mlp, arc_mlp))
        self.arc_u = nn.Parameter(torch.zeros(arc_mlp))
        self.label_bilinear = nn.Bilinear(label_mlp, label_mlp, num_labels)
        self.label_linear = nn.Linear(2 * label_mlp, num_labels)

    def nodes(self, hidden: torch.Tensor, first: torch.Tensor) -> torch.Tensor:
        """[B, 1+W, D]: ROOT (<s>, position 0) then the words."""
        root = torch.zeros_like(first[:, :1])
        return self.dropout(gather_words(hidden, torch.cat([root, first], dim=1)))

    def arc_scores(self, nodes: torch.Tensor) -> torch.Tensor:  # [B, N, N] indexed [dep, head]
        dep, head = self.arc_dep(nodes), self.arc_head(nodes)
        return torch.einsum("bdi,ij,bhj->bdh", dep, self.arc_U, head) + (head @ self.arc_u).unsqueeze(1)

    def label_scores(self, nodes: torch.Tensor, heads: torch.Tensor) -> torch.Tensor:
        """[B, N, L] label logits of each node's arc to ``heads`` [B, N] (entries for node 0 unused)."""
        dep = self.label_dep(nodes)
        head_all = self.label_head(nodes)
        head = head_all.gather(1, heads.clamp(min=0).unsqueeze(-1).expand(-1, -1, head_all.size(-1)))
        return self._bilinear(dep, head) + self.label_linear(torch.cat([dep, head], -1))

    def _bilinear(self, dep: torch.Tensor, head: torch.Tensor) -> torch.Tensor:
        """``self.label_bilinear(dep, head)`` as two matrix products: nn.Bilinear's backward
        (aten::_trilinear) took 1.4 s per step on CPU for the paper's 128-d, 37-label head."""
        w = self.label_bilinear.weight  # [L, i, j]
        labels, i, j = w.shape
        proj = (dep @ w.permute(1, 0, 2).reshape(i, labels * j)).unflatten(-1, (labels, j))  # [..., L, j]
        return (proj @ head.unsqueeze(-1)).squeeze(-1) + self.label_bilinear.bias
