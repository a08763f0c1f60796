"""A finished run as a small archive: the files the report stage reads and nothing it could
recompute (fine-tuning results, Section 5 and Liu et al. results, anchor counts, the ledger's
benchmark files and the declared outputs it waits for), the resolved config, and a manifest
(each file's sha256, the repository commit and the one the results were computed at, the config's
digest, the versions). It also carries the report's tables and the CSV beside each figure (its
plotted points; manifest key ``report``), so the numbers travel with the archive; those are
outputs of the report rules, never unpacked: a report rebuilt from the bundle writes them again,
byte for byte (``xling.report.rebuild`` checks).

``write_bundle`` makes it; ``check_bundle`` verifies an archive against the config it is used with
(every listed file present with its sha256, nothing else, the same config) before anything is
written; ``unpack_bundle`` writes its files, each atomically. Archives are reproducible: members
sorted, times and owners fixed, so the same results give the same bytes.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import io
import json
import platform
import subprocess
import tarfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Iterable, Mapping

import yaml

from xling.errors import InputError
from xling.io import atomic_write

MANIFEST = "bundle/manifest.json"
CONFIG = "bundle/config.yaml"
FORMAT = 1


# keys that say nothing about the results: ``bundle`` names the archive itself, ``report`` only how
# the report is worded (its note, findings per pair), so a report can be re-made from a bundle with them
NOT_RESULTS = ("bundle", "report")


def config_digest(cfg: Mapping) -> str:
    """sha256 of the resolved config, without the keys that do not shape the results (NOT_RESULTS)."""
    body = {k: v for k, v in cfg.items() if k not in NOT_RESULTS}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()


def config_yaml(cfg: Mapping) -> str:
    """The resolved config as the bundle holds it (and as --configfile reads it back): ``bundle``
    unset, as a run that computed its results has it, even when this bundle is re-made from another."""
    body = {**cfg, "bundle": None} if "bundle" in cfg else dict(cfg)
    return yaml.safe_dump(body, sort_keys=False, allow_unicode=True)


def _results_commit(cfg: Mapping, commit: str) -> str:
    """The commit the results were computed at: this checkout's, or, for a bundle re-made from
    another (``bundle=<archive>``: the same results, the report re-made), that archive's."""
    source = cfg.get("bundle")
    if not source:
        return commit
    manifest = json.loads(_read(Path(source))[MANIFEST])
    return manifest.get("results_commit", manifest.get("commit", "unknown"))


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _commit(repo: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("snakemake", "xling", "torch", "fairseq-fixed"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "absent"
    return out


def _member(name: str, data: bytes) -> tuple[tarfile.TarInfo, io.BytesIO]:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode, info.uid, info.gid = len(data), 0, 0o644, 0, 0
    return info, io.BytesIO(data)


def _entries(files: Iterable[str | Path], out: str | Path) -> dict[str, bytes]:
    entries = {}
    for f in sorted({str(PurePosixPath(Path(f))) for f in files}):
        _check_name(f, out)
        entries[f] = Path(f).read_bytes()
    return entries


def write_bundle(files: Iterable[str | Path], out: str | Path, cfg: Mapping, repo: str | Path,
                 extra: Mapping | None = None, report: Iterable[str | Path] = ()) -> dict:
    """Write ``files`` (paths relative to the working directory, kept as they are in the archive),
    the resolved config and the manifest to ``out`` (a .tar.gz, atomically); ``report``: report
    outputs carried beside them (tables, the figures' CSVs), listed apart and never unpacked. Returns the
    manifest."""
    entries = _entries(files, out)
    shown = _entries(report, out)
    both = sorted(set(entries) & set(shown))
    if both:
        raise InputError(out, None, "report files apart from the report's inputs", both[0])
    config_text = config_yaml(cfg).encode()
    commit = _commit(Path(repo))
    manifest = {
        "format": FORMAT,
        "run_name": cfg.get("run_name"),
        "config_sha256": config_digest(cfg),
        "commit": commit,
        "results_commit": _results_commit(cfg, commit),
        "versions": _versions(),
        **dict(extra or {}),
        "files": {name: {"sha256": _sha256(data), "bytes": len(data)} for name, data in entries.items()},
    }
    if shown:
        manifest["report"] = {name: {"sha256": _sha256(data), "bytes": len(data)} for name, data in shown.items()}
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(*_member(MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode()))
        tar.addfile(*_member(CONFIG, config_text))
        for name, data in sorted({**entries, **shown}.items()):
            tar.addfile(*_member(name, data))
    with atomic_write(out, "wb") as fh:
        # mtime=0 and no file name in the gzip header: the same results give the same bytes
        with gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0) as gz:
            gz.write(raw.getvalue())
    return manifest


def _check_name(name: str, archive: str | Path) -> None:
    p = PurePosixPath(name)
    if p.is_absolute() or ".." in p.parts or name.startswith("bundle/"):
        raise InputError(archive, None, "relative paths inside the working directory", name)


@dataclass(frozen=True)
class Bundle:
    path: Path
    manifest: dict
    config_text: str

    @property
    def files(self) -> list[str]:
        """The report's inputs: what unpacking writes."""
        return sorted(self.manifest["files"])

    @property
    def report(self) -> list[str]:
        """The report outputs it carries: the tables and the figures' CSVs (the figures' CSVs alone in a
        bundle made before the tables were carried; none in one made before the CSVs)."""
        return sorted(self.manifest.get("report") or {})

    def report_bytes(self) -> dict[str, bytes]:
        """The report files it carries, by name, as the run wrote them."""
        members = _read(self.path)
        return {name: members[name] for name in self.report}


def _read(archive: Path) -> dict[str, bytes]:
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            out = {}
            for m in tar.getmembers():
                if not m.isfile():
                    raise InputError(archive, None, "regular files only", f"{m.name} ({m.type!r})")
                fh = tar.extractfile(m)
                assert fh is not None  # a regular file has its contents
                out[m.name] = fh.read()
            return out
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile) as err:
        raise InputError(archive, None, "a results bundle (.tar.gz written by `snakemake bundle`)", str(err)) from None


