"""bench/gpu_check.sh, the one command a GPU window runs first, at tiny shapes on the CPU (its parts
cannot rot between windows: every part runs and every JSON is written and parsed); its exit
status and summary say FAIL when a part or a GPU test fails; its own time estimate fits what a
window leaves it; `make test-gpu` reaches pytest without a venv (a GPU node has Python 3.12 and no
index: scripts/bootstrap.sh cannot run there); pytest's report becomes the tests part's JSON,
every case named."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "gpu_check.sh"
sys.path.insert(0, str(ROOT / "bench"))
import gpu_check  # noqa: E402

from xling.cluster import rates  # noqa: E402

PARTS = ("tests", "workflow", "pretrain", "ab", "grid", "jobs")


def test_the_workflow_part_without_the_demos_packages_is_skipped_and_says_what_to_carry(tmp_path):
    """A call that did not carry the demo's wheels (or came to a fresh machine without the tests')
    skips the workflow, naming what is missing and what to carry, and fails nothing."""
    bare = tmp_path / "python"  # this Python without its site-packages: no Snakemake, no fairseq
    bare.write_text(f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")
    bare.chmod(0o755)
    got, out = run_check(tmp_path, PARTS="workflow", PYTHON=str(bare))
    rec = json.loads((out / "workflow.json").read_text())
    assert got.returncode == 0 and rec["status"] == "skipped", got.stdout[-2000:]
    assert "No module named 'snakemake'" in rec["note"] and ".whl-demo" in rec["note"]


def test_the_scripts_own_estimate_fits_a_window():
    """The parts run in the order of their value (the suite, the workflow, the A/Bs), and the
    window's calls the script's header plans (the carry limit holds one set of wheels a call) run
    the default parts in that order, each call's estimates (the first EST list: estimate,
    minimum, cap per part, in the script's order) with the setup and the summary within its
    budget, the budget within the call's 590 s (a 10-minute command), and its files within the 8
    a window returns (env, summary, log and one a part)."""
    text = SCRIPT.read_text()
    est = [int(v) for v in re.search(r"EST=\(([\d ]+)\)", text).group(1).split()]
    order = re.search(r"PARTS_ALL=\(([a-z ]+)\)", text).group(1).split()
    default = re.search(r'PARTS=\$\{PARTS:-([a-z ]+)\}', text).group(1).split()
    budget = int(re.search(r"BUDGET=\$\{BUDGET:-(\d+)\}", text).group(1))
    calls = re.findall(r'^#   call \d: carry \[(.+?)\],\s+PARTS="([a-z ]+)"\s+([\d +]+) = (\d+) s$', text, re.M)
    assert tuple(order) == gpu_check.PARTS == PARTS and default == order[: len(default)]
    assert [p for _, parts, _, _ in calls for p in parts.split()] == default, calls
    setup, summary = 20, 5
    for carry, parts, terms, total in calls:
        estimates = [est[3 * order.index(p)] for p in parts.split()]
        assert [int(t) for t in terms.split(" + ")] == [setup, *estimates, summary], (parts, terms)
        assert sum([setup, *estimates, summary]) == int(total) <= budget <= 590 - 20, (parts, total, budget)
        assert 3 + len(parts.split()) <= 8
    assert [c[0] for c in calls] == ['".whl"', '".whl-demo"'] and "timeout_s 590" in text
    assert f"BUDGET={budget} s" in text


def run_check(tmp_path, **env) -> tuple[subprocess.CompletedProcess, Path]:
    out, work = tmp_path / "out", tmp_path / "work"
    env = {**os.environ, "DEVICE": "cpu", "OUT": str(out), "WORK": str(work), "PYTHON": sys.executable,
           "COMMIT": "test-commit", **env}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=900), out


@pytest.mark.slow
def test_every_part_runs_on_the_cpu_and_writes_its_json(tmp_path):
    got, out = run_check(tmp_path, PARTS=" ".join(PARTS))
    log = (out / "check.log").read_text() if (out / "check.log").exists() else ""
    assert got.returncode == 0, got.stdout[-3000:] + got.stderr[-3000:]
    assert (json.loads((out / "env.json").read_text()))["fairseq_extensions"] == "import"
    records = {part: json.loads((out / f"{part}.json").read_text()) for part in PARTS}
    for part, rec in records.items():
        assert rec["status"] == "ok", (part, rec.get("note"), log[-4000:])
        assert rec["device"].startswith("cpu") and rec["torch"] and rec["commit"] == "test-commit" and rec["date"]
        assert rec["has_result"] and rec["seconds"] >= 0 and rec["estimate_s"] > 0
    pre = records["pretrain"]
    assert pre["tokens_per_s"]["fairseq"] > 0 and len(pre["blocks_tokens_per_s"]["plain"]) == 5
    assert pre["agreement"]["ok"] and pre["after_timing"]["ok"]
    jobs = records["jobs"]["jobs"]
    assert set(jobs) == {"bf16_job", "fp16_sigterm_job"}
    done, killed = jobs["bf16_job"], jobs["fp16_sigterm_job"]
    # on a CPU the job runs fp32 (no --autocast), eagerly; its timings are this machine's to say
    assert done["rc"] == 0 and done["checks"]["trained_to_the_end"] and done["precision_options"] == []
    assert done["updates_logged"] == done["max_updates"] and done["exit_s"] is not None
    assert killed["rc"] != 0 and killed["checks"]["stopped_with_message"] and killed["checks"]["checkpoint_kept"]
    for job in (done, killed):
        assert job["checks"]["no_process_left_10s_after"] and not job["survivors_after_10s"], job
    # the parts of several benchmark runs count what they merged (the CPU's 2 grid rows, 1 A/B run)
    assert "2 of 2 row(s) measured" in records["grid"]["note"] and "1 of 1 run(s) measured" in records["ab"]["note"]
    flow = records["workflow"]  # on a CPU the demo's jobs planned: make demo GPUS=1 as a dry run
    assert flow["dry_run"] and flow["jobs_planned"] == 212 and flow["failed_rules"] == [] and flow["table1"] is None
    ab = records["ab"]["runs"]
    assert [(r["ab"]["sdpa"], r["ab"]["adamw"]) for r in ab] == [("math", "foreach")]
    assert all(r["agreement"]["ok"] and r["engines"] == ["fairseq", "plain"] for r in ab)
    assert pre["engines"] == ["fairseq", "plain", "transformers"] and pre["tokens_per_s"]["transformers"] > 0
    rows = records["grid"]["rows"]
    assert [(r["task"], r["batch_size"], r["cells"]) for r in rows] == [("xnli", 4, 9), ("ner", 16, 3)]
    assert all(r["examples_per_s"]["grid"] > 0 and r["agreement"]["ok"] for r in rows)
    assert all("peak_memory_gb" in r and "memory_after_release_gb" in r for r in rows)  # None on a CPU
    tests = records["tests"]
    assert tests["counts"]["skipped"] >= 1 and tests["counts"]["failed"] == tests["counts"]["error"] == 0
    # the budget plans from them as from the benchmarks' own files
    assert rates.rate_from_benchmark(out / "pretrain.json").flops_per_s == pytest.approx(pre["achieved_flops_per_s"])
    summary = (out / "summary.txt").read_text()
    assert summary.startswith(f"PASS: {len(PARTS)} part(s) passed") and "test-commit" in summary
    assert all(part.upper() in summary for part in PARTS) and "212 jobs planned (a dry run: none run)" in summary
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["check.log", "summary.txt", "env.json", *(f"{p}.json" for p in PARTS)])


def test_a_failing_gpu_test_fails_the_check(tmp_path):
    """The script's exit status and the summary's first line are the verdict: a GPU test that
    fails makes both say so, with the test's name."""
    failing = ROOT / "tests" / "data" / "gpu_check_failing.py"
    got, out = run_check(tmp_path, PARTS="tests", TESTS_OVERRIDE=f"{failing}::test_a_gpu_test_that_fails")
    summary = (out / "summary.txt").read_text()
    assert got.returncode == 1, got.stdout[-2000:] + got.stderr[-2000:]
    assert summary.startswith("FAIL: tests failed") and "test_a_gpu_test_that_fails" in summary.splitlines()[0]
    cases = json.loads((out / "tests.json").read_text())["cases"]
    assert [(c["test"].split("::")[-1], c["outcome"]) for c in cases] == [("test_a_gpu_test_that_fails", "failed")]


