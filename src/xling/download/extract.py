"""Safe, atomic, idempotent extraction of .zip / .tar / .tar.gz / .tgz / .tar.bz2 / .tar.xz archives.

Every member is checked before anything is written: absolute names, ``..`` components, links whose
target leaves the archive, and device/FIFO members are refused. Tar members are then extracted with
Python's ``data`` filter, which re-checks real paths on disk (catching link chains that a purely
lexical check misses). Extraction goes to a temp directory renamed to ``dest_dir`` at the end.
"""

from __future__ import annotations

import json
import posixpath
import re
import stat
import tarfile
import zipfile
from pathlib import Path

from xling.io import atomic_dir

MARKER = ".xling-extracted.json"


class UnsafeArchiveError(ValueError):
    """The archive has a member that would land outside the extraction directory."""


def _member_path(archive: Path, name: str) -> str:
    """Normalised relative POSIX path of a member; raises on absolute or ``..`` names."""
    unified = name.replace("\\", "/")
    if unified.startswith("/") or re.match(r"^[A-Za-z]:", unified):
        raise UnsafeArchiveError(f"{archive}: member {name!r} has an absolute path")
    if ".." in unified.split("/"):
        raise UnsafeArchiveError(f"{archive}: member {name!r} contains '..'")
    return posixpath.normpath(unified)


def _check_link(archive: Path, name: str, target: str, relative_to_member: bool) -> None:
    """Refuse a link whose target is absolute or resolves (lexically) outside the archive root."""
    kind = "symlink" if relative_to_member else "hard link"
    if target.startswith("/") or re.match(r"^[A-Za-z]:", target):
        raise UnsafeArchiveError(f"{archive}: {kind} {name!r} points to absolute path {target!r}")
    base = posixpath.dirname(posixpath.normpath(name)) if relative_to_member else ""
    resolved = posixpath.normpath(posixpath.join(base, target))
    if resolved == ".." or resolved.startswith("../"):
        raise UnsafeArchiveError(f"{archive}: {kind} {name!r} -> {target!r} points outside the archive")


def archive_kind(archive: Path) -> str:
    """'zip' or 'tar', from the name, falling back to the content (URLs like ``...?dl=1``)."""
    name = archive.name.lower()
    if name.endswith(".zip"):
        return "zip"
    if re.search(r"\.(tar|tgz|tbz2?|txz)$|\.tar\.(gz|bz2|xz)$", name):
        return "tar"
    if zipfile.is_zipfile(archive):
        return "zip"
    if tarfile.is_tarfile(archive):
        return "tar"
    raise ValueError(f"{archive}: not a zip or tar archive")


def _extract_zip(archive: Path, out: Path) -> None:
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            _member_path(archive, info.filename)
            if stat.S_ISLNK(info.external_attr >> 16):
                # zipfile writes link members as small regular files; still refuse escaping ones.
                _check_link(archive, info.filename, zf.read(info).decode("utf-8", "replace"), True)
        zf.extractall(out)


def _extract_tar(archive: Path, out: Path) -> None:
    with tarfile.open(archive, "r:*") as tf:
        members = tf.getmembers()
        for m in members:
            _member_path(archive, m.name)
            if m.issym():
                _check_link(archive, m.name, m.linkname, True)
            elif m.islnk():
                _member_path(archive, m.linkname)
                _check_link(archive, m.name, m.linkname, False)
            elif not (m.isfile() or m.isdir()):
                raise UnsafeArchiveError(f"{archive}: member {m.name!r} is a device or FIFO")
        try:
            tf.extractall(out, members=members, filter="data")
        except tarfile.FilterError as e:
            raise UnsafeArchiveError(f"{archive}: {e}") from e


def _stamp(archive: Path) -> dict:
    st = archive.stat()
    return {"archive": archive.name, "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def safe_extract(archive: str | Path, dest_dir: str | Path) -> Path:
    """Extract ``archive`` into ``dest_dir`` (created whole, or not at all) and return ``dest_dir``.

    Idempotent: a ``dest_dir`` already extracted from this very archive (same name, size, mtime) is
    left as is; any other existing ``dest_dir`` is replaced.
    """
    archive, dest_dir = Path(archive), Path(dest_dir)
    marker = dest_dir / MARKER
    if marker.is_file():
        try:
            if json.loads(marker.read_text()) == _stamp(archive):
                return dest_dir
        except (json.JSONDecodeError, OSError):
            pass
    kind = archive_kind(archive)
    with atomic_dir(dest_dir) as tmp:
        (_extract_zip if kind == "zip" else _extract_tar)(archive, tmp)
        (tmp / MARKER).write_text(json.dumps(_stamp(archive)))
    return dest_dir
