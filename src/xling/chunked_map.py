"""Line-preserving parallel maps over big text files: chunks of lines go to a process pool and
come back in input order, with at most ``2 x workers`` chunks in flight (memory stays bounded,
unlike ``Pool.imap``, which reads its whole input ahead)."""

from __future__ import annotations

import multiprocessing as mp
from collections import deque
from itertools import islice
from typing import Any, Callable, Iterable, Iterator

ChunkFn = Callable[[list], list]

_WORKER_FN: ChunkFn | None = None  # built once per worker process by the factory


def _init_worker(factory: Callable[[Any], ChunkFn], arg: Any) -> None:
    global _WORKER_FN
    _WORKER_FN = factory(arg)


def _run_chunk(chunk: list) -> list:
    assert _WORKER_FN is not None, "the pool's initializer builds it first"
    return _WORKER_FN(chunk)


def chunks(items: Iterable, size: int) -> Iterator[list]:
    items = iter(items)
    while chunk := list(islice(items, size)):
        yield chunk


def map_chunks(items: Iterable, factory: Callable[[Any], ChunkFn], arg: Any, workers: int = 1,
               chunk_size: int = 2000) -> Iterator:
    """``factory(arg)(chunk)`` for consecutive chunks of ``items``, flattened, in input order.
    ``factory`` runs once per process (a tokeniser or a BPE model is built once, not per chunk)."""
    if workers <= 1:
        fn = factory(arg)
        for chunk in chunks(items, chunk_size):
            yield from fn(chunk)
        return
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    with ctx.Pool(workers, initializer=_init_worker, initargs=(factory, arg)) as pool:
        pending: deque = deque()
        for chunk in chunks(items, chunk_size):
            pending.append(pool.apply_async(_run_chunk, (chunk,)))
            if len(pending) >= 2 * workers:
                yield from pending.popleft().get()
        while pending:
            yield from pending.popleft().get()
