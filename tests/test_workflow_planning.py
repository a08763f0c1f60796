"""Planning the workflow (a dry run, a SLURM job's re-parse, a report from a bundle): what it
imports, and the pretraining jobs it plans, for the demo and the paper config.

What was planned is recorded in tests/data (from ``support.plan_probe``'s output; recorded anew
when every fine-tuning job became a grid job, the demo's ``finetune`` rule ``finetune_grid_<task>``;
when the paper config's pretraining became bf16, its commands' ``--autocast fp16 --loss-scaling``
``--autocast bf16``; when a pretraining job came to track every key of its sections, the
schema's defaults included, its commands unchanged; and when Figure 6's job gained its
random-encoder baseline, ``analysis_retrieval``'s ``random_seed``): ``planned_params.json``, each rule's jobs
and a digest of their outputs and params as Snakemake tracks them; ``pretrain_commands.json``,
every pretraining job's params and the fairseq-train command lines its job starts
(``python -m support.pretrain_commands``). A change to how jobs are typed and commands built
must leave both as they were: a finished job stays finished, and a resumed model gets the
command it was started with. (A change meant to alter
what jobs compute records them anew.)
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
PLANNED = TESTS / "data" / "planned_params.json"


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


def test_planning_imports_neither_torch_nor_fairseq(planned):
    """A dry run, a report from a bundle and each SLURM job's re-parse plan without them (and
    without scipy or sacremoses)."""
    for name in CONFIGS:
        assert planned[name]["imported"] == [], f"{name}: planning imported {planned[name]['imported'][:5]}"


def test_every_job_keeps_its_params(planned):
    expected = json.loads(PLANNED.read_text(encoding="utf-8"))
    for name in CONFIGS:
        got = planned[name]["rules"]
        changed = {rule: (expected[name].get(rule), got.get(rule)) for rule in {*expected[name], *got}
                   if expected[name].get(rule) != got.get(rule)}
        assert not changed, f"{name}: rules whose jobs or params changed ([jobs, digest] before, after): {changed}"


def test_the_config_imports_no_stage():
    """xling.config is the layer every stage reads: it imports none of them (and no torch)."""
    stages = sorted(p.name for p in (ROOT / "src" / "xling").iterdir() if (p / "__init__.py").exists()
                    and p.name != "config")
    code = "import sys, xling.config; print(' '.join(sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert not [m for m in loaded if m.split(".")[:2][-1] in stages and m.startswith("xling.")]
    assert "torch" not in loaded
