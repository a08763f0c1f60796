"""bench/gpu_check.sh, the one command a GPU window runs first, at tiny shapes on the CPU (its parts
cannot rot between windows: every part runs and every JSON is written and parsed); its own time
estimate fits the 8 minutes a window leaves it; `make test-gpu` reaches pytest without a venv (a
GPU node has Python 3.12 and no index: scripts/bootstrap.sh cannot run there); pytest's report
becomes the tests part's JSON."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "gpu_check.sh"
sys.path.insert(0, str(ROOT / "bench"))
import gpu_check  # noqa: E402

from xling.cluster import budget  # noqa: E402

PARTS = ("pretrain", "jobs", "grid", "tests")


def test_the_scripts_own_estimate_fits_eight_minutes():
    """The GPU parts' estimates (the first EST list: estimate, minimum, cap per part) with the
    setup and the summary fit its budget, and the budget the call's 480 s."""
    text = SCRIPT.read_text()
    est = [int(v) for v in re.search(r"EST=\(([\d ]+)\)", text).group(1).split()]
    estimates = est[0:9:3] + [est[9]]  # pretrain, jobs, grid, tests
    budget = int(re.search(r"BUDGET=\$\{BUDGET:-(\d+)\}", text).group(1))
    setup, summary = 30, 5
    assert setup + sum(estimates) + summary <= budget <= 480 - 20, (estimates, budget)
    assert "timeout_s 480" in text and f"BUDGET={budget} s" in text


@pytest.mark.slow
def test_every_part_runs_on_the_cpu_and_writes_its_json(tmp_path):
    out, work = tmp_path / "out", tmp_path / "work"
    env = {**os.environ, "DEVICE": "cpu", "OUT": str(out), "WORK": str(work), "PYTHON": sys.executable,
           "COMMIT": "test-commit"}
    env.pop("PYTEST_ADDOPTS", None)
    got = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=600)
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
    jobs = records["jobs"]["jobs"]
    assert set(jobs) == {"bf16_job", "fp16_sigterm_job"}
    done, killed = jobs["bf16_job"], jobs["fp16_sigterm_job"]
    # on a CPU the job runs fp32 (no --autocast), eagerly; its timings are this machine's to say
    assert done["rc"] == 0 and done["checks"]["trained_to_the_end"] and done["precision_options"] == []
    assert done["updates_logged"] == done["max_updates"] and done["exit_s"] is not None
    assert killed["rc"] != 0 and killed["checks"]["stopped_with_message"] and killed["checks"]["checkpoint_kept"]
    for job in (done, killed):
        assert job["checks"]["no_process_left_10s_after"] and not job["survivors_after_10s"], job
    row = records["grid"]["rows"][0]
    assert row["task"] == "xnli" and row["cells"] == 9 and row["examples_per_s"]["grid"] > 0
    assert "peak_memory_gb" in row and "memory_after_release_gb" in row  # None on a CPU
    tests = records["tests"]
    assert tests["counts"]["skipped"] >= 1 and tests["counts"]["failed"] == tests["counts"]["error"] == 0
    # the budget plans from them as from the benchmarks' own files
    assert budget.rate_from_benchmark(out / "pretrain.json").flops_per_s == pytest.approx(pre["achieved_flops_per_s"])
    summary = (out / "summary.txt").read_text()
    assert all(part.upper() in summary for part in PARTS) and "test-commit" in summary
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["check.log", "summary.txt", "env.json", *(f"{p}.json" for p in PARTS)])  # at most 8 files come back


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
    block = cuda[cuda.index("  STEP="):]
    names = subprocess.run(["bash", "-c", block + '\nprintf "%s\\n" "${TESTS[@]}"'], capture_output=True,
                           text=True, check=True).stdout.split()
    ordered = collected(*names)
    assert len(ordered) == len(set(ordered)) and sorted(ordered) == sorted(collected()), ordered


def test_pytests_report_becomes_the_tests_json(tmp_path):
    report = tmp_path / "tests.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.test_a" name="test_ok" time="1.5"/>'
        '<testcase classname="tests.test_a" name="test_bad" time="2"><failure message="assert 1 == 2"/></testcase>'
        '<testcase classname="tests.test_b" name="test_gpu" time="0"><skipped message="needs a CUDA device"/>'
        '</testcase></testsuite></testsuites>')
    rec = gpu_check.tests_record(report)
    assert rec["counts"] == {"passed": 1, "failed": 1, "error": 0, "skipped": 1}
    assert rec["cases"][1] == {"test": "tests.test_a::test_bad", "outcome": "failed", "seconds": 2.0,
                               "message": "assert 1 == 2"}
    assert "no report" in gpu_check.tests_record(tmp_path / "missing.xml")["error"]


def test_no_file_under_bench_names_an_issue():
    """Comments say what a change did, not which issue asked for it."""
    named = [p.name for p in (ROOT / "bench").iterdir()
             if p.is_file() and p.suffix in (".py", ".sh") and re.search(r"\b[Ii]ssues? \d+", p.read_text())]
    assert not named
