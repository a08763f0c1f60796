"""A bundle's members read and written back as plain bytes: how the bundle tests tamper with an
archive after the fact (tests/test_report_bundle.py, tests/test_report_figure_csvs.py)."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path


def members(archive: Path) -> dict[str, bytes]:
    """Every member of the gzipped tar ``archive``, by name."""
    with tarfile.open(archive, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}


def rewrite(archive: Path, files: dict[str, bytes]) -> None:
    """``archive`` made anew from ``files`` (name -> bytes), in their order."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    archive.write_bytes(gzip.compress(raw.getvalue()))
