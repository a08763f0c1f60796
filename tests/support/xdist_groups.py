"""pytest-xdist's ``--dist loadgroup`` for this suite: every test of one ``xdist_group`` mark runs on
the same worker, and the groups are handed out in collection order (tests/conftest.py puts the
longest first). A pytest plugin, registered by tests/conftest.py.

pytest-xdist 3.8 tells its controller a test's group by appending ``@group`` to the test's node id
on the worker, which pytest 9.2 no longer takes: every test would be scheduled on its own. Here
each worker writes the groups of the tests it collected to a file, and the controller's scheduler
reads them from there; node ids stay as they are.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

WORKERINPUT_KEY = "xling_groups_file"
_GROUPS_FILE = pytest.StashKey[Path]()


def group_of(item: pytest.Item) -> str | None:
    """The test's xdist group (the name of its closest ``xdist_group`` mark), or None."""
    mark = item.get_closest_marker("xdist_group")
    if mark is None:
        return None
    return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))


def publish_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a worker: write every collected test's group where the controller's scheduler reads it."""
    path = getattr(config, "workerinput", {}).get(WORKERINPUT_KEY)
    if path is None:
        return
    groups = {item.nodeid: group_of(item) for item in items if group_of(item) is not None}
    fd, tmp = tempfile.mkstemp(dir=Path(path).parent)  # all workers write the same: whole files only
    with os.fdopen(fd, "w") as fh:
        json.dump(groups, fh)
    os.replace(tmp, path)


def _groups_file(config: pytest.Config) -> Path:
    if _GROUPS_FILE not in config.stash:
        config.stash[_GROUPS_FILE] = Path(tempfile.mkdtemp(prefix="pytest-xdist-groups-")) / "groups.json"
    return config.stash[_GROUPS_FILE]


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    node.workerinput[WORKERINPUT_KEY] = str(_groups_file(node.config))


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    path = _groups_file(config)

    class GroupScheduling(LoadScopeScheduling):
        """LoadScopeScheduling whose scopes are the tests' groups (a test without one: its own)."""

        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # first asked once every worker has collected
                self.groups = json.loads(path.read_text()) if path.is_file() else {}
            return self.groups.get(nodeid, nodeid)

    config.option.loadscopereorder = False  # keep the collection's order of the groups
    return GroupScheduling(config, log)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _GROUPS_FILE in config.stash:
        shutil.rmtree(config.stash[_GROUPS_FILE].parent, ignore_errors=True)
