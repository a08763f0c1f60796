"""Progress bars for the long steps (tokenisation, code-switching, feature extraction, fine-tuning),
on stderr, which the workflow scripts send to the job's log file.

On a terminal: tqdm's live bar. In a log file (a cluster job, ``tail -f`` on its log): one plain
line per update, at most every ``LOG_INTERVAL_S`` seconds, with the count, rate and time left,
instead of carriage-return redraws that a log shows as one ever-growing line.
"""

from __future__ import annotations

import os
import sys
from typing import Iterable, TypeVar

T = TypeVar("T")

LOG_INTERVAL_S = float(os.environ.get("XLING_PROGRESS_INTERVAL_S", 30))


class _LineWriter:
    """A file for tqdm that turns each redraw into a line of its own."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> None:
        text = text.replace("\r", "").strip("\n")
        if text.strip():
            self.stream.write(text + "\n")

    def flush(self) -> None:
        self.stream.flush()


def progress(iterable: Iterable[T] | None = None, total: int | None = None, desc: str | None = None,
             unit: str = "it", stream=None, disable: bool = False):
    """A tqdm bar over ``iterable`` (or to ``update`` by hand) for ``stream`` (default stderr);
    ``disable``: no output at all."""
    from tqdm import tqdm

    stream = stream if stream is not None else sys.stderr
    tty = hasattr(stream, "isatty") and stream.isatty()
    if tty:
        return tqdm(iterable, total=total, desc=desc, unit=unit, file=stream, dynamic_ncols=True, disable=disable)
    return tqdm(iterable, total=total, desc=desc, unit=unit, file=_LineWriter(stream), mininterval=LOG_INTERVAL_S,
                maxinterval=LOG_INTERVAL_S, ascii=True, ncols=100, disable=disable)
