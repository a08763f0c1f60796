"""Snakemake script for the download rules (`download_<id>`: fetch one file) and the extract rules
(`extract_<id>`: unpack it); thin wrapper over xling.download.

download: params url, sha256, mirror, retries, timeout; output[0] = the file (<file>.sha256 beside)
extract:  input[0] = the archive; output[0] = the extracted directory
"""

import sys
from pathlib import Path

from _setup import run_logged  # also puts src/ on sys.path

from xling.download import fetch, safe_extract


def run_download(sm) -> None:
    out = Path(sm.output[0])
    digest = fetch(sm.params.url, out, sha256=sm.params.sha256, mirror=sm.params.mirror,
                   retries=int(sm.params.retries), timeout=float(sm.params.timeout))
    print(f"{out}: sha256 {digest}", file=sys.stderr)


def run_extract(sm) -> None:
    safe_extract(Path(sm.input[0]), Path(sm.output[0]))
    print(f"extracted {sm.input[0]} -> {sm.output[0]}", file=sys.stderr)


def is_extract(sm) -> bool:
    """An extract job: `params.action == "extract"`, or a rule named extract_<id>."""
    action = getattr(sm.params, "action", None) if hasattr(sm, "params") else None
    return action == "extract" or (action is None and str(getattr(sm, "rule", "")).startswith("extract"))


def main(sm) -> None:
    run_logged(sm, run_extract if is_extract(sm) else run_download)


if "snakemake" in globals():
    main(snakemake)  # noqa: F821 - injected by Snakemake