def test_the_verdict_of_each_kind_of_failure(tmp_path):
    """PASS only when every part asked for passed and no test or job check failed; a skipped part
    is said but does not fail the check."""
    def write(part, **rec):
        gpu_check.write_json(tmp_path / f"{part}.json", {"status": "ok", "seconds": 1, **rec})

    write("tests", counts={"passed": 2}, cases=[{"test": "t::a", "outcome": "passed"}])
    write("grid", status="skipped")
    write("pretrain")
    assert gpu_check.verdict(tmp_path, ["tests", "grid", "pretrain"]) == (True, [])
    text, ok = gpu_check.summary(tmp_path, ["tests", "grid", "pretrain"])
    assert ok and text.startswith("PASS: 2 part(s) passed, skipped: grid")
    write("pretrain", status="failed", note="exit status 1")
    write("tests", counts={"failed": 1}, cases=[{"test": "tests.test_gpu::test_x", "outcome": "failed"}])
    write("jobs", jobs={"bf16_job": {"checks": {"trained_to_the_end": False}}})
    ok, why = gpu_check.verdict(tmp_path, ["tests", "grid", "pretrain", "jobs"])
    assert not ok and why == ["1 GPU test(s) failed: test_x", "pretrain failed (exit status 1)",
                              "jobs: bf16_job ['trained_to_the_end']", "skipped: grid"]
    assert gpu_check.verdict(tmp_path, ["tests", "pretrain", "jobs"])[1][-1] != "skipped: grid"
    assert not gpu_check.verdict(tmp_path / "none", ["tests"])[0]  # no record is no pass


