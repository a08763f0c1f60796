"""`snakemake --lint` for this workflow, with one of its opinions set aside on purpose.

Snakemake's linter asks for every input function to be collected in one common module
("Mixed rules and functions in same snakefile"). This workflow deliberately does the opposite:
each stage's rule file owns its input functions, output names and params beside its rules, and
common.smk holds only what every stage shares (docs/ARCHITECTURE.md). Every other lint of
Snakemake's, on the snakefiles and on the rules, fails this check.

    python scripts/lint_workflow.py [--configfile FILE ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# the lint this workflow's layout disagrees with, by title
SET_ASIDE = {"Mixed rules and functions in same snakefile."}


def lints(configfiles: list[Path], snakefile: Path = REPO / "Snakefile") -> list[tuple[str, str]]:
    """(where, title) of every lint Snakemake reports for the workflow under ``configfiles``."""
    from snakemake.api import SnakemakeApi
    from snakemake.linting.rules import RuleLinter
    from snakemake.linting.snakefiles import SnakefileLinter
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings, StorageSettings

    with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
        wapi = api.workflow(
            resource_settings=ResourceSettings(),
            config_settings=ConfigSettings(configfiles=configfiles),
            storage_settings=StorageSettings(),
            snakefile=snakefile,
            workdir=snakefile.parent,
        )
        # what `snakemake --lint` runs (snakemake.api.WorkflowApi.lint), read as data: its own
        # JSON output fails to serialise the snakefiles' names in Snakemake 9.27
        workflow = wapi._get_workflow(check_envvars=False)
        workflow.include(wapi.snakefile, overwrite_default_target=True, print_compilation=False)
        workflow.check()
        snakefiles, _ = SnakefileLinter(workflow, workflow.included).lint(json=True)
        rules, _ = RuleLinter(workflow, workflow.rules).lint(json=True)
    return [(str(item["for"]["snakefile"]), lint["title"]) for item in snakefiles for lint in item["lints"]] + [
        (f"rule {item['for']['rule']}", lint["title"]) for item in rules for lint in item["lints"]
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configfile", nargs="*", type=Path, default=[])
    args = ap.parse_args(argv)
    bad = [(w, title) for w, title in lints([p.resolve() for p in args.configfile]) if title not in SET_ASIDE]
    for where, title in bad:
        print(f"{where}: {title}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
