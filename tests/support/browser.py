"""Chromium for the tests that open a page in a real browser: the one on PATH, else Debian's
package installed on the spot (as root, like the SLURM harness's packages), else None."""

from __future__ import annotations

import os

from support.apt import apt_install
from xling.report.browser import find_browser


def chromium() -> str | None:
    found = find_browser()
    if found or os.geteuid() != 0:
        return found
    apt_install(["chromium"])
    return find_browser()
