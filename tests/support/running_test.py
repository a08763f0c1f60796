"""The tests running now, for bench/gpu_check.sh: pytest's junit report leaves unnamed each test an
interrupt cuts (its setup opened the case; no call report named it), and the check names them from
the file these hooks keep: one node id a line, every test started and not yet finished. Under
pytest-xdist (``make test-gpu`` runs several at once) the controller keeps it, from its workers'
reports; a worker writes nothing. A pytest plugin (tests/conftest.py imports its hooks; ``-p
support.running_test`` loads it alone)."""

import os
from pathlib import Path

_RUNNING: dict[str, None] = {}  # started, not finished, in the order they started


def _write() -> None:
    path = os.environ.get("XLING_RUNNING_TEST")
    if path and not os.environ.get("PYTEST_XDIST_WORKER"):
        tmp = Path(f"{path}.{os.getpid()}.tmp")
        tmp.write_text("".join(f"{nodeid}\n" for nodeid in _RUNNING))
        os.replace(tmp, path)


def pytest_runtest_logstart(nodeid, location):
    """With XLING_RUNNING_TEST set, the file (replaced whole) holds this test's node id from its start..."""
    _RUNNING[nodeid] = None
    _write()


def pytest_runtest_logfinish(nodeid, location):
    """... to its end."""
    _RUNNING.pop(nodeid, None)
    _write()
