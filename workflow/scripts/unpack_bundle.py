"""Snakemake script of rule unpack_bundle: a results bundle's files, checked, then written each
atomically where the run that made them wrote them (xling.report.bundle.unpack_bundle).

input:  the archive (--config bundle=...)
params: config (resolved: the bundle must have been made with it)
output: every file the bundle lists
"""

from _setup import run_logged

from xling.report.bundle import unpack_bundle


def main(sm) -> dict:
    return {"files": len(unpack_bundle(sm.input[0], dict(sm.params.config)))}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
