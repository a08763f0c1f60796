"""Snakemake script: generate the synthetic testbed (rule `testbed`)."""

from pathlib import Path

from xling.testbed import generate

generate(Path(snakemake.output[0]), dict(snakemake.params.testbed), int(snakemake.params.seed))  # noqa: F821
