"""A one-line JSON summary of a preprocessing job, to the rule's log file if it has one."""

from __future__ import annotations

import json
import sys


def log_result(smk, result: dict) -> None:
    line = json.dumps({"rule": getattr(smk, "rule", None), **result}, default=str)
    log = list(getattr(smk, "log", []) or [])
    if log:
        with open(log[0], "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    else:
        print(line, file=sys.stderr)
