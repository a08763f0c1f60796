"""Atomic file output (write to a temp file beside the target, then rename), a job's JSON result,
and the first lines of a large text: what every stage writes and reads the same way."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator

_UMASK = os.umask(0)
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Yield a file handle; on success the file appears at ``path`` in one rename, on error nothing does."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp creates 0600; outputs should be readable like any file
    if "b" in mode:
        encoding = None
    try:
        with os.fdopen(fd, mode, encoding=encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temp path (file or directory name) that is renamed to ``path`` on success.

    For tools that write a file themselves (fairseq, subword-nmt CLIs)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        if tmp.is_dir():
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_dir(path: str | Path) -> Iterator[Path]:
    """Yield a fresh temp directory beside ``path`` that replaces ``path`` (and whatever it held)
    on success; on error it is removed and ``path`` is left as it was."""
    import shutil

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)  # a killed earlier run's leftovers
    tmp.mkdir()
    try:
        yield tmp
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_result(out_json: str | Path, result: dict) -> dict:
    """A job's JSON result, written atomically; returned for the caller's summary."""
    with atomic_write(out_json) as fh:
        json.dump(result, fh, indent=2, sort_keys=True)
        fh.write("\n")
    return result


def first_lines(path: str | Path, n: int) -> list[str]:
    """Up to ``n`` non-empty lines of a text, read lazily: a Wikipedia-size file is not read whole."""
    from xling.errors import InputError

    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                out.append(line.rstrip("\n"))
                if len(out) >= n:
                    break
    if not out:
        raise InputError(path, None, "sentences, one per line", "an empty file")
    return out