def test_make_test_gpu_reaches_pytest_without_a_venv(tmp_path):
    """No venv, no bootstrap: the given Python (a node's python3 with the carried packages) runs
    pytest on the gpu-marked tests (here only collected)."""
    env = {**os.environ, "PYTEST_ADDOPTS": "--collect-only -p no:cacheprovider tests/test_pretrain_gpu.py"}
    got = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "test-gpu", f"VENV={tmp_path / 'none'}",
                          f"GPU_PYTHON={sys.executable}"], env=env, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stdout[-2000:] + got.stderr[-2000:]
    assert "test_gpu_step_trains_compiled_without_device_syncs" in got.stdout
    assert not (tmp_path / "none").exists() and "bootstrap" not in got.stdout + got.stderr


def collected(*args: str) -> list[str]:
    """The gpu-marked tests pytest collects from ``args`` (none: the whole suite), in its order."""
    got = subprocess.run([sys.executable, "-m", "pytest", "-q", "--co", "-p", "no:cacheprovider", "-m", "gpu", *args],
                         cwd=ROOT, env={**os.environ, "PYTEST_ADDOPTS": ""}, capture_output=True, text=True,
                         timeout=300)
    assert got.returncode == 0, got.stdout[-2000:] + got.stderr[-2000:]
    return [line for line in got.stdout.splitlines() if "::" in line]


