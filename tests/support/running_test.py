"""The test running now, for bench/gpu_check.sh: pytest's junit report leaves unnamed the test an
interrupt cuts (its setup opened the case; no call report named it), and the check names it from
the file this hook keeps. A pytest plugin (tests/conftest.py imports its hook; ``-p
support.running_test`` loads it alone)."""

import os
from pathlib import Path


def pytest_runtest_logstart(nodeid, location):
    """With XLING_RUNNING_TEST set, each test's node id as it starts, in that file (replaced whole)."""
    path = os.environ.get("XLING_RUNNING_TEST")
    if path:
        tmp = Path(f"{path}.{os.getpid()}.tmp")
        tmp.write_text(nodeid + "\n")
        os.replace(tmp, path)
