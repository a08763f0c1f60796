"""Sharded, streaming tokenisation.

``split_shards`` deals lines round-robin into a fixed number of shards (fixed from config, so the
Snakemake DAG is static), ``tokenize_shard`` writes exactly one output line per input line (empty
when the line tokenises to nothing), so ``interleave`` over the tokenised shards gives the lines
back in corpus order: sharded and unsharded runs produce the same corpus.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator, Sequence

from xling.chunked_map import map_chunks
from xling.errors import InputError
from xling.io import atomic_write
from xling.preprocess.extract import open_bytes, read_utf8_lines
from xling.preprocess.tokenize import TokenizeSettings, line_tokenizer
from xling.progress import progress


def split_shards(src: str | Path, outs: Sequence[str | Path]) -> list[int]:
    """Line i of ``src`` goes to ``outs[i % len(outs)]``. Returns the line count per shard."""
    if not outs:
        raise ValueError("split_shards needs at least one output")
    counts = [0] * len(outs)
    with contextlib.ExitStack() as stack:
        fhs = [stack.enter_context(atomic_write(o)) for o in outs]
        with open_bytes(src) as fh:
            n = len(fhs)
            for i, line in enumerate(read_utf8_lines(src, fh)):
                line = line.rstrip("\r\n")
                fhs[i % n].write(line + "\n")
                counts[i % n] += 1
    return counts


def interleave(paths: Sequence[str | Path]) -> Iterator[str]:
    """Inverse of split_shards: lines (without newline) in the original order."""
    with contextlib.ExitStack() as stack:
        fhs = [stack.enter_context(open(p, encoding="utf-8", newline="\n")) for p in paths]
        line_no = 0
        while True:
            for k, fh in enumerate(fhs):
                line = fh.readline()
                if not line:
                    # round-robin: once shard k ends, every later shard must end in this round
                    # and every earlier one must end in the next
                    for j, other in enumerate(fhs):
                        if j > k and other.readline():
                            raise InputError(paths[j], line_no + 1, f"no more lines than shard {paths[k]}")
                        if j < k and other.readline():
                            raise InputError(paths[j], line_no + 2, f"at most one line more than {paths[k]}")
                    return
                yield line.rstrip("\n")
            line_no += 1


# each Stanford batch starts a JVM and loads the CRF model (~10 s): give it large batches
STANFORD_CHUNK_LINES = 200_000

def _batch_tokenizer(settings: TokenizeSettings):
    return line_tokenizer(settings).batch


def tokenize_lines(lines: Iterator[str], settings: TokenizeSettings, threads: int = 1,
                   chunk_lines: int = 2000) -> Iterator[str]:
    """Tokenised lines in input order; with threads > 1 a process pool works on chunks
    (xling.chunked_map: at most 2 * threads chunks in flight)."""
    return map_chunks(lines, _batch_tokenizer, settings, threads, chunk_lines)


def tokenize_shard(shard: str | Path, out: str | Path, settings: TokenizeSettings,
                   threads: int = 1, chunk_lines: int = 2000) -> int:
    """Tokenise a shard; output line i is input line i tokenised. Returns lines written."""
    if settings.segmenter == "stanford":
        chunk_lines = max(chunk_lines, STANFORD_CHUNK_LINES)
    n = 0
    with open_bytes(shard) as fh, atomic_write(out) as fo:
        lines = (line.rstrip("\r\n") for line in read_utf8_lines(shard, fh))
        for tok in progress(tokenize_lines(lines, settings, threads, chunk_lines), desc=f"tokenise {Path(shard).name}",
                            unit="line"):
            fo.write(tok + "\n")
            n += 1
    return n
