"""Debian packages the tests install on the spot (as root): SLURM and munge, Chromium."""

from __future__ import annotations

import os
import subprocess
from typing import Sequence


def apt_install(packages: Sequence[str], log: list[str] | None = None) -> subprocess.CompletedProcess:
    """``apt-get install`` the packages (no prompts, no recommends). When that fails, the package
    lists may be missing (a fresh machine): ``apt-get update`` once, then retry. Returns the last
    command's result (the update's, if that failed); ``log`` gets every command and its output."""
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages]

    def run(cmd: list[str]) -> subprocess.CompletedProcess:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if log is not None:
            log.append(f"$ {' '.join(cmd)} -> {proc.returncode}\n{proc.stdout}{proc.stderr}")
        return proc

    proc = run(install)
    if proc.returncode != 0:
        proc = run(["apt-get", "update", "-qq"])
        if proc.returncode == 0:
            proc = run(install)
    return proc
