"""Snakemake script of the download rules (download_<id>): fetch one file (xling.download.fetch).

input:  mirror (optional) = a directory laid out as <host>/<path> that replaces the network
params: url, sha256 (null: record the digest seen), retries, timeout
output: output[0] = the file (<file>.sha256 beside it)
"""

from pathlib import Path

from _setup import run_logged

from xling.download import fetch


def main(sm) -> dict:
    digest = fetch(sm.params.url, Path(sm.output[0]), sha256=sm.params.sha256, mirror=sm.input.get("mirror"),
                   retries=int(sm.params.retries), timeout=float(sm.params.timeout))
    return {"file": sm.output[0], "sha256": digest}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
