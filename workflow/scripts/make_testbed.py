"""Snakemake script of rule testbed: the synthetic testbed, the demo's offline mirror of every
download (xling.testbed.generate).

params: testbed = the config's testbed section (scale, seed, size overrides)
output: output[0] = the mirror directory
"""

from pathlib import Path

from _setup import run_logged

from xling.testbed import generate


def main(sm) -> dict:
    params = dict(sm.params.testbed)
    seed = int(params.pop("seed"))
    manifest = generate(Path(sm.output[0]), params, seed, workers=int(sm.threads))
    return {"resources": len(manifest), "seed": seed}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
