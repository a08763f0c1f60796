"""Snakemake script of rule bundle: the report stage's inputs, the ledger's benchmark files and the
resolved config as one archive (xling.report.bundle.write_bundle).

input:  results = every file the report rules read; report = the report's tables and the CSV beside
        each figure (carried, never unpacked)
params: benchmarks (read where they exist), ner_unavailable, config (resolved), repo (its commit)
output: archive = R/bundle.tar.gz; config = R/bundle.config.yaml (the config inside it)
"""

from pathlib import Path

from _setup import run_logged

from xling.io import atomic_write
from xling.report.bundle import config_yaml, write_bundle


def main(sm) -> dict:
    benchmarks = [b for b in sm.params.benchmarks if Path(b).is_file()]
    manifest = write_bundle([*sm.input.results, *benchmarks], sm.output.archive, dict(sm.params.config),
                            sm.params.repo, report=sm.input.report,
                            extra={"ner_unavailable": dict(sm.params.ner_unavailable),
                                   "benchmarks_missing": sorted(set(sm.params.benchmarks) - set(benchmarks))})
    with atomic_write(sm.output.config) as fh:
        fh.write(config_yaml(sm.params.config))
    return {"files": len(manifest["files"]), "report_files": len(manifest.get("report", {})),
            "bytes": Path(sm.output.archive).stat().st_size}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
