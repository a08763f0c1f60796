"""Merge tokenised shards into train/valid/test: optional length filter and dedup, seeded shuffle
(XLM's ``shuf``), seeded split, caps (Wiki-CC: the CC train split matched to Wikipedia's in tokens).

Streaming in two passes over a temporary file of the kept lines (shuffled on the way in, by an
external sort: ``xling.preprocess.shuffle``); memory holds ~8 bytes per distinct kept line (dedup
digests), the held-out line numbers, one shuffle bucket and nothing else proportional to the text.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

import numpy as np

from xling.errors import InputError
from xling.io import atomic_write
from xling.preprocess.shards import interleave
from xling.preprocess.shuffle import shuffle_lines


@dataclass(frozen=True)
class SplitSettings:
    """The ``preprocess`` settings of the split (config/config.yaml: XLM's get-data-wiki.sh drops
    empty lines only, min_tokens 1, no length bound, no dedup, and shuffles every line before the
    split: ``shuffle``, seeded with ``seed``)."""

    valid_lines: int
    test_lines: int
    min_tokens: int
    max_tokens: int | None
    dedup: bool
    max_train_lines: int | None
    seed: int
    shuffle: bool

    @classmethod
    def from_config(cls, preprocess: Mapping) -> "SplitSettings":
        """From the (validated) config's ``preprocess`` section."""
        return cls(
            valid_lines=int(preprocess["valid_lines"]),
            test_lines=int(preprocess["test_lines"]),
            min_tokens=int(preprocess["min_tokens"]),
            max_tokens=preprocess["max_tokens"],
            dedup=bool(preprocess["dedup"]),
            max_train_lines=preprocess["max_train_lines"],
            seed=int(preprocess["split_seed"]),
            shuffle=bool(preprocess["shuffle"]),
        )


def line_digest(line: str) -> int:
    """64-bit digest of a line (collision chance ~ n^2 / 2^65: negligible below 10^9 lines)."""
    return int.from_bytes(hashlib.blake2b(line.encode("utf-8"), digest_size=8).digest(), "little")


DEDUP_BUFFER = 1 << 20  # digests kept in a Python set before they move to the sorted array


class DigestSet:
    """Set of 64-bit digests at ~8 bytes each: a sorted numpy array plus a small Python set
    buffer (a Python set of ints costs ~100 bytes per entry: 10 GB for 10^8 lines)."""

    def __init__(self, buffer: int | None = None):
        self.buffer_max = buffer or DEDUP_BUFFER
        self.buffer: set[int] = set()
        self.sorted = np.empty(0, dtype=np.uint64)

    def __contains__(self, d: int) -> bool:
        if d in self.buffer:
            return True
        arr = self.sorted
        if arr.size == 0:
            return False
        i = int(np.searchsorted(arr, np.uint64(d)))
        return i < arr.size and int(arr[i]) == d

    def add(self, d: int) -> None:
        self.buffer.add(d)
        if len(self.buffer) >= self.buffer_max:
            new = np.fromiter(self.buffer, dtype=np.uint64, count=len(self.buffer))
            new.sort()
            # both parts are sorted runs: the stable sort (timsort/radix) merges them in ~linear time
            self.sorted = np.sort(np.concatenate([self.sorted, new]), kind="stable")
            self.buffer = set()

    def __len__(self) -> int:
        return len(self.buffer) + int(self.sorted.size)


def filter_lines(lines: Iterable[str], min_tokens: int, max_tokens: int | None, dedup: bool) -> Iterator[str]:
    """Keep lines with min_tokens <= #tokens <= max_tokens (None: no upper bound), first
    occurrence only if dedup."""
    seen = DigestSet()
    for line in lines:
        n = len(line.split())
        if n < min_tokens or (max_tokens is not None and n > max_tokens):
            continue
        if dedup:
            d = line_digest(line)
            if d in seen:
                continue
            seen.add(d)
        yield line


def selection_sample(n_items: int, k: int, rng: random.Random) -> Iterator[bool]:
    """Knuth's selection sampling (Algorithm S): yields n_items flags, exactly min(k, n) True,
    every k-subset equally likely, O(1) memory."""
    needed = min(k, n_items)
    for left in range(n_items, 0, -1):
        take = rng.random() * left < needed
        if take:
            needed -= 1
        yield take


def count_lines(path: str | Path) -> int:
    n = 0
    with open(path, "rb") as fh:
        for _ in fh:
            n += 1
    return n


