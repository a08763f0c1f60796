"""fairseq datasets the multilingual MLM task needs beyond the stock ones."""

from __future__ import annotations

import numpy as np
import torch
from fairseq.data import BaseWrapperDataset, MaskTokensDataset

from xling.pretrain.batches import add_host_fields


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


class HostFieldsDataset(BaseWrapperDataset):
    """Collates as the wrapped dataset does, then adds what the step needs known on the host
    (:mod:`xling.pretrain.batches`): the predicted positions as an index, the batch language,
    whether it holds padding. Runs in the data loader's workers."""

    def __init__(self, dataset, pad: int, mask_prob: float):
        super().__init__(dataset)
        self.pad, self.mask_prob = pad, float(mask_prob)

    def collater(self, samples):
        batch = self.dataset.collater(samples)
        return add_host_fields(batch, self.pad, self.mask_prob) if batch else batch


class SlicedDataset(BaseWrapperDataset):
    """Every item cut into consecutive pieces of at most ``width`` tokens, none dropped: Liu et
    al.'s short-window models, sentences "sliced into smaller segments" with the same total tokens.
    A piece never spans two items, so the last piece of a sentence may be shorter."""

    def __init__(self, dataset, sizes, width: int):
        super().__init__(dataset)
        if width < 1:
            raise ValueError(f"a slice needs at least one token, got width {width}")
        sizes = np.asarray(sizes, dtype=np.int64)
        counts = np.maximum(1, -(-sizes // width))  # ceil; an empty item stays one empty piece
        self._item = np.repeat(np.arange(len(sizes), dtype=np.int64), counts)
        first = np.repeat(np.cumsum(counts) - counts, counts)  # index of each item's first piece
        self._start = (np.arange(len(self._item), dtype=np.int64) - first) * width
        self._sizes = np.minimum(width, sizes[self._item] - self._start)

    def __getitem__(self, index):
        start = int(self._start[index])
        return self.dataset[int(self._item[index])][start : start + int(self._sizes[index])]

    def __len__(self):
        return len(self._item)

    @property
    def sizes(self):
        return self._sizes

    def size(self, index):
        return int(self._sizes[index])

    def num_tokens(self, index):
        return int(self._sizes[index])

    def num_tokens_vec(self, indices):
        return self._sizes[indices]

    def ordered_indices(self):
        return np.arange(len(self), dtype=np.int64)


class TokenRemapDataset(BaseWrapperDataset):
    """Maps every token through a lookup table (out-of-language tokens to <unk>)."""

    def __init__(self, dataset, remap: np.ndarray):
        super().__init__(dataset)
        self.remap = torch.from_numpy(np.asarray(remap, dtype=np.int64))

    def __getitem__(self, index):
        return self.remap[self.dataset[index].long()]


class SizeSortedDataset(BaseWrapperDataset):
    """Indices ordered by sample size, ties in a fixed shuffled order: fairseq's ``SortDataset``
    with the sizes read when the order is asked for, not when the dataset is built. A
    ``ResamplingDataset`` below draws other samples each epoch; sorted by the first epoch's
    sizes, later epochs' batches mixed every length and padded each to its longest sample (the
    testbed's one-sentence samples: half the updates per second from the second epoch on,
    docs/benchmarks.md)."""

    def __init__(self, dataset, shuffle: np.ndarray):
        super().__init__(dataset)
        if len(shuffle) != len(dataset):
            raise ValueError(f"a tie-break order of {len(shuffle)} entries for {len(dataset)} samples")
        self.shuffle = np.asarray(shuffle)

    def ordered_indices(self):
        return np.lexsort([self.shuffle, self.dataset.sizes])


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
