"""`make demo GPUS=1` / `make demo-full GPUS=1` (a one-GPU workstation), `make test-gpu` and
`make wheelhouse PY=...`: the commands the Makefile runs, and the overlay config/gpu1.yaml."""

import shutil
import subprocess

import pytest

from xling import config as xcfg
from xling.cluster.resources import rule_resources

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def make_n(*args: str) -> subprocess.CompletedProcess:
    got = subprocess.run(["make", "-n", "-C", str(xcfg.REPO), *args], capture_output=True, text=True)
    got.stdout = " ".join(got.stdout.replace("\\\n", " ").split())  # one line, single spaces
    return got


@pytest.mark.parametrize("target,configs", [("demo", "config/demo.yaml"),
                                            ("demo-full", "config/demo.yaml config/demo_full.yaml")])
def test_a_gpu_demo_adds_the_overlay_and_places_on_the_gpu(target, configs):
    plain = make_n(target, "VENV=/nonexistent").stdout
    gpu = make_n(target, "GPUS=1", "GPU_JOBS=3", "VENV=/nonexistent").stdout
    assert f"--configfile {configs} --cores" in plain and "gpu1.yaml" not in plain
    assert f"--configfile {configs} config/gpu1.yaml --resources gpu=3 --cores" in gpu


def test_the_gpu_regime_of_make_demo_full():
    """config/demo_full_gpu.yaml: the 3,000-update sentence regime with 5 pretraining seeds,
    in a results folder of its own, read after the demo's configs and before the GPU overlay."""
    from xling.pretrain.schedule import schedule

    cmd = make_n("demo-full", "GPUS=1", "CONFIG=config/demo_full_gpu.yaml", "VENV=/nonexistent").stdout
    assert ("--configfile config/demo.yaml config/demo_full.yaml config/demo_full_gpu.yaml config/gpu1.yaml "
            "--resources gpu=4") in cmd
    cfg = xcfg.load(*(xcfg.REPO / "config" / f for f in ("config.yaml", "demo.yaml", "demo_full.yaml",
                                                         "demo_full_gpu.yaml", "gpu1.yaml")))
    assert schedule(cfg["pretrain"], cfg["model"]).max_updates == 3000
    assert cfg["pretrain"]["sample_break_mode"] == "eos" and len(cfg["seeds"]["pretrain"]) == 5
    assert all("demo_full_gpu" in str(p) for p in (cfg["download"]["mirror"], cfg["licensed"]["levow_zh"]["path"]))


def test_more_than_one_local_gpu_is_refused():
    got = make_n("demo", "GPUS=2")
    assert got.returncode != 0 and "only one GPU is supported" in got.stderr


def test_test_gpu_and_wheelhouse_targets():
    assert "-m pytest -q -m gpu" in make_n("test-gpu", "VENV=/nonexistent").stdout
    assert "scripts/wheelhouse.py --python 3.12" in make_n("wheelhouse", "PY=3.12", "VENV=/nonexistent").stdout
    assert "--python" not in make_n("wheelhouse", "VENV=/nonexistent").stdout  # the venv's own version


def test_the_overlay_only_puts_pretraining_and_finetuning_on_a_gpu():
    """Only rule resources change (and pretraining's cores, for its data-loader workers): every
    job's params stay the CPU demo's, so a job finished on either machine is not rerun by the other."""
    demo = xcfg.load(xcfg.REPO / "config" / "config.yaml", xcfg.REPO / "config" / "demo.yaml")
    gpu = xcfg.load(xcfg.REPO / "config" / "config.yaml", xcfg.REPO / "config" / "demo.yaml",
                    xcfg.REPO / "config" / "gpu1.yaml")
    assert {k: v for k, v in gpu.items() if k != "rule_resources"} == {
        k: v for k, v in demo.items() if k != "rule_resources"}
    for family in gpu["rule_resources"]:
        expected = 1 if family in ("pretrain", "finetune") else demo["rule_resources"][family]["gpus"]
        assert rule_resources(gpu, family).get("gpu", 0) == expected, family
        # the rest of each family's resources are the demo's, but pretraining's cores (its loaders)
        changed = ("gpu", "nodes", "cpus_per_task") if family == "pretrain" else ("gpu", "nodes")
        assert {k: v for k, v in rule_resources(gpu, family).items() if k not in changed} == {
            k: v for k, v in rule_resources(demo, family).items() if k not in changed}
    assert rule_resources(gpu, "pretrain")["cpus_per_task"] == 3
