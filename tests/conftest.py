"""Shared test setup: sys.path, torch's threads, the shared slice run and how the suite is spread
over pytest-xdist's workers (``make test`` runs ``pytest -n <cores + 1> --dist loadgroup``)."""

import contextlib
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# tests/ holds the test-support package (`from support.toy_data import ...`) and helper modules
# such as tiny_checkpoint: put it on sys.path explicitly rather than rely on pytest's rootdir
# insertion. Snakemake puts a script's directory on sys.path before running it
# (workflow/scripts/_setup.py is imported that way); tests that run the scripts with runpy need
# the same, ahead of tests/.
for path in (str(TESTS), str(TESTS.parent / "workflow" / "scripts")):
    if path not in sys.path:
        sys.path.insert(0, path)

import torch  # noqa: E402

from support.running_test import pytest_runtest_logfinish, pytest_runtest_logstart  # noqa: E402, F401 - hooks
from support.session import built_once  # noqa: E402
from support.slice import Snapshot, link_copy, report_configs, run_report, run_slice, slice_configs  # noqa: E402
from support.xdist_groups import (  # noqa: E402, F401 - the last three: pytest-xdist's hooks (see there)
    group_of,
    publish_groups,
    pytest_configure_node,
    pytest_unconfigure,
    pytest_xdist_make_scheduler,
)

# --- torch's threads ---------------------------------------------------------------------------
# Under xdist every worker is a process of its own: two workers with torch's default (a thread per
# core each) would fight over the cores. A test that runs a workflow script in this process gets
# the script's torch.set_num_threads(job threads); each test starts again from the session's count.

SESSION_THREADS: int | None = None


def pytest_configure(config):
    global SESSION_THREADS
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // workers))
    SESSION_THREADS = torch.get_num_threads()


@pytest.fixture(autouse=True)
def _torch_threads_restored():
    yield
    if torch.get_num_threads() != SESSION_THREADS:
        torch.set_num_threads(SESSION_THREADS)


@pytest.fixture
def one_thread():
    """torch on one intra-op thread for this test: for results compared bit for bit, which can
    differ in the last digits when a reduction is split over two threads in two different ways."""
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(SESSION_THREADS)


@pytest.fixture
def no_dropout(monkeypatch):
    """The fine-tuning heads without dropout (the toy encoders have none): training is deterministic."""
    import xling.finetune.tasks as tasks_module

    monkeypatch.setattr(tasks_module, "HEAD_DROPOUT", 0.0)
    monkeypatch.setattr(tasks_module, "PARSER_DROPOUT", 0.0)


# --- the shared slice runs ---------------------------------------------------------------------
# `slice_run`: the demo's slice (support/slice.py), run once for the whole session; `slice_report_run`:
# a copy of it with the report stage (`bundle report`) run on top, once too. Both are only read by
# the tests that take them (checked at the end of the session); `slice_copy`: a test's own copy of
# the slice, to run more jobs on.
SLICE_FIXTURES = {"slice_run", "slice_copy", "slice_report_run"}


@contextlib.contextmanager
def _read_only(workdir: Path, fixture: str):
    """Fails on leaving if a file of ``workdir`` was added, removed or rewritten meanwhile."""
    before = Snapshot(workdir)
    yield
    changed = before.changes()
    assert not changed, f"a test changed the shared {fixture} (run jobs on a copy, slice_copy): {changed[:10]}"


@pytest.fixture(scope="session")
def slice_run(tmp_path_factory):
    """``(workdir, config files)`` of the finished slice."""
    workdir = built_once(tmp_path_factory, "shared-slice", run_slice)
    with _read_only(workdir, "slice_run"):
        yield workdir, slice_configs(workdir)


@pytest.fixture(scope="session")
def slice_report_run(slice_run, tmp_path_factory):
    """``(workdir, config files)`` of the finished slice with its report stage (support.slice.run_report)."""

    def build(path: Path) -> None:
        link_copy(slice_run[0], path)
        run_report(path)

    workdir = built_once(tmp_path_factory, "shared-slice-report", build)
    with _read_only(workdir, "slice_report_run"):
        yield workdir, report_configs(workdir)


@pytest.fixture
def slice_copy(slice_run, tmp_path):
    """``(workdir, config files)`` of this test's own copy of the finished slice (hard links, see
    support.slice.link_copy), for a test that runs jobs on top of it."""
    copy = tmp_path / "slice"
    link_copy(slice_run[0], copy)
    return copy, slice_configs(copy)


# --- fast_align ------------------------------------------------------------------------------
FAST_ALIGN_TARBALLS = (sorted((TESTS.parent / "src" / "xling" / "data").glob("fast_align-*.tar.gz"))
                       + sorted((TESTS.parents[1] / "shared" / "tools").glob("fast_align-*.tar.gz")))


@pytest.fixture(scope="session")
def tools(tmp_path_factory):
    """fast_align and atools, compiled once per session from their source release (the copy the
    package ships for the testbed, or the offline mirror in ../shared/tools)."""
    from xling.analysis.fastalign import TOOLS, build_fast_align, find_cmake

    if not FAST_ALIGN_TARBALLS:
        pytest.skip("no fast_align source tarball in src/xling/data or ../shared/tools")
    if not (find_cmake() and (shutil.which("g++") or shutil.which("c++"))):
        pytest.skip("building fast_align needs cmake and a C++ compiler")
    dest = built_once(tmp_path_factory, "fast_align", lambda path: build_fast_align(FAST_ALIGN_TARBALLS[0], path))
    return {tool: dest / tool for tool in TOOLS}


# --- marks and xdist groups --------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """A test that takes a shared slice fixture is `slow` and in xdist group "slice": one worker
    runs them all, on one build, while the other workers run the rest. Any other test without a
    group is in its file's, so that a module's fixtures are built once, but a GPU test, which is in
    its own. Under xdist the "slice"
    group goes first, then the SLURM tests (they mostly wait on the scheduler, and the slice's
    second job takes the core they leave), then the other groups holding slow tests, then the
    rest, the groups of most tests first: the longest work starts first, and the end of the run
    is spread in small pieces over the workers."""
    for item in items:
        if SLICE_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.xdist_group("slice"))
        elif group_of(item) is None:
            # a GPU test alone: make test-gpu spreads them over its workers, which share the one GPU
            # (what several of them need is built once per session: support.session)
            gpu = item.get_closest_marker("gpu") is not None
            item.add_marker(pytest.mark.xdist_group(item.nodeid if gpu else item.nodeid.split("::")[0]))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        groups = [group_of(item) for item in items]
        slow = {g for g, item in zip(groups, items) if item.get_closest_marker("slow")}
        waiting = {g for g, item in zip(groups, items) if item.get_closest_marker("slurm")}
        size, first = Counter(groups), {g: i for i, g in reversed(list(enumerate(groups)))}

        def order(g: str) -> tuple:
            return g != "slice", g not in waiting, g not in slow, 0 if g in slow else -size[g], first[g]

        items[:] = [item for _, item in sorted(zip(groups, items), key=lambda gi: order(gi[0]))]
        publish_groups(config, items)
