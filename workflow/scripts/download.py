"""Snakemake script for the download rules (`download_<id>`: fetch one file) and the extract rules
(`extract_<id>`: unpack it); thin wrapper over xling.download.

download: params url, sha256, mirror, retries, timeout; output[0] = the file (<file>.sha256 beside)
extract:  input[0] = the archive; output[0] = the extracted directory
"""

import contextlib
import sys
from pathlib import Path

try:
    import _setup  # noqa: F401
except ImportError:
    pass

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
    job = run_extract if is_extract(sm) else run_download
    log = list(getattr(sm, "log", []) or [])
    if not log:
        job(sm)
        return
    Path(log[0]).parent.mkdir(parents=True, exist_ok=True)
    with open(log[0], "w") as fh, contextlib.redirect_stderr(fh):
        job(sm)


if "snakemake" in globals():
    main(snakemake)  # noqa: F821 - injected by Snakemake