def shipped_config(archive: Path) -> Path:
    """The config file written beside an archive (``R/bundle.config.yaml`` beside ``R/bundle.tar.gz``)."""
    name = archive.name.removesuffix(".tar.gz").removesuffix(".tgz")
    return archive.with_name(f"{name}.config.yaml")


def _config_hint(archive: Path) -> str:
    beside = shipped_config(archive)
    if beside.is_file():
        return f"Pass the config shipped beside it: --configfile {beside}"
    return (f"Pass the config it holds: tar -xzf {archive} {CONFIG}, then --configfile {CONFIG} "
            f"(written as {beside.name} beside the archive by `snakemake bundle`)")


def check_bundle(archive: str | Path, cfg: Mapping) -> Bundle:
    """Verify ``archive`` for use with ``cfg``; raise InputError naming the archive and the file
    at fault (a missing, altered or unexpected member, another config, an unreadable archive)."""
    archive = Path(archive)
    if not archive.is_file():
        raise InputError(archive, None, "a results bundle file (bundle=...)", "no such file")
    members = _read(archive)
    if MANIFEST not in members or CONFIG not in members:
        raise InputError(archive, None, f"{MANIFEST} and {CONFIG} inside the archive")
    try:
        manifest = json.loads(members.pop(MANIFEST))
    except ValueError as err:
        raise InputError(f"{archive}:{MANIFEST}", None, "JSON", str(err)) from None
    config_text = members.pop(CONFIG).decode()
    if manifest.get("format") != FORMAT:
        raise InputError(f"{archive}:{MANIFEST}", None, f"bundle format {FORMAT}", str(manifest.get("format")))
    want = config_digest(cfg)
    theirs = yaml.safe_load(config_text) or {}
    if manifest.get("config_sha256") != want and config_digest(_with_defaults(theirs)) != config_digest(
            _with_defaults(cfg)):
        theirs, ours = _with_defaults(theirs), _with_defaults(cfg)
        differ = sorted(k for k in set(theirs) | set(ours) if k not in NOT_RESULTS and theirs.get(k) != ours.get(k))
        # every key, uncut (InputError shortens what it got): the user compares them with their files
        raise InputError(archive, None, f"a bundle made with the config it is used with; it was made with "
                         f"another config: keys {', '.join(differ) or '(order or defaults)'} differ. "
                         f"{_config_hint(archive)}")
    listed = {**(manifest.get("report") or {}), **(manifest.get("files") or {})}
    for name in sorted(set(listed) | set(members)):
        if name not in members:
            raise InputError(f"{archive}:{name}", None, "the file the manifest lists", "missing")
        if name not in listed:
            raise InputError(f"{archive}:{name}", None, "only the files the manifest lists", "an unlisted file")
        _check_name(name, archive)
        if _sha256(members[name]) != listed[name]["sha256"]:
            raise InputError(f"{archive}:{name}", None, f"sha256 {listed[name]['sha256']}",
                             _sha256(members[name]))
    return Bundle(archive, manifest, config_text)


def _with_defaults(cfg: Mapping) -> dict:
    """``cfg`` with this checkout's schema defaults filled in: a bundle made before a key with a
    default existed is the same config at that default (a default whose value changed is not)."""
    from xling.config import fill_defaults

    return fill_defaults(copy.deepcopy(dict(cfg)))


def unpack_bundle(archive: str | Path, cfg: Mapping, dest: str | Path = ".") -> list[Path]:
    """Check the archive, then write each of its files under ``dest`` atomically; returns them."""
    bundle = check_bundle(archive, cfg)
    members = _read(Path(archive))
    out = []
    for name in bundle.files:
        target = Path(dest) / name
        with atomic_write(target, "wb") as fh:
            fh.write(members[name])
        out.append(target)
    return out
