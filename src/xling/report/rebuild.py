"""Rebuild a bundle's report in a fresh working directory and compare it, byte for byte, with the
tables and figure CSVs the bundle carries (``make check-bundle BUNDLE=...``).

The bundle carries the report as its run wrote it (manifest key ``report``); the rebuild unpacks
only the report's inputs and runs the report rules on them, so an identical rebuild shows that the
published tables and figures follow from the published results with this checkout's code.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from xling.config import REPO
from xling.errors import InputError
from xling.report.bundle import Bundle, check_bundle, shipped_config


@dataclass(frozen=True)
class Comparison:
    """The carried report files against the rebuilt ones: each name in one list."""

    identical: list[str]
    differ: list[str]
    missing: list[str]  # carried, but the rebuild did not write it

    @property
    def ok(self) -> bool:
        return bool(self.identical) and not self.differ and not self.missing


def compare_report(bundle: Bundle, workdir: str | Path) -> Comparison:
    """Each report file ``bundle`` carries against the file of that name under ``workdir``."""
    carried = bundle.report_bytes()
    identical, differ, missing = [], [], []
    for name in sorted(carried):
        rebuilt = Path(workdir) / name
        if not rebuilt.is_file():
            missing.append(name)
        elif rebuilt.read_bytes() == carried[name]:
            identical.append(name)
        else:
            differ.append(name)
    return Comparison(identical, differ, missing)


def load_bundle(archive: Path, configfile: Path) -> Bundle:
    """The archive checked against the config it was made with (one error naming what is wrong)."""
    if not configfile.is_file():
        raise InputError(configfile, None, "the bundle's config (bundle.config.yaml beside the archive)",
                         "no such file")
    cfg = yaml.safe_load(configfile.read_text(encoding="utf-8")) or {}
    bundle = check_bundle(archive, cfg)
    if not bundle.report:
        raise InputError(archive, None, "a bundle that carries its report (made by `snakemake bundle` since "
                                        "it carries the figures' CSVs)", "no report files")
    return bundle


def rebuild(archive: Path, configfile: Path, workdir: Path, cores: str) -> subprocess.CompletedProcess:
    """`snakemake report` from the bundle alone, in ``workdir`` (the checkout's Snakefile)."""
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
           "--profile", str(REPO / "profiles" / "local"), "--directory", str(workdir), "--cores", cores,
           "--configfile", str(configfile.resolve()), "--config", f"bundle={archive.resolve()}", "--", "report"]
    return subprocess.run(cmd, capture_output=True, text=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path, help="the archive (results/<run>/bundle.tar.gz)")
    ap.add_argument("--configfile", type=Path, help="its config (default: bundle.config.yaml beside it)")
    ap.add_argument("--cores", default="all", help="Snakemake's --cores (default: all)")
    ap.add_argument("--workdir", type=Path,
                    help="rebuild here (a new or empty directory, kept); default: a temporary one, removed")
    args = ap.parse_args(argv)
    configfile = args.configfile or shipped_config(args.bundle)
    try:
        bundle = load_bundle(args.bundle, configfile)
    except InputError as err:
        print(f"Error: {err}", file=sys.stderr)
        return 2
    if args.workdir and args.workdir.exists() and any(args.workdir.iterdir()):
        print(f"Error: {args.workdir}: expected a new or empty directory, got one with files", file=sys.stderr)
        return 2
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="xling-rebuild-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        proc = rebuild(args.bundle, configfile, workdir, args.cores)
        if proc.returncode != 0:
            print(proc.stdout[-3000:] + proc.stderr[-5000:], file=sys.stderr)
            print(f"FAIL: `snakemake report` from {args.bundle} exited with {proc.returncode}", file=sys.stderr)
            return 1
        result = compare_report(bundle, workdir)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    for kind, names in (("differs from the bundle's", result.differ), ("not rebuilt", result.missing)):
        for name in names:
            print(f"{name}: {kind}")
    verdict = "PASS" if result.ok else "FAIL"
    print(f"{verdict}: {args.bundle} (commit {bundle.manifest.get('commit', 'unknown')[:7]}): "
          f"{len(result.identical)} of {len(bundle.report)} report files rebuilt byte-identical "
          f"({len(result.differ)} differ, {len(result.missing)} not rebuilt)")
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
