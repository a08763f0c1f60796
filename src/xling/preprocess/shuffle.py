"""A seeded shuffle of a text's lines in bounded memory: XLM's ``get-data-wiki.sh`` pipes the whole
corpus through ``shuf`` before it cuts train/valid/test, so a training stream joins random
paragraphs rather than the dump's consecutive ones.

Every line gets a random 64-bit key (PCG64 seeded with ``seed``) and the output is the lines in key
order, an external sort: the lines go to ``B`` key-range buckets on disk, then each bucket is sorted
in memory and appended. The order depends on the seed and the lines only, not on ``B``, so the
memory bound is no part of the result. Memory: one bucket (``SHUFFLE_BUCKET_BYTES`` of text, about
twice that while it is sorted); disk: one more copy of the text (~17 bytes a line more), freed
bucket by bucket; time: linear in the text (one extra write and read) plus a sort of each bucket.
GNU ``shuf`` instead holds the whole input in memory (tens of GB for English Wikipedia).

Independent keys make every order equally likely; two equal keys (chance ~ n^2 / 2^65) are ordered
by the lines' bytes, so the result stays deterministic.
"""

from __future__ import annotations

import contextlib
import math
import tempfile
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

import numpy as np

SHUFFLE_BUCKET_BYTES = 1 << 28  # text per bucket: what one in-memory sort holds (~2x this at its peak)
MAX_BUCKETS = 1024  # open bucket files at once (under the usual 1024-descriptor limit with Snakemake's)
KEY_CHUNK = 8192  # keys drawn per call to the generator
WRITE_BUFFER = 1 << 14
_KEY_STREAM = 0x5348  # separates the shuffle's random stream from other uses of the same seed
_HEX = 16  # a key's width in the bucket files: 16 hex digits and a tab before the line


def shuffle_keys(seed: int) -> Iterator[int]:
    """The endless stream of 64-bit keys of ``seed`` (raw PCG64 output: the same whatever the chunk size)."""
    bitgen = np.random.PCG64(np.random.SeedSequence([int(seed), _KEY_STREAM]))
    while True:
        yield from bitgen.random_raw(KEY_CHUNK).tolist()


def n_buckets(size_hint: int, bucket_bytes: int) -> int:
    return max(1, min(MAX_BUCKETS, math.ceil(size_hint / bucket_bytes)))


def shuffle_lines(lines: Iterable[str], out: BinaryIO, seed: int, size_hint: int, tmp_dir: str | Path,
                  bucket_bytes: int | None = None) -> int:
    """Write ``lines`` (without their newlines) to the binary file ``out`` in a seeded random order,
    one per line; returns how many.

    ``size_hint``: about how many bytes the lines hold (e.g. their files' size), which sets the
    number of buckets (memory), not the order. The buckets are temporary files under ``tmp_dir``."""
    bucket_bytes = bucket_bytes or SHUFFLE_BUCKET_BYTES
    b = n_buckets(size_hint, bucket_bytes)
    step = -(-(1 << 64) // b)  # ceil(2^64 / b): bucket of key k is k // step, in key order
    keys = shuffle_keys(seed)
    n = 0
    with tempfile.TemporaryDirectory(prefix=".shuffle.", dir=tmp_dir) as tmp:
        paths = [Path(tmp) / f"{i}.txt" for i in range(b)]
        with contextlib.ExitStack() as stack:
            buckets = [stack.enter_context(open(p, "wb", buffering=WRITE_BUFFER)) for p in paths]
            for line, key in zip(lines, keys):
                buckets[key // step].write(b"%016x\t%s\n" % (key, line.encode("utf-8")))
                n += 1
        for path in paths:
            with open(path, "rb") as fh:
                keyed = fh.read().split(b"\n")  # only \n ends a line here (bytes.splitlines would cut at \r too)
            path.unlink()  # disk: the shuffled text grows as the buckets go
            keyed.pop()  # the empty piece after the last newline
            keyed.sort()  # fixed-width hex keys first: byte order is key order
            out.writelines(k[_HEX + 1:] + b"\n" for k in keyed)
            del keyed
    return n