def count_tokens(path: str | Path, skip: Mapping[int, int] | None = None) -> int:
    """Whitespace tokens of a text file, leaving out the lines whose 0-based numbers are in ``skip``."""
    n = 0
    with open(path, encoding="utf-8", newline="\n") as fh:
        for i, line in enumerate(fh):
            if skip is None or i not in skip:
                n += len(line.split())
    return n


def split_lines(kept: Path, n: int, out_train, out_valid, out_test, s: SplitSettings,
                train_lines: int | None, source: str | Path, train_tokens: int | None = None) -> dict:
    """Second pass: route the ``n`` lines of ``kept`` to the three outputs.

    ``train_tokens``: a random subset of the train candidates holding that many tokens in
    expectation (a uniform sample of round(lines x train_tokens / their tokens) lines)."""
    held = s.valid_lines + s.test_lines
    if n <= held:
        raise InputError(source, None, f"more than {held} lines after filtering and dedup "
                         f"(valid_lines + test_lines)", f"{n} lines")
    rng = random.Random(s.seed)
    drawn = rng.sample(range(n), held)  # first valid_lines drawn -> valid, the rest -> test
    role = {i: 1 for i in drawn[: s.valid_lines]}
    role.update({i: 2 for i in drawn[s.valid_lines:]})
    cap = n - held
    if train_tokens is not None:
        available = count_tokens(kept, skip=role)
        if available > train_tokens:
            cap = round(cap * train_tokens / available)
    for limit in (s.max_train_lines, train_lines):
        if limit is not None:
            cap = min(cap, int(limit))
    train_flags = selection_sample(n - held, cap, random.Random(s.seed + 1))
    counts = {"train": 0, "valid": 0, "test": 0, "train_tokens": 0}
    with atomic_write(out_train) as ft, atomic_write(out_valid) as fv, atomic_write(out_test) as fs, \
            open(kept, encoding="utf-8", newline="\n") as fk:
        for i, line in enumerate(fk):
            r = role.get(i, 0)
            if r == 1:
                fv.write(line)
                counts["valid"] += 1
            elif r == 2:
                fs.write(line)
                counts["test"] += 1
            elif next(train_flags):
                ft.write(line)
                counts["train"] += 1
                counts["train_tokens"] += len(line.split())
    return counts


def merge_and_split(shards: Sequence[str | Path], out_train, out_valid, out_test,
                    settings: SplitSettings, train_lines: int | None = None,
                    train_tokens: int | None = None) -> dict:
    """Tokenised shards (from tokenize_shard, in shard order) -> train/valid/test files.

    With ``settings.shuffle`` the kept lines are put in a seeded random order first (XLM's
    ``shuf``), so every split, train included, is in random order; without it they keep the
    corpus's order (valid and test are still a random choice of lines).
    ``train_lines``: extra cap on the train split's lines. ``train_tokens``: its size in tokens
    (Wiki-CC: "a random subset of Common Crawl of the same size" as the language's Wikipedia
    train split, counted in tokens since CC lines are longer). Returns counts, including ``kept``
    lines and ``train_tokens``."""
    s = settings
    out_dir = Path(out_train).parent
    out_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".kept.", suffix=".tmp", dir=out_dir)
    try:
        n = 0
        kept = filter_lines(interleave(shards), s.min_tokens, s.max_tokens, s.dedup)
        if s.shuffle:
            with os.fdopen(fd, "wb") as fk:
                size = sum(os.path.getsize(p) for p in shards)  # >= the kept text: sets the buckets
                n = shuffle_lines(kept, fk, s.seed, size, tmp_dir=out_dir)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fk:
                for line in kept:
                    fk.write(line + "\n")
                    n += 1
        counts = split_lines(Path(tmp), n, out_train, out_valid, out_test, s, train_lines, shards[0],
                             train_tokens=train_tokens)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    counts["kept"] = n
    return counts


def sample_lines(src: str | Path, out: str | Path, k: int, seed: int) -> int:
    """Seeded uniform sample of k lines of ``src`` (all if fewer), in file order."""
    n = count_lines(src)
    flags = selection_sample(n, k, random.Random(seed))
    written = 0
    with open(src, encoding="utf-8", newline="\n") as fi, atomic_write(out) as fo:
        for line in fi:
            if next(flags):
                fo.write(line)
                written += 1
    return written
