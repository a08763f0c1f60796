"""Snakemake script of the extract rules (extract_<id>): unpack a downloaded archive, refusing
members that would land outside it (xling.download.safe_extract).

input:  archive
output: output[0] = the extracted directory
"""

from pathlib import Path

from _setup import run_logged

from xling.download import safe_extract


def main(sm) -> dict:
    safe_extract(Path(sm.input.archive), Path(sm.output[0]))
    return {"archive": sm.input.archive, "extracted": sm.output[0]}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
