"""Errors for bad input: each names the file, the line and what was expected."""

from __future__ import annotations

from pathlib import Path


class InputError(ValueError):
    """Malformed input data. ``line`` is 1-based; None when the problem is the whole file."""

    def __init__(self, path: str | Path, line: int | None, expected: str, got: str | None = None):
        self.path = str(path)
        self.line = line
        self.expected = expected
        self.got = got
        where = f"{self.path}:{line}" if line is not None else self.path
        msg = f"{where}: expected {expected}"
        if got is not None:
            shown = got if len(got) <= 80 else got[:77] + "..."
            msg += f", got {shown!r}"
        super().__init__(msg)


class ConfigError(ValueError):
    """Invalid configuration (raised before any job runs)."""


def stop_planning(err: Exception | str, configfiles=()) -> SystemExit:
    """What the workflow raises for a bad config or bundle while Snakemake reads it: the
    ``snakemake`` command then prints ``Error: <message>`` alone and exits with status 1.
    Snakemake prints any exception raised while it reads the Snakefile with the workflow file's
    line as a traceback, which names our code instead of the user's file. A config error names
    ``configfiles``, the files its keys came from, in the order they were merged."""
    files = f"\n  config files, merged in this order: {', '.join(map(str, configfiles))}" \
        if configfiles and isinstance(err, ConfigError) else ""
    return SystemExit(f"Error: {err}{files}")