@pytest.mark.slow
def test_the_tests_part_names_every_gpu_test_once():
    """The GPU run's TESTS list (node ids in the order they run) collects every gpu-marked test of
    the suite, each once: a new GPU test is not left out of the window."""
    text = SCRIPT.read_text()
    cuda = text[text.index("if [[ $DEVICE == cuda ]]; then"):text.index("else  # the same parts at tiny shapes")]
    block = cuda[cuda.index("  STEP="):cuda.index("  EST=")]
    names = subprocess.run(["bash", "-c", block + '\nprintf "%s\\n" "${TESTS[@]}"'], capture_output=True,
                           text=True, check=True).stdout.split()
    ordered, every = collected(*names), collected()
    assert len(ordered) == len(set(ordered)) and sorted(ordered) == sorted(every), ordered
    # make test-gpu's files (GPU_TESTS: it collects those alone, not the whole suite) hold every one
    files = re.search(r"^GPU_TESTS \?= (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1).split()
    assert sorted(collected(*files)) == sorted(every)


GROUP_DUMP = """
import json
from support.xdist_groups import group_of

def pytest_collection_finish(session):
    print("GROUPS " + json.dumps([[i.nodeid, group_of(i), i.get_closest_marker("slow") is not None,
                                    i.get_closest_marker("gpu") is not None] for i in session.items]))
"""


def test_make_test_gpu_spreads_each_gpu_test_on_its_own_slow_ones_first(tmp_path):
    """Under pytest-xdist (as a worker orders its collection) every GPU test is its own group, so
    that the workers of make test-gpu share them out, the slow ones first; another test stays in
    its file's group."""
    (tmp_path / "groupdump.py").write_text(GROUP_DUMP)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT / "tests"), str(ROOT / "src")]),
           "PYTEST_ADDOPTS": "", "PYTEST_XDIST_WORKER": "gw0"}
    got = subprocess.run([sys.executable, "-m", "pytest", "-q", "--co", "-p", "no:cacheprovider", "-p", "groupdump",
                          "-m", "gpu or not gpu", "tests/test_finetune.py", "tests/test_pretrain_gpu.py"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    line = next((x for x in got.stdout.splitlines() if x.startswith("GROUPS ")), None)
    assert line, got.stdout[-2000:] + got.stderr[-2000:]
    items = json.loads(line[len("GROUPS "):])
    gpu = [(node, group, slow) for node, group, slow, is_gpu in items if is_gpu]
    assert len(gpu) == 5 and all(group == node for node, group, _ in gpu), gpu
    assert all(group == "tests/test_finetune.py" for node, group, _, is_gpu in items if not is_gpu)
    # the four compiled steps (slow) start before the tiny fine-tune (seconds)
    order = [node for node, *_ in items]
    slow = [order.index(node) for node, _, s in gpu if s]
    assert len(slow) == 4 and max(slow) < order.index("tests/test_finetune.py::test_tiny_finetune_on_cuda")


def test_pytests_report_becomes_the_tests_json(tmp_path):
    report = tmp_path / "tests.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.test_a" name="test_ok" time="1.5"/>'
        '<testcase classname="tests.test_a" name="test_bad" time="2"><failure message="assert 1 == 2"/></testcase>'
        '<testcase classname="tests.test_b" name="test_gpu" time="0"><skipped message="needs a CUDA device"/>'
        '</testcase><testcase time="0.001"/></testsuite></testsuites>')
    rec = gpu_check.tests_record(report)
    assert rec["counts"] == {"passed": 1, "failed": 1, "error": 1, "skipped": 1, "cut": 0}
    assert rec["cases"][1] == {"test": "tests.test_a::test_bad", "outcome": "failed", "seconds": 2.0,
                               "message": "assert 1 == 2"}
    # the case pytest wrote with no name (an interrupted session) is named and passes nothing
    assert rec["cases"][3]["test"] == "unnamed case 4 of the report" and rec["cases"][3]["outcome"] == "error"
    assert all(c["test"] and "None" not in c["test"] for c in rec["cases"])
    assert "no report" in gpu_check.tests_record(tmp_path / "missing.xml")["error"]


def test_a_case_pytest_left_unnamed_takes_the_running_tests_name_and_counts_as_cut(tmp_path):
    report, running = tmp_path / "tests.xml", tmp_path / "tests.running"
    report.write_text('<testsuites><testsuite name="pytest"><testcase classname="tests.test_gpu" name="test_a[x]" '
                      'time="3"/><testcase time="0.001"/></testsuite></testsuites>')
    running.write_text("tests/test_gpu.py::test_b[parsing]\n")
    rec = gpu_check.tests_record(report, running)
    assert rec["counts"] == {"passed": 1, "failed": 0, "error": 0, "skipped": 0, "cut": 1}
    assert rec["cases"][1]["test"] == "tests.test_gpu::test_b[parsing]" and rec["cases"][1]["outcome"] == "cut"
    # a running test the report already named (it finished) names no other case
    running.write_text("tests/test_gpu.py::test_a[x]\n")
    assert gpu_check.tests_record(report, running)["cases"][1]["outcome"] == "error"


def interrupted_session(tmp_path, tests: str, long: int, *args: str) -> dict:
    """pytest on ``tests`` (a module's text), stopped by SIGINT (what `timeout -s INT` sends at a
    part's limit) once ``long`` tests are running; the tests part's record of its report."""
    (tmp_path / "test_cut.py").write_text(tests)
    running, report = tmp_path / "tests.running", tmp_path / "tests.xml"
    env = {**os.environ, "XLING_RUNNING_TEST": str(running), "PYTHONPATH": str(ROOT / "tests")}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                             "support.running_test", f"--junitxml={report}", *args, "test_cut.py"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    # Deadlines, not counts of polls: under a loaded suite pytest-xdist takes tens of seconds to bring
    # up its workers and to take them down, and an interrupt sent before both long tests run tests
    # nothing. The long tests sleep past both deadlines, so a session that ran them out passes no check.
    try:
        start = time.monotonic()
        while not (running.is_file() and running.read_text().count("test_long") == long):
            assert proc.poll() is None and time.monotonic() - start < 240, \
                f"pytest never ran {long} long tests at once: {proc.poll()=}"
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out = proc.communicate(timeout=240)[0].decode()
    finally:
        proc.kill()
    rec = gpu_check.tests_record(report, running)
    rec["output"] = out
    return rec


CUT = "import time\n\ndef test_quick():\n    pass\n\ndef test_long():\n    time.sleep(900)\n\n"


def test_an_interrupted_pytest_session_names_the_test_it_cut(tmp_path):
    """pytest itself, interrupted in the middle of a test: its junit report leaves that test
    unnamed, and the check names it."""
    rec = interrupted_session(tmp_path, CUT + "def test_never():\n    pass\n", 1)
    assert [(c["test"], c["outcome"]) for c in rec["cases"]] == [
        ("test_cut::test_quick", "passed"), ("test_cut::test_long", "cut")], rec["output"]


def test_an_interrupted_parallel_session_names_every_test_it_cut(tmp_path):
    """make test-gpu runs its tests on several pytest-xdist workers: an interrupt cuts each test
    running, the report leaves each unnamed, and the check names every one (the controller keeps
    the running tests; a worker writes nothing)."""
    rec = interrupted_session(tmp_path, CUT + "def test_long2():\n    time.sleep(900)\n", 2, "-n", "2")
    outcomes = sorted((c["test"], c["outcome"]) for c in rec["cases"])
    assert outcomes == [("test_cut::test_long", "cut"), ("test_cut::test_long2", "cut"),
                        ("test_cut::test_quick", "passed")], rec["output"]
    assert rec["counts"]["error"] == 0


def test_the_workflows_log_becomes_its_json_and_its_table1_the_summarys(tmp_path):
    """The workflow part: the jobs Snakemake says it did of those it planned, the rules that
    failed, and the run's Table 1 and ledger as text (a window returns 8 files at most)."""
    log = tmp_path / "workflow.log"
    log.write_text("Job stats:\njob    count\ntotal      212\n\n3 of 212 steps (1%) done\nError in rule pretrain:\n"
                   "    jobid: 7\nError in rule pretrain:\n210 of 212 steps (99%) done\n")
    report = tmp_path / "results" / "report"
    report.mkdir(parents=True)
    (report / "table1.md").write_text("# Table 1\n\n| Model | XNLI (Acc) fr |\n|---|---:|\n| Default | 37.7 |\n")
    rec = gpu_check.workflow_record(log, tmp_path / "results")
    assert rec == {"dry_run": False, "jobs_done": 210, "jobs_planned": 212, "failed_rules": ["pretrain"],
                   "table1": (report / "table1.md").read_text(), "compute_ledger": None}
    planned = tmp_path / "dry.log"
    planned.write_text("Job stats:\njob    count\nall    1\ntotal      212\n\nThis was a dry-run (flag -n).\n")
    assert gpu_check.workflow_record(planned, tmp_path / "none") == {
        "dry_run": True, "jobs_done": 0, "jobs_planned": 212, "failed_rules": [], "table1": None,
        "compute_ledger": None}
    gpu_check.write_json(tmp_path / "workflow.json", {"status": "failed", "seconds": 300, "has_result": True, **rec})
    text, ok = gpu_check.summary(tmp_path, ["workflow"])
    assert not ok and "210 of 212 jobs done; FAILED rules: ['pretrain']" in text and "  | Default | 37.7 |" in text


def test_the_grids_rows_merge_in_order(tmp_path):
    files = []
    for i, task in enumerate(["xnli", "ner"]):
        files.append(tmp_path / f"grid.{task}.json")
        gpu_check.write_json(files[-1], {"device": "cpu", "rows": [{"task": task, "i": i}]})
    merged = gpu_check.merge_rows(tmp_path / "grid.raw.json", files + [tmp_path / "cut_short.json"])
    assert [r["task"] for r in merged["rows"]] == ["xnli", "ner"] and merged["device"] == "cpu"


def test_no_file_under_bench_names_an_issue():
    """Comments say what a change did, not which issue asked for it."""
    named = [p.name for p in (ROOT / "bench").iterdir()
             if p.is_file() and p.suffix in (".py", ".sh") and re.search(r"\b[Ii]ssues? \d+", p.read_text())]
    assert not named
