"""done.json summary from fairseq's json log: best source-language dev ppl, per-language
ppl, tokens/s and wall time over (resumed) invocations."""

import json

import pytest
import torch

from xling.pretrain.checkpoints import checkpoint_updates, readable_updates, repair_last_checkpoint
from xling.pretrain.fairseq_log import START_MARK, parse_log, summarise


def line(stamp, tag, rec):
    return f"2026-01-01 {stamp} | INFO | {tag} | {json.dumps({k: str(v) for k, v in rec.items()})}\n"


def valid(stamp, lang, updates, loss):
    return line(stamp, f"valid_{lang}", {"epoch": 1, f"valid_{lang}_loss": loss,
                                         f"valid_{lang}_ppl": round(2 ** loss, 2),
                                         f"valid_{lang}_num_updates": updates})


def train(stamp, updates, wpb, wps):
    return line(stamp, "train", {"epoch": 1, "train_num_updates": updates, "train_wpb": wpb, "train_wps": wps})


def test_parse_and_summarise(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(
        f"{START_MARK}2026-01-01T10:00:00 resume_from_updates=0 ===\n"
        "2026-01-01 10:00:05 | INFO | fairseq_cli.train | something\n"
        + train("10:00:10", 10, 1000, 500)           # 10k tokens in 20 s
        + valid("10:00:11", "en", 10, 6.0) + valid("10:00:11", "fr", 10, 7.0)
        + "garbage line that is not json\n"
        + f"{START_MARK}2026-01-01T11:00:00 resume_from_updates=10 ===\n"
        + train("11:00:20", 30, 500, 1000)           # 10k tokens in 10 s
        + valid("11:00:30", "en", 30, 5.0) + valid("11:00:30", "fr", 30, 7.5)
        + valid("11:00:40", "en", 40, 5.5) + valid("11:00:40", "fr", 40, 6.5)
    )
    parsed = parse_log(log)
    assert parsed["invocation_wall_s"] == [11.0, 40.0]
    s = summarise(parsed["records"], ["en", "fr"])
    assert s["best_updates"] == 30 and s["best_valid_ppl_en"] == pytest.approx(32.0)
    assert s["valid_ppl_at_best"] == {"en": pytest.approx(32.0), "fr": pytest.approx(round(2 ** 7.5, 2))}
    assert s["valid_ppl"] == {"en": pytest.approx(round(2 ** 5.5, 2)), "fr": pytest.approx(round(2 ** 6.5, 2))}
    assert s["train_tokens"] == 20000 and s["tokens_per_s"] == pytest.approx(20000 / 30)


def test_summary_of_a_monolingual_log(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(f"{START_MARK}2026-01-01T10:00:00 x ===\n" + valid("10:00:02", "zh", 5, 4.0))
    s = summarise(parse_log(log)["records"], ["zh"])
    assert s["best_valid_ppl_zh"] == 16.0 and s["tokens_per_s"] is None


def _checkpoint(path, updates):
    torch.save({"optimizer_history": [{"num_updates": updates}], "model": {"w": torch.ones(3) * updates}}, path)


def test_truncated_last_checkpoint_is_restored_from_the_newest_intact_one(tmp_path):
    """fairseq copies checkpoint_<e>_<u>.pt to checkpoint_last.pt; a kill during the copy leaves it
    truncated, and resuming would fail on it every time."""
    _checkpoint(tmp_path / "checkpoint_1_5.pt", 5)
    _checkpoint(tmp_path / "checkpoint_2_10.pt", 10)
    whole = (tmp_path / "checkpoint_2_10.pt").read_bytes()
    (tmp_path / "checkpoint_last.pt").write_bytes(whole[: len(whole) // 2])
    assert readable_updates(tmp_path / "checkpoint_last.pt") is None
    msg = repair_last_checkpoint(tmp_path)
    assert "restored from checkpoint_2_10.pt" in msg
    assert checkpoint_updates(tmp_path / "checkpoint_last.pt") == 10
    assert repair_last_checkpoint(tmp_path) is None  # nothing wrong any more

    # the newest interval checkpoint itself damaged: the one before it
    (tmp_path / "checkpoint_2_10.pt").write_bytes(whole[:100])
    (tmp_path / "checkpoint_last.pt").write_bytes(b"")
    assert "checkpoint_1_5.pt" in repair_last_checkpoint(tmp_path)
    assert checkpoint_updates(tmp_path / "checkpoint_last.pt") == 5

    # nothing intact: removed, so training starts again rather than failing forever
    for p in tmp_path.glob("checkpoint_*_*.pt"):
        p.unlink()
    (tmp_path / "checkpoint_last.pt").write_bytes(b"PK\x03\x04")
    assert "restarts" in repair_last_checkpoint(tmp_path)
    assert not (tmp_path / "checkpoint_last.pt").exists()


def test_updates_are_read_without_torch_from_a_checkpoint_like_fairseqs(tmp_path):
    """fairseq's checkpoint holds its config objects, tensors and the optimizer's state beside
    optimizer_history; the count comes out equal to torch.load's, in a process that never imports
    torch (the launching job only reads it)."""
    import argparse
    import collections
    import subprocess
    import sys

    from omegaconf import OmegaConf

    state = {
        "args": argparse.Namespace(lr=[0.001], arch="xling_mlm"),
        "cfg": OmegaConf.create({"optimization": {"max_update": 37, "lr": [0.001]}}),
        "model": collections.OrderedDict(w=torch.randn(4, 3), b=torch.zeros(3, dtype=torch.half)),
        "optimizer_history": [{"num_updates": 12}, {"criterion_name": "MaskedLmLoss", "num_updates": 37}],
        "last_optimizer_state": {"state": {0: {"exp_avg": torch.ones(4, 3), "step": torch.tensor(37.0)}}},
        "extra_state": {"train_iterator": {"epoch": 2}, "best": 5.25},
    }
    path = tmp_path / "checkpoint_last.pt"
    torch.save(state, path)
    assert checkpoint_updates(path) == 37
    probe = ("import sys; from pathlib import Path; from xling.pretrain.checkpoints import checkpoint_updates; "
             f"n = checkpoint_updates(Path({str(path)!r})); print(n, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["37", "False"]


def _trained_checkpoint(tmp_path, path, resume=None, n_gpus=1):
    """A checkpoint as fairseq writes it, after two updates of the tiny model on the CPU, from the
    command of a GPU run (or of older code, ``resume``)."""
    from support.inprocess import build_trainer
    from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data
    from xling.pretrain.command import fairseq_train_command
    from xling.pretrain.job import PretrainJob

    data = write_toy_data(tmp_path / "bin", ["en", "fr"], n_train=60, seed=2)
    model = dict(TINY_MODEL, layers=2, dim=32, ffn_dim=64, tokens_per_sample=32)
    job = PretrainJob.build(data, {"separate": {"embeddings": True, "layers": 0}}, model,
                            dict(TINY_PRETRAIN, precision="fp16"), ["en", "fr"], 1)
    cmd = fairseq_train_command(job, tmp_path / "ck", n_gpus, resume=resume)
    cfg, task, trainer = build_trainer(cmd)
    itr = trainer.get_train_iterator(epoch=1).next_epoch_itr(shuffle=True)
    for _ in range(2):
        trainer.train_step([next(itr)])
    trainer.consolidate_optimizer()  # as fairseq-train does before it saves
    trainer.save_checkpoint(str(path), {})
    return cmd


def test_layout_of_checkpoints_of_older_and_current_code(tmp_path, monkeypatch):
    """A run started by older code (fairseq's --fp16, unpadded tables) resumes with the layout it
    was started with: read from its checkpoint without torch, it gives a command whose trainer
    loads that checkpoint, which the current layout's trainer cannot."""
    import subprocess
    import sys

    from support.inprocess import build_trainer
    from xling.pretrain.checkpoints import checkpoint_layout, resume_layout
    from xling.pretrain.command import ResumeLayout

    monkeypatch.setattr(torch.cuda, "current_device", lambda: None)  # FP16Optimizer on a CPU
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # as fairseq_env gives fairseq-train
    save = tmp_path / "ck"
    save.mkdir()
    old = save / "checkpoint_1_2.pt"
    legacy = ResumeLayout(vocab_multiple=1, fairseq_fp16=True)
    _trained_checkpoint(tmp_path, old, resume=legacy)
    assert checkpoint_layout(old) == legacy
    probe = ("import sys; from pathlib import Path; from xling.pretrain.checkpoints import checkpoint_layout; "
             f"print(checkpoint_layout(Path({str(old)!r})), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split()[-1] == "False" and "fairseq_fp16=True" in out and "vocab_multiple=1" in out
    # checkpoint_last.pt truncated by a kill: the interval checkpoint it would be restored from
    (save / "checkpoint_last.pt").write_bytes(old.read_bytes()[:1000])
    assert resume_layout(save) == legacy and resume_layout(tmp_path / "nothing") is None

    new = tmp_path / "new.pt"
    current = _trained_checkpoint(tmp_path, new)
    assert checkpoint_layout(new) == ResumeLayout(vocab_multiple=64, fairseq_fp16=False)
    with pytest.raises(Exception, match="architectures match"):
        build_trainer(current)[2].load_checkpoint(str(old))
    resumed = _trained_checkpoint(tmp_path, tmp_path / "unused.pt", resume=legacy)
    trainer = build_trainer(resumed)[2]
    assert trainer.load_checkpoint(str(old)) is not None and trainer.get_num_updates() == 2


def test_checkpoints_of_other_params_are_not_resumed(tmp_path):
    """fairseq's checkpoints outlive Snakemake's deletion of a job's outputs so that a killed job
    resumes; a job rerun because its params changed starts afresh, its predecessor's checkpoints
    and log moved aside, instead of publishing the other model."""
    from xling.pretrain.save_dir import JOB_RECORD, claim_save_dir

    save, log = tmp_path / "fairseq", tmp_path / "train.log"
    assert claim_save_dir(save, log, "A\n", 10) is None  # a new job: its record is kept
    assert (save / JOB_RECORD).read_text() == "A\n"
    _checkpoint(save / "checkpoint_last.pt", 4)
    log.write_text("A's log\n")
    assert claim_save_dir(save, log, "A\n", 10) is None  # killed at 4 updates: resumed
    assert checkpoint_updates(save / "checkpoint_last.pt") == 4
    note = claim_save_dir(save, log, "B\n", 10)  # the rerun of other params
    assert "other params" in note and not (save / "checkpoint_last.pt").exists() and not log.exists()
    previous = tmp_path / "fairseq.previous"
    assert checkpoint_updates(previous / "checkpoint_last.pt") == 4
    assert (previous / "train.log").read_text() == "A's log\n"
    assert (save / JOB_RECORD).read_text() == "B\n"

    # checkpoints from before the record was kept: a killed run resumes, a finished one (which
    # Snakemake reruns only because something changed) starts afresh
    (save / JOB_RECORD).unlink()
    _checkpoint(save / "checkpoint_last.pt", 6)
    assert claim_save_dir(save, log, "B\n", 10) is None and checkpoint_updates(save / "checkpoint_last.pt") == 6
    (save / JOB_RECORD).unlink()
    _checkpoint(save / "checkpoint_last.pt", 10)
    assert "finished" in claim_save_dir(save, log, "B\n", 10)
    assert checkpoint_updates(previous / "checkpoint_last.pt") == 10 and not (save / "checkpoint_last.pt").exists()


def test_fairseq_imports_the_same_xling_as_the_job(tmp_path, monkeypatch):
    """fairseq-train loads our plugin, which imports xling: from this process's checkout, even
    where the environment would give the child another one (an editable install of another
    checkout; here another xling first on PYTHONPATH)."""
    import subprocess
    import sys

    import xling
    from xling.pretrain.processes import fairseq_env

    other = tmp_path / "other"
    (other / "xling").mkdir(parents=True)
    (other / "xling" / "__init__.py").write_text("")
    monkeypatch.setenv("PYTHONPATH", str(other))
    out = subprocess.run([sys.executable, "-c", "import xling; print(xling.__file__)"], cwd=tmp_path,
                         env=fairseq_env(1), capture_output=True, text=True, check=True).stdout.strip()
    assert out == xling.__file__
