# A target that is neither a rule nor a file the workflow makes (a misspelt `table1_row_sep_embb`)
# stops planning with the closest target names (xling.targets), not Snakemake's generic
# "No rule to produce". Only bare names reach this rule: every output of the workflow is a path.

from pathlib import Path

from xling.errors import stop_planning
from xling.targets import unknown_target_message


def unknown_target(w):
    """Nothing for a file that exists (a bare file name given as a target); else the message."""
    if Path(w.name).exists():
        return []
    names = [r.name for r in workflow.rules if not r.has_wildcards()]
    raise stop_planning(unknown_target_message(w.name, names))


rule unknown_target:
    input:
        unknown_target,
    output:
        "{name}",
    wildcard_constraints:
        name=r"[A-Za-z][A-Za-z0-9_]*",
