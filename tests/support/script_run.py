"""Run one workflow script (``workflow/scripts/<name>.py``) in this process with a stand-in for the
``snakemake`` object Snakemake injects: named inputs, outputs and params readable as attributes
and items, a log file, one thread, no GPU. For the scripts of rules whose inputs the testbed
cannot make (m-BERT's files), so their glue is still run by a test."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

from xling.config import REPO

SCRIPTS = REPO / "workflow" / "scripts"


class Named(dict):
    """A dict whose keys are also attributes, as Snakemake's named lists are."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


class FakeSnakemake:
    def __init__(self, rule: str, input: dict, output: dict, params: dict, log: Path):
        self.rule, self.input, self.output, self.params = rule, Named(input), Named(output), Named(params)
        self.log, self.threads, self.resources, self.wildcards = [str(log)], 1, Named(gpu=0), Named()


def run_script(name: str, input: dict, output: dict, params: dict, log: Path) -> None:
    """Execute ``workflow/scripts/<name>.py`` as its rule would; raises what the script raises."""
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    runpy.run_path(str(SCRIPTS / f"{name}.py"),
                   init_globals={"snakemake": FakeSnakemake(name, input, output, params, log)}, run_name="__main__")
