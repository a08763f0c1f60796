"""The data-parallel pretraining path without GPUs.

fairseq trains with two CPU processes (gloo): a Sep Emb + L1-3 and a Default model are killed
after their first checkpoint and resumed, and two ranks train exactly the model that one process
trains by accumulating the same batches. fairseq's ``c10d`` backend (what GPU jobs use) cannot wrap
a CPU module (it passes ``device_ids``, which torch refuses for CPU modules), so CPU ranks run
fairseq's ``legacy_ddp``; the last test runs torch's DistributedDataParallel with
``find_unused_parameters`` -- the c10d path -- around our Sep model with the two ranks on
different languages, as the 8-GPU jobs of the Sep rows do.
"""

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
import torch

from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data

pytestmark = pytest.mark.slow

MODEL = dict(TINY_MODEL, layers=4, dim=32, ffn_dim=64, tokens_per_sample=32, dropout=0.0, attention_dropout=0.0)
# an update is 2 x 8 streams; 10 updates per epoch, 2 epochs, a checkpoint every 5 updates
PRETRAIN = dict(TINY_PRETRAIN, batch_gpus=2, batch_size_per_gpu=8, streams_per_epoch_per_gpu=80, max_epoch=2,
                save_interval_updates=5, warmup_updates=5, cpu_processes=2, log_interval=1)
SETTINGS = {"sep_emb_l1_3": {"separate": {"embeddings": True, "layers": 3}},
            "default": {"separate": {"embeddings": False, "layers": 0}}}

JOB = """
import json, sys
from xling.pretrain.run import pretrain_job
a = json.loads(sys.argv[1])
pretrain_job(a["data"], a["done"], a["setting"], a["model"], a["pretrain"], ["en", "fr"], gpus=0, seed=1, threads=2)
"""


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_toy_data(tmp_path_factory.mktemp("bin") / "en-fr", ["en", "fr"], n_train=120, seed=3)


