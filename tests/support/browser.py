"""Chromium for the tests that open a page in a real browser: the one on PATH, else Debian's
package installed on the spot (as root, like the SLURM harness's packages), else None."""

from __future__ import annotations

import os
import subprocess

from xling.report.browser import find_browser


def chromium() -> str | None:
    found = find_browser()
    if found or os.geteuid() != 0:
        return found
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"]
    if subprocess.run(install, capture_output=True, env=env).returncode != 0:
        # package lists may be missing on a fresh machine: update once, then retry
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True, env=env)
        subprocess.run(install, capture_output=True, env=env)
    return find_browser()
