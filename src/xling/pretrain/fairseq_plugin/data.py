"""fairseq datasets the multilingual MLM task needs beyond the stock ones."""

from __future__ import annotations

import numpy as np
import torch
from fairseq.data import BaseWrapperDataset, MaskTokensDataset


class LanguageMaskTokensDataset(MaskTokensDataset):
    """BERT masking whose random replacement words follow ``replacement_weights``
    (a distribution over the dictionary), e.g. only the sample's own language."""

    def __init__(self, dataset, vocab, *args, replacement_weights=None, **kwargs):
        super().__init__(dataset, vocab, *args, **kwargs)
        if replacement_weights is not None:
            w = np.asarray(replacement_weights, dtype=np.float64)
            if w.shape != (len(vocab),):
                raise ValueError(f"replacement weights need {len(vocab)} entries, got {w.shape}")
            self.weights = w / w.sum()


class TokenRemapDataset(BaseWrapperDataset):
    """Maps every token through a lookup table (out-of-language tokens to <unk>)."""

    def __init__(self, dataset, remap: np.ndarray):
        super().__init__(dataset)
        self.remap = torch.from_numpy(np.asarray(remap, dtype=np.int64))

    def __getitem__(self, index):
        return self.remap[self.dataset[index].long()]


class LanguageBatchedDataset(BaseWrapperDataset):
    """Wraps a dataset over a concatenation of per-language datasets so that every batch
    holds streams of one language only (the paper samples a batch from one language).

    ``boundaries`` are the cumulative sizes of the concatenated language datasets."""

    def __init__(self, dataset, boundaries):
        super().__init__(dataset)
        self.boundaries = np.asarray(boundaries, dtype=np.int64)

    def language_of(self, indices) -> np.ndarray:
        return np.searchsorted(self.boundaries, np.asarray(indices, dtype=np.int64), side="right")

    def batch_by_size(self, indices, max_tokens=None, max_sentences=None, required_batch_size_multiple=1):
        indices = np.asarray(indices, dtype=np.int64)
        langs = self.language_of(indices)
        batches = []
        for lang in np.unique(langs):
            # keeps the given (shuffled) order within each language
            batches.extend(
                self.dataset.batch_by_size(
                    indices[langs == lang], max_tokens, max_sentences, required_batch_size_multiple
                )
            )
        return batches
