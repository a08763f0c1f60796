"""Byte-reproducible archives: fixed timestamps, owners, modes and member order."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile
import zipfile

_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        dirs = sorted({name.rsplit("/", 1)[0] + "/" for name in members if "/" in name})
        for d in dirs:
            info = zipfile.ZipInfo(d, date_time=_ZIP_EPOCH)
            info.external_attr = (0o40755 << 16) | 0x10
            zf.writestr(info, b"")
        for name in sorted(members):
            info = zipfile.ZipInfo(name, date_time=_ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16
            zf.writestr(info, members[name])
    return buf.getvalue()


def tar_bytes(members: dict[str, bytes], dirs: bool = True) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        names = sorted(members)
        if dirs:
            parents = set()
            for name in names:
                parts = name.split("/")[:-1]
                for i in range(1, len(parts) + 1):
                    parents.add("/".join(parts[:i]))
            for d in sorted(parents):
                info = tarfile.TarInfo(d)
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
                tf.addfile(info)
        for name in names:
            data = members[name]
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def gzip_bytes(data: bytes) -> bytes:
    buf = io.BytesIO()
    # mtime=0 and no file name in the header: the output depends on the data only
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as gz:
        gz.write(data)
    return buf.getvalue()


def bz2_bytes(data: bytes) -> bytes:
    return bz2.compress(data, compresslevel=9)


def xz_bytes(data: bytes) -> bytes:
    return lzma.compress(data, format=lzma.FORMAT_XZ, preset=3)
