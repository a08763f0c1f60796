"""Snakemake script of rule build_fast_align: compile fast_align and atools from the source
release (xling.analysis.fastalign.build_fast_align).

input:  the source tarball
output: fast_align, atools (same folder)
"""

from pathlib import Path

from _setup import run_logged

from xling.analysis.fastalign import build_fast_align


def main(sm) -> dict:
    built = build_fast_align(Path(sm.input[0]), Path(sm.output.fast_align).parent, jobs=sm.threads)
    return {tool: str(path) for tool, path in built.items()}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
