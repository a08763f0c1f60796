"""End to end on CPU: a tiny run killed after its first checkpoint resumes from
checkpoint_last.pt and ends at the same update count as an uninterrupted run; the
checkpoint loads through the loader API."""

import json
import re
import signal
import subprocess
import time

import pytest
import torch

from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data
from xling.model.checkpoint import load_encoder
from xling.pretrain.command import fairseq_train_command
from xling.pretrain.job import PretrainJob
from xling.pretrain.processes import fairseq_env, resolve_executable
from xling.pretrain.run import run_pretraining
from xling.pretrain.schedule import schedule

pytestmark = pytest.mark.slow

MODEL = dict(TINY_MODEL, layers=4, dim=32, ffn_dim=128, tokens_per_sample=32)
# 20 updates per epoch (160 streams / 8), saved every 5
PRETRAIN = dict(TINY_PRETRAIN, batch_size_per_gpu=8, streams_per_epoch_per_gpu=160, max_epoch=2,
                save_interval_updates=5, tensorboard=True)
SETTING = {"separate": {"embeddings": True, "layers": 1}}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_toy_data(tmp_path_factory.mktemp("bin") / "en-fr", ["en", "fr"], n_train=80, seed=2)


def command(data_dir, save_dir):
    job = PretrainJob.build(data_dir, SETTING, MODEL, PRETRAIN, ["en", "fr"], 1)
    return fairseq_train_command(job, save_dir)


def test_uninterrupted_and_killed_runs_end_alike(data_dir, tmp_path):
    total = schedule(PRETRAIN, MODEL).max_updates
    assert total == 40
    # uninterrupted
    a = tmp_path / "a"
    done_a = run_pretraining(command(data_dir, a), a, ["en", "fr"], total, a / "train.log", a / "done.json",
                             threads=1)
    assert done_a["updates"] == total and done_a["invocations"] == 1
    assert json.loads((a / "done.json").read_text()) == done_a
    assert set(done_a["valid_ppl"]) == {"en", "fr"} and done_a["best_valid_ppl_en"] > 1
    assert done_a["tokens_per_s"] > 0 and (a / "checkpoint_best.pt").exists()
    # fairseq also logged to TensorBoard (tensorboardX) beside the save dir: train and valid runs
    events = {p.parent.name for p in (tmp_path / "tensorboard").rglob("events.out.tfevents*")}
    assert {"train", "valid_en"} <= events, events

    # killed once its first checkpoint exists
    b = tmp_path / "b"
    b.mkdir()
    with open(b / "train.log", "a") as log:
        proc = subprocess.Popen(resolve_executable(command(data_dir, b)), stdout=log, stderr=subprocess.STDOUT,
                                env=fairseq_env(1))
        deadline = time.time() + 120
        while not (b / "checkpoint_last.pt").exists() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert not (b / "done.json").exists()
    done_b = run_pretraining(command(data_dir, b), b, ["en", "fr"], total, b / "train.log", b / "done.json",
                             threads=1)
    log = (b / "train.log").read_text()
    loaded = r"Loaded checkpoint \S+checkpoint_last\.pt \(epoch \d+ @ (\d+) updates\)"
    resumed = [int(n) for n in re.findall(loaded, log)]
    assert len(resumed) == 1 and 0 < resumed[0] < total, "the rerun did not continue the killed run"
    # the counter continues from the checkpoint rather than restarting at 1
    updates_after = [int(n) for n in re.findall(r'"num_updates": "(\d+)"', log.split("Loaded checkpoint")[1])]
    assert updates_after and min(updates_after) > resumed[0]
    assert done_b["updates"] == done_a["updates"] == total
    # nothing redone or skipped: the resumed run validates exactly like the uninterrupted one
    assert done_b["valid_ppl"] == done_a["valid_ppl"]

    # a finished run is left as it is
    again = run_pretraining(command(data_dir, b), b, ["en", "fr"], total, b / "train.log", b / "done.json",
                             threads=1)
    assert again["updates"] == total and (b / "train.log").read_text() == log

    # the loader API on the best checkpoint
    enc = load_encoder(a / "checkpoint_best.pt")
    assert enc.languages == ["en", "fr"] and enc.num_layers == 4 and enc.dim == 32
    d = enc.dictionary
    tokens = torch.tensor([[d.bos(), d.index("fr3"), d.index("fr7"), d.eos(), d.pad()]])
    states = enc.encode(tokens, "fr")
    assert len(states) == 1 + 4 and all(s.shape == (1, 5, 32) for s in states)
    # language-specific parts are selected: the same ids through en's embeddings differ
    assert not torch.allclose(states[0], enc.encode(tokens, "en")[0])
    assert {id(p) for p in enc.language_specific_parameters("fr")}.isdisjoint(
        {id(p) for p in enc.shared_parameters()})
    with pytest.raises(KeyError):
        enc.lang_id("de")
