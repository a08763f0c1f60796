"""Fetch one URL to a file: resumable (HTTP Range), retried, checksummed, atomic, mirror-aware.

The partial download lives in ``<dest>.part`` so an interrupted job resumes where it stopped; the
file appears at ``dest`` only after the whole body arrived and (when pinned) its sha256 matched.
``<dest>.sha256`` records the digest seen, in ``sha256sum`` format, so that a ``sha256: null`` in
the config can be pinned later.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import shutil
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Callable

from xling.io import atomic_write

CHUNK = 1 << 20
USER_AGENT = "xling-download/0.1 (+https://github.com/; reproduction of Wu et al. 2020)"
# Client errors worth retrying: the server asks us to come back later.
_RETRY_4XX = {408, 425, 429}


class DownloadError(RuntimeError):
    """A download failed for good (after retries, or with a non-retryable error)."""


class _Retryable(Exception):
    """Internal: a transient failure; the caller sleeps and tries again (resuming)."""


def default_backoff(attempt: int) -> float:
    """Seconds to wait before retry ``attempt`` (1-based): exponential, capped at one minute."""
    return float(min(60, 2 ** (attempt - 1)))


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def mirror_path(url: str, mirror: Path) -> Path:
    """Where ``url`` lives in a mirror laid out as ``<host>/<path>`` (query string dropped)."""
    parts = urllib.parse.urlsplit(url)
    rel = urllib.parse.unquote(parts.path).lstrip("/")
    if not parts.netloc or not rel or ".." in Path(rel).parts:
        raise DownloadError(f"cannot map {url!r} into a mirror: need <scheme>://<host>/<path>")
    return Path(mirror) / parts.netloc / rel


def url_basename(url: str) -> str:
    """File name a URL is stored under in ``R/downloads/<resource_id>/`` (last path component,
    query string dropped: ``.../panx_dataset.tar?dl=1`` -> ``panx_dataset.tar``)."""
    name = urllib.parse.unquote(urllib.parse.urlsplit(url).path).rstrip("/").rsplit("/", 1)[-1]
    if not name or name in (".", ".."):
        raise DownloadError(f"{url!r} has no file name in its path")
    return name


def _progress(total: int | None, initial: int, name: str):
    """A tqdm bar on interactive terminals; None (no output) in batch jobs and tests."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="B", unit_scale=True, desc=name, leave=False)


def _copy_local(src: Path, part: Path, what: str) -> None:
    if not src.is_file():
        raise DownloadError(f"{what}: file not found: {src}")
    shutil.copyfile(src, part)


def _http_attempt(url: str, part: Path, timeout: float) -> None:
    """One HTTP request that appends to (or restarts) ``part``; raises _Retryable on transient errors."""
    offset = part.stat().st_size if part.exists() else 0
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    if offset:
        req.add_header("Range", f"bytes={offset}-")
    try:
        resp = urllib.request.urlopen(req, timeout=timeout)
    except urllib.error.HTTPError as e:
        if e.code == 416 and offset:
            # Our offset is at/after the end: either the part is complete or the file changed.
            m = re.match(r"bytes \*/(\d+)", e.headers.get("Content-Range", "") or "")
            if m and int(m.group(1)) == offset:
                return
            part.unlink()
            raise _Retryable(f"HTTP 416 at offset {offset}; restarting from 0") from e
        if e.code >= 500 or e.code in _RETRY_4XX:
            raise _Retryable(f"HTTP {e.code} {e.reason}") from e
        raise DownloadError(f"{url}: HTTP {e.code} {e.reason}") from e
    except (urllib.error.URLError, socket.timeout, ConnectionError, http.client.HTTPException) as e:
        raise _Retryable(f"{type(e).__name__}: {e}") from e

    with resp:
        status = resp.status
        if status == 206:
            m = re.match(r"bytes (\d+)-(\d+)/(\d+|\*)", resp.headers.get("Content-Range", ""))
            if not m or int(m.group(1)) != offset:
                # A range we did not ask for: throw the part away rather than splice wrong bytes.
                part.unlink(missing_ok=True)
                raise _Retryable(f"unexpected Content-Range {resp.headers.get('Content-Range')!r}")
            mode = "ab"
            total = int(m.group(3)) if m.group(3) != "*" else None
        else:
            # 200: the server ignored Range (or we asked for none): start over.
            offset = 0
            mode = "wb"
            length = resp.headers.get("Content-Length")
            total = int(length) if length is not None else None
        expected = None if total is None else total - offset
        got = 0
        bar = _progress(total, offset, part.name[: -len(".part")])
        try:
            with open(part, mode) as out:
                while True:
                    try:
                        block = resp.read(CHUNK)
                    except (socket.timeout, ConnectionError, http.client.HTTPException, OSError) as e:
                        raise _Retryable(f"connection lost after {offset + got} bytes: {e}") from e
                    if not block:
                        break
                    out.write(block)
                    got += len(block)
                    if bar is not None:
                        bar.update(len(block))
        finally:
            if bar is not None:
                bar.close()
        if expected is not None and got < expected:
            raise _Retryable(f"connection closed after {offset + got} of {total} bytes")


def fetch(
    url: str,
    dest: str | Path,
    sha256: str | None = None,
    mirror: str | Path | None = None,
    retries: int = 5,
    timeout: float = 60,
    backoff: Callable[[int], float] = default_backoff,
) -> str:
    """Download ``url`` to ``dest`` and return its sha256 hex digest.

    ``mirror``: directory laid out as ``<host>/<path>``; when given the network is never used.
    ``file://`` URLs are copied. ``retries`` counts the extra attempts after the first one for
    network errors, HTTP 5xx/408/429 and truncated transfers (each resumes the partial file).
    A sha256 mismatch deletes the download and raises :class:`DownloadError` naming both digests.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    want = sha256.lower() if sha256 else None
    if dest.exists():
        # Already fetched (a re-run): keep it when it matches the pin, or when nothing is pinned.
        seen = sha256_file(dest)
        if want is None or seen == want:
            _write_digest(dest, seen)
            return seen
    part = dest.with_name(dest.name + ".part")

    scheme = urllib.parse.urlsplit(url).scheme
    if mirror is not None:
        _copy_local(mirror_path(url, Path(mirror)), part, f"mirror copy of {url} (expected mirror path)")
    elif scheme == "file":
        _copy_local(Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path)), part, url)
    elif scheme in ("http", "https"):
        attempt = 0
        while True:
            try:
                _http_attempt(url, part, timeout)
                break
            except _Retryable as e:
                attempt += 1
                if attempt > retries:
                    raise DownloadError(f"{url}: giving up after {attempt} attempts: {e}") from e
                time.sleep(backoff(attempt))
    else:
        raise DownloadError(f"{url}: unsupported URL scheme {scheme!r} (http, https, file)")

    digest = sha256_file(part)
    if want is not None and digest != want:
        part.unlink()
        raise DownloadError(
            f"{url}: sha256 mismatch for {dest}: expected {want}, got {digest}; the download was deleted"
        )
    _write_digest(dest, digest)
    os.replace(part, dest)
    return digest


def _write_digest(dest: Path, digest: str) -> None:
    with atomic_write(dest.with_name(dest.name + ".sha256")) as fh:
        fh.write(f"{digest}  {dest.name}\n")
