"""Safe, atomic, idempotent extraction of .zip / .tar / .tar.gz / .tgz / .tar.bz2 / .tar.xz archives,
and of Debian packages (.deb: their ``data.tar.*`` member, the files the package installs).

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


AR_MAGIC = b"!<arch>\n"


def archive_kind(archive: Path) -> str:
    """'zip', 'tar' or 'deb', from the name, falling back to the content (URLs like ``...?dl=1``)."""
    name = archive.name.lower()
    if name.endswith(".zip"):
        return "zip"
    if name.endswith(".deb"):
        return "deb"
    if re.search(r"\.(tar|tgz|tbz2?|txz)$|\.tar\.(gz|bz2|xz)$", name):
        return "tar"
    if zipfile.is_zipfile(archive):
        return "zip"
    if tarfile.is_tarfile(archive):
        return "tar"
    raise ValueError(f"{archive}: not a zip, tar or Debian (.deb) archive")


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
        _extract_members(archive, tf, out)


def ar_members(archive: Path) -> dict[str, tuple[int, int]]:
    """The members of an ``ar`` archive (a .deb's container): name -> (offset of its data, size).
    The format is a magic line and a 60-byte header before each member (name, dates, owner, mode,
    decimal size, "`\\n"), each member padded to an even offset. Written by hand: the standard
    library has no ar reader, and this is all of the format a .deb uses."""
    out = {}
    with open(archive, "rb") as fh:
        if fh.read(len(AR_MAGIC)) != AR_MAGIC:
            raise ValueError(f"{archive}: not a Debian package (no ar archive header)")
        while header := fh.read(60):
            if len(header) < 60 or header[58:60] != b"`\n":
                raise ValueError(f"{archive}: a cut or damaged ar member header at byte {fh.tell() - len(header)}")
            name = header[:16].decode("ascii", "replace").strip().rstrip("/")
            try:
                size = int(header[48:58].decode("ascii").strip())
            except ValueError:
                raise ValueError(f"{archive}: member {name!r} has no size in its header") from None
            out[name] = (fh.tell(), size)
            fh.seek(size + size % 2, 1)
    total = archive.stat().st_size
    for name, (offset, size) in out.items():
        if offset + size > total:
            raise ValueError(f"{archive}: member {name!r} runs past the end of the file (cut short?)")
    return out


def _extract_deb(archive: Path, out: Path) -> None:
    """A .deb's ``data.tar.{xz,gz,bz2}`` (what the package installs), checked as any tar archive."""
    import io

    members = ar_members(archive)
    data = [n for n in members if n.startswith("data.tar")]
    if len(data) != 1:
        raise ValueError(f"{archive}: expected one data.tar.* member in the Debian package, found {data}")
    offset, size = members[data[0]]
    with open(archive, "rb") as fh:
        fh.seek(offset)
        payload = fh.read(size)
    try:
        with tarfile.open(fileobj=io.BytesIO(payload), mode="r:*") as tf:
            _extract_members(archive, tf, out)
    except tarfile.ReadError as e:
        raise ValueError(f"{archive}: its {data[0]} is not a readable tar archive ({e})") from e


def _extract_members(archive: Path, tf: tarfile.TarFile, out: Path) -> None:
    """Every member checked (paths, links, no devices), then extracted with the data filter."""
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
        {"zip": _extract_zip, "tar": _extract_tar, "deb": _extract_deb}[kind](archive, tmp)
        (tmp / MARKER).write_text(json.dumps(_stamp(archive)))
    return dest_dir
