"""The pretraining rule (workflow/scripts/pretrain.py under Snakemake): a job killed after
its first checkpoint is rerun by Snakemake and resumes instead of starting over."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

# the rule as workflow/rules/pretrain.smk states it (paths shortened)
SNAKEFILE = """
configfile: "config.yaml"

rule pretrain:
    input:
        dictionary="bin/{setting}/{pair}/dict.txt",
    output:
        done="pretrain/{setting}/{pair}/done.json",
        best="pretrain/{setting}/{pair}/checkpoint_best.pt",
    params:
        data_dirs=lambda w: [f"bin/{w.setting}/{w.pair}"],
        setting=lambda w: config["settings"][w.setting],
        model=config["model"],
        pretrain=config["pretrain"],
        languages=lambda w: w.pair.split("-"),
        seed=1,
    threads: 1
    resources:
        gpus=0,
    log:
        "logs/pretrain/{setting}/{pair}.log",
    script:
        "%s"
""" % (ROOT / "workflow" / "scripts" / "pretrain.py")


def snakemake(workdir, *extra, **popen):
    cmd = [sys.executable, "-m", "snakemake", "--cores", "1", "--directory", str(workdir),
           "-s", str(workdir / "Snakefile"), "pretrain/sep_l1_3/en-fr/done.json", *extra]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen)


def test_killed_job_resumes_when_the_rule_reruns(tmp_path):
    write_toy_data(tmp_path / "bin" / "sep_l1_3" / "en-fr", ["en", "fr"], n_train=60, seed=1)
    model = dict(TINY_MODEL, layers=4, dim=32, ffn_dim=128, tokens_per_sample=32)
    pretrain = dict(TINY_PRETRAIN, batch_size_per_gpu=8, streams_per_epoch_per_gpu=120, max_epoch=2,
                    save_interval_updates=5)
    config = {"settings": {"sep_l1_3": {"separate": {"embeddings": False, "layers": 3}}},
              "model": model, "pretrain": pretrain}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    out = tmp_path / "pretrain" / "sep_l1_3" / "en-fr"

    # kill the whole job (Snakemake and fairseq) once a checkpoint exists, as a scheduler would
    proc = snakemake(tmp_path, start_new_session=True)
    deadline = time.time() + 150
    while not (out / "fairseq" / "checkpoint_last.pt").exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, proc.stdout.read()
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "done.json").exists()

    # the killed Snakemake left its lock, as after a node failure
    assert snakemake(tmp_path, "--unlock").wait(timeout=120) == 0
    rerun = snakemake(tmp_path, "--rerun-incomplete")
    log_text, _ = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, log_text
    done = json.loads((out / "done.json").read_text())
    best = out / "checkpoint_best.pt"
    assert Path(done["checkpoint_best"]).name == best.name and best.exists()
    assert best.stat().st_ino == (out / "fairseq" / "checkpoint_best.pt").stat().st_ino  # a link, no copy
    assert done["updates"] == 30 and done["invocations"] == 2
    log = (out / "train.log").read_text()
    resumed = re.findall(r"Loaded checkpoint \S+checkpoint_last\.pt \(epoch \d+ @ (\d+) updates\)", log)
    assert len(resumed) == 1 and 0 < int(resumed[0]) < 30
    job_log = (tmp_path / "logs" / "pretrain" / "sep_l1_3" / "en-fr.log").read_text()
    # (Snakemake clears the killed attempt's log; fairseq's train.log keeps both)
    assert job_log.count(" start on no GPU(s)") == 1 and '"updates": 30' in job_log
