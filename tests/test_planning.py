"""Planning the workflow (a dry run, a SLURM job's re-parse, a report from a bundle): what it
imports, and the pretraining jobs it plans, for the demo and the paper config.

tests/data/pretrain_commands.json records every pretraining job of both configs as planned by
commit 61a6b1d: its params as Snakemake tracks them and the fairseq-train command lines its job
starts (``python -m support.pretrain_commands`` on the output of ``support.plan_probe``). A
change to how jobs are typed and commands built must leave both as they were: a finished model
stays finished, and a resumed one gets the command it was started with.
"""

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from support.pretrain_commands import record

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
CONFIGS = {"demo": [ROOT / "config" / "demo.yaml"], "paper": []}
RECORDED = TESTS / "data" / "pretrain_commands.json"


def _probe(name: str, tmp: Path) -> dict:
    out, workdir = tmp / f"{name}.json", tmp / name
    workdir.mkdir()
    proc = subprocess.run([sys.executable, "-m", "support.plan_probe", str(out), str(workdir),
                           *map(str, CONFIGS[name])], cwd=TESTS, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def planned(tmp_path_factory) -> dict[str, dict]:
    """Each config planned (targets all and liu2020) in its own fresh interpreter, side by side."""
    tmp = tmp_path_factory.mktemp("plan")
    with ThreadPoolExecutor(len(CONFIGS)) as pool:
        return dict(zip(CONFIGS, pool.map(lambda name: _probe(name, tmp), CONFIGS)))


def test_every_pretraining_job_keeps_its_params_and_its_commands(planned, tmp_path):
    expected = json.loads(RECORDED.read_text(encoding="utf-8"))
    got = record(planned, tmp_path)
    for name in CONFIGS:
        assert sorted(got[name]) == sorted(expected[name]), f"{name}: other pretraining jobs than recorded"
        for done, job in expected[name].items():
            assert got[name][done]["tracked"] == job["tracked"], f"{name} {done}: params changed"
            assert got[name][done]["commands"] == job["commands"], f"{name} {done}: command changed"
