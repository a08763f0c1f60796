"""An offline mirror (``download.mirror``: a directory laid out as ``<host>/<path>``) built for a
config's downloads from local copies of the files, and from the network for the rest.

A cluster without internet reads every download from a mirror. This fills one: for each download
entry, a local file with the entry's pinned sha256 is linked in (found under the ``--from``
folders by the URL's file name, else by its digest alone, for copies renamed on the way: a copy of
the data carried to the cluster, or this project's shared data, which holds byte-identical copies
of the real study's files); an entry whose host is one of the
``--fetch`` hosts is downloaded there (xling.download.fetch: resumable, checked against its pin);
any other is left out and listed, since a dry run of the target says whether it is needed at all.
Only pinned entries are matched locally: a file of the right name but another digest is not the
download, and the job that reads it would refuse it anyway.

    python -m xling.download.mirror --configfile config/real.yaml --from ../shared/data \\
        --fetch deb.debian.org [--to DIR]

``--to`` defaults to the config's ``download.mirror``. A second run keeps what is already there.
"""

from __future__ import annotations

import argparse
import os
import sys
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping

from xling.download.fetch import DownloadError, fetch, mirror_path, sha256_file, url_basename

Log = Callable[[str], None]


@dataclass
class MirrorReport:
    """What a build did with each download id."""

    kept: list[str] = field(default_factory=list)  # already in the mirror, its digest right
    linked: list[str] = field(default_factory=list)  # a local copy linked in
    fetched: list[str] = field(default_factory=list)  # downloaded from its URL
    missing: dict[str, str] = field(default_factory=dict)  # id -> why it is not in the mirror

    def summary(self) -> str:
        """Counts, then the ids not in the mirror grouped by why (a dry run of the target says
        whether any of them is needed)."""
        out = [f"{len(self.kept)} kept, {len(self.linked)} linked from local copies, {len(self.fetched)} fetched, "
               f"{len(self.missing)} not in the mirror"]
        by_reason: dict[str, list[str]] = {}
        for rid, why in sorted(self.missing.items()):
            by_reason.setdefault(why.split(": ", 1)[-1] if why.startswith("no local copy") else why, []).append(rid)
        out += [f"  {why}: {', '.join(ids)}" for why, ids in by_reason.items()]
        return "\n".join(out)


def local_files(folders: Iterable[Path]) -> dict[str, list[Path]]:
    """File name -> every file of that name under ``folders`` (followed into subfolders)."""
    index: dict[str, list[Path]] = {}
    for folder in folders:
        if not Path(folder).is_dir():
            raise FileNotFoundError(f"{folder}: no such folder to take local copies from")
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                index.setdefault(path.name, []).append(path.resolve())
    return index


def _digest_matches(path: Path, want: str | None, seen: dict[Path, str]) -> bool:
    if want is None:
        return False
    if path not in seen:
        seen[path] = sha256_file(path)
    return seen[path] == want.lower()


def build_mirror(downloads: Mapping[str, Mapping], mirror: Path, folders: Iterable[Path] = (),
                 fetch_hosts: Iterable[str] = (), log: Log | None = None) -> MirrorReport:
    """Fill ``mirror`` for ``downloads`` (the config's ``downloads``: id -> {url, sha256}): local
    copies linked (absolute symlinks: the mirror is read where it was built), ``fetch_hosts``' files
    downloaded, the rest reported missing. Idempotent."""
    log = log or (lambda _m: None)
    report, digests = MirrorReport(), dict[Path, str]()
    index = local_files(folders)
    hosts = set(fetch_hosts)
    for rid, entry in downloads.items():
        url, want = entry["url"], entry.get("sha256")
        try:
            dest = mirror_path(url, mirror)
        except DownloadError as err:  # a file:// entry is read where it is, never through a mirror
            report.missing[rid] = str(err)
            continue
        if dest.exists() and (want is None or _digest_matches(dest.resolve(), want, digests)):
            report.kept.append(rid)
            continue
        local = [p for p in index.get(url_basename(url), []) if _digest_matches(p, want, digests)]
        if not local and want is not None:  # a copy renamed on the way ("001 Shinel .xml" as 001_Shinel.xml)
            local = [p for paths in index.values() for p in paths if _digest_matches(p, want, digests)][:1]
        if local:
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{dest.name}.{os.getpid()}.link")
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(local[0])
            os.replace(tmp, dest)  # a link appears whole, or the old entry stays
            report.linked.append(rid)
            log(f"{rid}: linked {local[0]}")
        elif urllib.parse.urlsplit(url).netloc in hosts:
            fetch(url, dest, sha256=want)
            report.fetched.append(rid)
            log(f"{rid}: fetched {url}")
        elif want is None:
            report.missing[rid] = "no sha256 pinned, so no local copy can be trusted to be it"
        else:
            report.missing[rid] = f"no local copy of {url_basename(url)} with its sha256, and its host is not fetched"
    return report


def main(argv: list[str] | None = None) -> int:
    from xling.config import REPO, load

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configfile", nargs="+", type=Path, required=True,
                    help="config overlays, read after config/config.yaml (as Snakemake's --configfile)")
    ap.add_argument("--from", dest="folders", nargs="*", type=Path, default=[],
                    help="folders holding local copies of the files (matched by name and sha256)")
    ap.add_argument("--fetch", dest="hosts", nargs="*", default=[], help="hosts whose files are downloaded")
    ap.add_argument("--to", type=Path, help="the mirror directory (default: the config's download.mirror)")
    args = ap.parse_args(argv)
    config = load(REPO / "config" / "config.yaml", *args.configfile)
    mirror = args.to or config["download"]["mirror"]
    if not mirror:
        ap.error("no mirror directory: give --to, or set download.mirror in the config")
    try:
        report = build_mirror(config["downloads"], Path(mirror), args.folders, args.hosts, log=print)
    except FileNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"{mirror}: {report.summary()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