def start_job(data_dir: Path, out: Path, setting: dict, pretrain: dict) -> subprocess.Popen:
    args = {"data": str(data_dir), "done": str(out / "done.json"), "setting": setting, "model": MODEL,
            "pretrain": pretrain}
    return subprocess.Popen([sys.executable, "-c", JOB, json.dumps(args)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def processes_of(save_dir: Path) -> list[int]:
    """Live processes whose command line names ``save_dir`` (the training's ranks)."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(save_dir) in cmd and "fairseq" in cmd:
                pids.append(int(d.name))
    return pids


@pytest.mark.parametrize("name", list(SETTINGS))
def test_two_cpu_ranks_train_and_resume(data_dir, tmp_path, name):
    out = tmp_path / name
    job = start_job(data_dir, out, SETTINGS[name], PRETRAIN)
    deadline = time.time() + 240
    while not (out / "fairseq" / "checkpoint_last.pt").exists() and job.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert job.poll() is None, job.stdout.read()
    os.killpg(job.pid, signal.SIGKILL)  # the whole job, both ranks, as a scheduler kills it
    job.wait()
    deadline = time.time() + 30
    while processes_of(out / "fairseq") and time.time() < deadline:
        time.sleep(0.1)
    assert not processes_of(out / "fairseq")
    assert not (out / "done.json").exists()

    rerun = start_job(data_dir, out, SETTINGS[name], PRETRAIN)
    log_text, _ = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, log_text[-3000:]
    done = json.loads((out / "done.json").read_text())
    assert done["updates"] == 20 and done["invocations"] == 2
    assert done["batch"] == {"global_batch_streams": 16, "processes": 2, "device": "cpu", "streams_per_step": 8,
                             "update_freq": 1, "effective_batch_streams": 16, "updates_per_epoch": 10,
                             "tokens_per_sample": 32}
    train_log = (out / "train.log").read_text()
    # both ranks joined the gloo group, in each invocation
    assert train_log.count("distributed init (rank 0)") == 2 and train_log.count("distributed init (rank 1)") == 2
    assert "legacy_ddp" in train_log
    resumed = [int(n) for n in re.findall(r"Loaded checkpoint \S+checkpoint_last\.pt \(epoch \d+ @ (\d+) updates\)",
                                          train_log)]
    assert len(resumed) == 1 and 0 < resumed[0] < 20
    assert set(done["valid_ppl"]) == {"en", "fr"} and (out / "checkpoint_best.pt").exists()
    assert not processes_of(out / "fairseq")


def test_two_ranks_train_what_one_process_accumulates(data_dir, tmp_path):
    """Two ranks of 8 streams and one process accumulating two steps of 8 see the same batches
    per update (fairseq shards batch k to rank k mod 2, and groups batches 2k, 2k+1): with dropout
    off they must end with the same weights, which checks the gradient all-reduce and the batch."""
    single = dict(PRETRAIN, cpu_processes=1)
    finals = {}
    for tag, pre in (("ranks", PRETRAIN), ("single", single)):
        out = tmp_path / tag
        job = start_job(data_dir, out, SETTINGS["default"], pre)
        log_text, _ = job.communicate(timeout=300)
        assert job.returncode == 0, log_text[-3000:]
        done = json.loads((out / "done.json").read_text())
        assert done["batch"]["effective_batch_streams"] == 16
        assert (done["batch"]["processes"], done["batch"]["update_freq"]) == ((2, 1) if tag == "ranks" else (1, 2))
        state = torch.load(out / "fairseq" / "checkpoint_last.pt", map_location="cpu", weights_only=False)
        finals[tag] = state["model"]
    assert finals["ranks"].keys() == finals["single"].keys()
    # the attention's key bias has no gradient in exact arithmetic (a softmax is blind to a shift
    # common to all keys), so Adam turns the summation order's rounding in it into lr-sized steps
    # of either sign: left out, the query and value biases kept
    def differs(k):
        d = (finals["ranks"][k].float() - finals["single"][k].float()).abs()
        if k.endswith("self_attn.in_proj_bias"):
            d = torch.cat([d.view(3, -1)[0], d.view(3, -1)[2]])
        return float(d.max())

    worst = max(differs(k) for k in finals["single"])
    moved = max(float(v.float().abs().max()) for v in finals["single"].values())
    assert moved > 0 and worst < 1e-4, worst


# --- torch DDP (fairseq's c10d) around the Sep model --------------------------------------------


def _ddp_rank(rank: int, port: int, out_dir: str) -> None:
    """One rank: the same initial Sep Emb + L1-3 model, its own language's batch (en on rank 0,
    fr on rank 1), one backward through DDP with find_unused_parameters; saves the gradients."""
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    model, batches = _sep_model_and_batches()
    ddp = torch.nn.parallel.DistributedDataParallel(model, find_unused_parameters=True)
    tokens, targets = batches[rank]
    masked = torch.ones_like(tokens, dtype=torch.bool)
    logits, _ = ddp(tokens, src_lang_id=torch.full((tokens.size(0),), rank), masked_tokens=masked)
    torch.nn.functional.cross_entropy(logits, targets[masked]).backward()
    torch.save({n: p.grad for n, p in model.named_parameters()}, Path(out_dir) / f"rank{rank}.pt")
    dist.destroy_process_group()


def _sep_model_and_batches():
    from fairseq.data import Dictionary

    from xling.pretrain.fairseq_plugin.mlm_model import XlingMLMEncoder, base_architecture

    class Args:
        pass

    args = Args()
    args.encoder_layers, args.encoder_embed_dim, args.encoder_ffn_embed_dim = 4, 16, 32
    args.encoder_attention_heads, args.max_positions = 2, 12
    args.dropout = args.attention_dropout = 0.0  # no random masks: ranks and reference must compute alike
    args.separate_embeddings, args.separate_layers = True, 3
    base_architecture(args)
    d = Dictionary()
    for i in range(30):
        d.add_symbol(f"w{i}")
    torch.manual_seed(0)
    model = XlingMLMEncoder(args, d, 2, None)
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randint(d.nspecial, len(d), (3, 12), generator=g),
                torch.randint(d.nspecial, len(d), (3, 12), generator=g)) for _ in range(2)]
    return model, batches


def test_c10d_ddp_averages_gradients_of_per_language_parameters(tmp_path):
    """Each rank's batch is one language, so half the language-specific parameters are unused on
    each rank; DDP must still give every rank the average of the two ranks' gradients."""
    import torch.multiprocessing as mp

    from xling.pretrain.processes import free_port

    mp.spawn(_ddp_rank, args=(free_port(), str(tmp_path)), nprocs=2, join=True)
    grads = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]
    model, batches = _sep_model_and_batches()
    reference = {}
    for lang, (tokens, targets) in enumerate(batches):
        model.zero_grad()
        masked = torch.ones_like(tokens, dtype=torch.bool)
        logits, _ = model(tokens, src_lang_id=torch.full((tokens.size(0),), lang), masked_tokens=masked)
        torch.nn.functional.cross_entropy(logits, targets[masked]).backward()
        for n, p in model.named_parameters():
            g = torch.zeros_like(p) if p.grad is None else p.grad.clone()
            reference[n] = reference.get(n, 0) + g / 2
    specific = [n for n in reference if n.startswith(("embed_tokens.1", "language_layers.1"))]
    assert specific and all(reference[n].abs().sum() > 0 for n in specific)
    for n, ref in reference.items():
        for r in range(2):
            assert grads[r][n] is not None, (n, r)
            torch.testing.assert_close(grads[r][n], ref, rtol=1e-5, atol=1e-7, msg=f"{n} on rank {r}")
