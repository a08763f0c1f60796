"""The paper configuration's training length and compute, derived from the config and checked
against the paper's own statements (3.1) without a GPU; planning refuses jobs that cannot fit."""

from __future__ import annotations

import copy
import json

import pytest
import torch

from xling import config as xcfg
from xling.cluster import budget, rates
from xling.cluster.budget_table import budget_rows
from xling.config import REPO
from xling.errors import ConfigError, InputError
from xling.pretrain.schedule import batch_layout, schedule, train_flops_per_token

PAPER = xcfg.load(REPO / "config" / "config.yaml")
V100 = xcfg.load(REPO / "config" / "config.yaml", REPO / "config" / "v100.yaml")
DEMO = xcfg.load(REPO / "config" / "config.yaml", REPO / "config" / "demo.yaml")
H100_PRETRAIN = REPO / "bench" / "measured" / "gpu_check" / "2026-11-26_h100_9e3340f" / "pretrain.json"
H100_GRID = REPO / "bench" / "measured" / "gpu_check" / "2026-11-26_h100_9e3340f" / "grid.json"


def test_paper_schedule_is_xlms_epoch():
    """'batch size 96 for each GPU and each epoch contains 200k batches ... epoch 200', read as XLM
    counts it: 200k streams per GPU process in steps of 96."""
    s = schedule(PAPER["pretrain"], PAPER["model"])
    assert s.global_batch_streams == 8 * 96 == 768
    assert s.updates_per_epoch == 2084  # ceil(200000 / 96)
    assert s.max_updates == 416_800
    assert s.tokens == 416_800 * 768 * 256 == pytest.approx(8.19e10, rel=1e-3)


def test_paper_config_is_the_recipe_behind_the_v100_rate():
    """The default V100 rate is derived from the paper's recipe: the config must be that recipe."""
    r = rates.PAPER_RECIPE
    for key, value in r["model"].items():
        assert PAPER["model"][key] == value, key
    for key, value in r["pretrain"].items():
        assert PAPER["pretrain"][key] == value, key
    assert PAPER["rule_resources"]["pretrain"]["gpus"] == r["gpus"]
    joint = {s["merges"] for s in PAPER["settings"].values() if s["bpe"] == "joint"}
    assert joint == {r["vocab"]}
    assert V100["pretrain"]["precision"] == r["precision"] == "fp16"  # the paper's "mixed precision" on V100


def test_v100_rate_gives_back_the_papers_three_days():
    """At the paper's own rate, a Default model (80k joint BPE) on 8 V100 takes the stated 72 hours,
    and the number of updates and tokens are the schedule's."""
    cfg = copy.deepcopy(V100)
    rate = budget.planned_rate(cfg, budget.pretrain_device(cfg))
    assert "paper's own rate" in rate.basis
    est = {e.job.name: e for e in budget.pretrain_estimates(cfg, rate, margin=1.0)}
    default = est["default/en-fr"]
    assert default.updates == 416_800 and default.tokens == 416_800 * 768 * 256
    assert default.hours == pytest.approx(72.0)
    assert default.tokens_per_s / 8 == pytest.approx(39_500, rel=0.01)
    # a monolingual model has a smaller softmax: a little faster
    assert est["mono/en"].hours < default.hours


def test_every_pretraining_job_is_planned():
    names = [j.name for j in budget.pretrain_jobs(PAPER)]
    assert len(names) == len(set(names)) == 30 + 2 + 6  # Table 1, Figure 7's en-de and en-en', monolingual
    assert "default/en-de" in names and "sep_emb/en-en_prime" in names and "mono/en_prime" in names


def test_each_seed_is_a_job_of_the_same_model():
    three = xcfg.merge(copy.deepcopy(PAPER), {"seeds": {"pretrain": [1, 2, 3]}})
    jobs = budget.pretrain_jobs(three)
    assert len(jobs) == 30 * 3 + 2 + 6
    reps = [j for j in jobs if j.model == "default/en-fr"]
    assert [j.name for j in reps] == ["default/en-fr/seed1", "default/en-fr/seed2", "default/en-fr/seed3"]
    assert next(j for j in jobs if j.model == "default/en-de").name == "default/en-de/seed1"  # trained once


def test_budget_cli_prints_updates_and_tokens(capsys):
    assert budget.main(["--config", str(REPO / "config" / "config.yaml")]) == 0
    out = capsys.readouterr().out
    assert "2,084 updates per epoch x 200 epochs = 416,800 updates x 768 streams x 256 tokens = 8.19e+10 tokens" in out
    assert "| pretrain | 38 | 8 |" in out


def test_a_job_that_cannot_fit_its_runtime_is_refused(tmp_path, capsys):
    cfg = copy.deepcopy(PAPER)
    cfg["rule_resources"]["pretrain"]["runtime"] = 72 * 60  # the paper's 3 days, without margin
    with pytest.raises(ConfigError) as err:
        budget.check_pretrain_runtime(cfg)
    msg = str(err.value)
    assert "pretrain default/en-fr: 416,800 updates x 768 streams x 256 tokens = 8.19e+10 tokens" in msg
    assert "needs 79.2 h (x1.1 margin) > runtime 72 h" in msg
    assert "Raise rule_resources.pretrain.runtime" in msg
    budget.check_pretrain_runtime(PAPER)  # the shipped config fits
    budget.check_pretrain_runtime(DEMO)
    # the CLI says so too, with a non-zero exit
    overlay = tmp_path / "short.yaml"
    overlay.write_text("rule_resources:\n  pretrain: {cpus: 40, mem_mb: 400000, runtime: 4320, gpus: 8}\n")
    assert budget.main(["--config", str(REPO / "config" / "config.yaml"), "--config", str(overlay)]) == 1
    assert "refused: 38 pretraining job(s)" in capsys.readouterr().out


def liu_estimates(cfg):
    jobs = budget.liu_pretrain_jobs(cfg)
    return {e.job.name: e for e in budget.pretrain_estimates(cfg, rates.paper_v100_rate(), jobs=jobs)}


def test_the_study_s_models_are_planned_at_their_own_length():
    """Liu et al.'s MLMs: 12 layers, full 512-token streams or 20-token windows, 80 epochs; the
    windowed model is planned for the full model's tokens (liu2020.window_tokens: batch, the same
    updates of 512 / 20 times the samples), each fits the 4-day runtime at the V100 rate, and 200
    epochs of the full-window model would not."""
    est = liu_estimates(PAPER)
    assert sorted(est) == ["liu/n1000000/full", "liu/n1000000/w20", "liu/n200000/full", "liu/n200000/w20"]
    full, w20 = est["liu/n200000/full"], est["liu/n200000/w20"]
    assert full.updates == w20.updates == 80 * 2084 and full.streams == 768
    assert (full.tokens_per_sample, w20.tokens_per_sample) == (512, 20) and full.tokens == 80 * 2084 * 768 * 512
    assert w20.streams == 8 * round(96 * 512 / 20) and w20.tokens == pytest.approx(full.tokens, rel=1e-3)
    # the same tokens at a cheaper attention: a little less time, not 25x less
    assert full.fits and w20.fits and 0.8 * full.hours < w20.hours < full.hours
    by_updates = liu_estimates(xcfg.merge(copy.deepcopy(PAPER), {"liu2020": {"window_tokens": "updates"}}))
    w20u = by_updates["liu/n200000/w20"]
    assert w20u.streams == 768 and w20u.updates == 80 * round(2084 * 512 / 20)
    assert w20u.tokens == pytest.approx(full.tokens, rel=1e-3)
    unmatched = liu_estimates(xcfg.merge(copy.deepcopy(PAPER), {"liu2020": {"window_tokens": "none"}}))
    assert unmatched["liu/n200000/w20"].tokens * 512 == full.tokens * 20  # the confounded design
    assert budget.liu_pretrain_jobs(DEMO)[0].pretrain_cfg["sample_break_mode"] == "eos"  # the testbed's regime
    longer = xcfg.merge(copy.deepcopy(PAPER), {"liu2020": {"pretrain": {"max_epoch": 200}}})
    with pytest.raises(ConfigError, match=r"pretrain liu/n200000/full: 416,800 updates x 768 streams x 512 tokens"):
        budget.check_pretrain_runtime(longer)
    assert budget.liu_pretrain_jobs(xcfg.merge(copy.deepcopy(PAPER), {"liu2020": {"languages": []}})) == []


def test_measured_rates_replace_the_default(tmp_path):
    cfg = copy.deepcopy(PAPER)
    v100 = rates.paper_v100_rate().flops_per_s
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps({"device": "NVIDIA H100", "precision": "bf16", "achieved_flops_per_s": 3 * v100}))
    cfg["planning"]["pretrain_benchmark"] = str(bench)
    rate = budget.planned_rate(cfg, budget.pretrain_device(cfg))
    assert rate.flops_per_s == 3 * v100 and "NVIDIA H100" in rate.basis
    est = {e.job.name: e for e in budget.pretrain_estimates(cfg, rate, margin=1.0)}
    assert est["default/en-fr"].hours == pytest.approx(24.0)
    # a measured tokens/s of this model per device wins over the benchmark
    cfg["planning"]["pretrain_tokens_per_s_per_device"] = 100_000.0
    rate = budget.planned_rate(cfg, budget.pretrain_device(cfg))
    est = {e.job.name: e for e in budget.pretrain_estimates(cfg, rate, margin=1.0)}
    assert est["default/en-fr"].tokens_per_s == pytest.approx(8 * 100_000)
    # a broken benchmark file names itself
    bench.write_text(json.dumps({"device": "x"}))
    with pytest.raises(InputError, match="bench.json.*achieved_flops_per_s"):
        rates.rate_from_benchmark(bench)


def test_the_budget_plans_the_precision_the_config_pretrains_in(tmp_path):
    """A rate measured in another precision than the config's plans nothing (fp16 and bf16 differ by
    the step), and a V100 is never planned in bf16, which it has not: the paper config pretrains in
    bf16 (A100, H100), config/v100.yaml in the paper's fp16."""
    assert PAPER["pretrain"]["precision"] == "bf16"
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps({"device": "NVIDIA H200", "precision": "fp16", "achieved_flops_per_s": 3e14}))
    cfg = copy.deepcopy(PAPER)
    cfg["planning"]["pretrain_benchmark"] = str(bench)
    with pytest.raises(InputError, match=r"bench.json.*the config's pretrain.precision \(bf16\).*fp16 on NVIDIA H200"):
        budget.planned_rate(cfg, budget.pretrain_device(cfg))
    cfg["pretrain"]["precision"] = "fp16"
    assert "(fp16)" in budget.planned_rate(cfg, budget.pretrain_device(cfg)).basis
    bf16_v100 = xcfg.merge(copy.deepcopy(V100), {"pretrain": {"precision": "bf16"}})
    with pytest.raises(ConfigError, match="V100.*no bf16.*config/v100.yaml"):
        budget.check_pretrain_runtime(bf16_v100)
    budget.check_pretrain_runtime(V100)


def test_every_finetuning_job_is_a_batch_sizes_grid_planned_at_its_measured_rate(tmp_path):
    """A benchmark of grid jobs (bench_finetune.py's examples_per_s.grid: all the cells of a batch
    size in one job) plans every task as one job per model and batch size, hours from the whole
    grid's rate; a one-cell rate is a floor for its batch size; a batch size without a rate takes
    its smaller neighbour's; a task without any, the assumed rate of one cell at a time."""
    rows = [{"task": "xnli", "batch_size": b, "cells": 9, "examples_per_s": {"one_cell": r / 8, "grid": r}}
            for b, r in ((4, 1200.0), (8, 2400.0))]
    rows += [{"task": "ner", "batch_size": 16, "cells": 3, "examples_per_s": {"grid": 3000.0, "one_cell": 900.0}}]
    rows += [{"task": "parsing", "batch_size": 32, "examples_per_s": {"train_epochs": 900.0}}]  # an older file's
    bench = tmp_path / "ft.json"
    bench.write_text(json.dumps({"device": "x", "rows": rows}))
    measured = rates.finetune_rates([bench], PAPER["finetune"])
    assert {t: {b: (r.examples_per_s, r.kind) for b, r in v.items()} for t, v in measured.items()} == {
        "xnli": {4: (1200.0, "measured"), 8: (2400.0, "measured")}, "ner": {16: (3000.0, "measured")},
        "parsing": {32: (900.0, "floor")}}
    planned = {t: rates.plan_batch_rates(t, PAPER["finetune"], measured.get(t, {})) for t in PAPER["finetune"]["tasks"]}
    assert planned["ner"][32].examples_per_s == 3000.0 and planned["ner"][32].source.startswith("batch 16's rate")
    assert planned["parsing"][16].kind == "assumed" and planned["parsing"][16].examples_per_s == 80.0
    out = {r.stage: r for r in budget_rows(PAPER, rates.paper_v100_rate(), rates.DEFAULT_TRAIN_EXAMPLES, measured)}
    models = len(PAPER["settings"]) * len(PAPER["pairs"])
    xnli, spec = out["finetune xnli"], PAPER["finetune"]["xnli"]
    cell_examples = spec["epochs"] * spec["epoch_size"]
    assert xnli.jobs == out["finetune ner"].jobs == out["finetune parsing"].jobs == models * 2
    # the same cell-examples as 18 jobs of one cell per model, at the grids' rates
    assert xnli.gpu_hours == pytest.approx(models * 9 * cell_examples * (1 / 1200 + 1 / 2400) / 3600)
    # a grid measured with another number of cells than the config's grid does not plan it
    rows[0]["cells"] = 3
    bench.write_text(json.dumps({"rows": rows}))
    with pytest.raises(InputError, match="xnli batch 4: grid jobs of 9 cells.*3 cells measured"):
        rates.finetune_rates([bench], PAPER["finetune"])
    bench.write_text(json.dumps({"rows": [{"task": "xnli"}]}))
    with pytest.raises(InputError, match="ft.json.*task, batch_size and examples_per_s"):
        rates.finetune_rates([bench], PAPER["finetune"])


def test_measured_h100_rates_plan_the_paper_run(capsys):
    """The H100 measurements kept in bench/measured/ plan the paper's run: pretraining at the
    measured model FLOP/s (bf16, the config's) is faster than the V100 rate the paper implies (3
    days on 8 V100), and XNLI, measured as grid jobs, is planned at those jobs' rates."""
    rate = rates.rate_from_benchmark(H100_PRETRAIN, "bf16")
    assert rate.flops_per_s > rates.paper_v100_rate().flops_per_s
    est = {e.job.name: e for e in budget.pretrain_estimates(PAPER, rate, margin=1.0)}
    rec = json.loads(H100_PRETRAIN.read_text())
    tokens = schedule(PAPER["pretrain"], PAPER["model"]).tokens
    # the benchmark's model is the paper's Default (80k joint vocabulary): hours follow from its tokens/s
    assert est["default/en-fr"].hours == pytest.approx(tokens / (8 * rec["tokens_per_s"]["fairseq"]) / 3600,
                                                       rel=0.02)
    assert budget.main(["--rate-from", str(H100_PRETRAIN), "--finetune-rate-from", str(H100_GRID)]) == 0
    out = capsys.readouterr().out
    assert "measured by bench/bench_pretrain.py on NVIDIA H100 80GB HBM3 (bf16)" in out
    xnli = next(line for line in out.splitlines() if line.startswith("| finetune xnli |"))
    assert "| 60 |" in xnli and "one per batch size, 9 cells each" in xnli and "1,161 / 2,156 cell-ex/s" in xnli, xnli


def test_a_later_finetune_benchmark_replaces_an_earlier_row_by_row(tmp_path, capsys):
    cells = {"task": "ner", "batch_size": 16, "cells": 3, "examples_per_s": {"grid": 400.0}}
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps({"rows": [cells, {**cells, "batch_size": 32}]}))
    second.write_text(json.dumps({"rows": [{**cells, "examples_per_s": {"grid": 800.0}}]}))
    assert budget.main(["--finetune-rate-from", str(first), "--finetune-rate-from", str(second)]) == 0
    ner = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| finetune ner |"))
    assert "at 800 / 400 cell-ex/s" in ner, ner


@pytest.mark.parametrize("processes", [1, 2, 3, 4, 6, 8, 12, 16, 24, 32])
def test_batch_layout_keeps_the_global_batch(processes):
    layout = batch_layout(PAPER["pretrain"], processes)
    assert layout.effective_batch_streams == 768
    assert layout.streams_per_step <= 96


@pytest.mark.parametrize("processes", [5, 7, 9, 10])
def test_batch_layout_refuses_uneven_shares(processes):
    with pytest.raises(ConfigError, match="cannot share the global batch"):
        batch_layout(PAPER["pretrain"], processes)


def test_flops_per_token_match_torchs_count_of_the_real_model():
    """The formula against torch's FLOP counter on a forward + backward of our MLM, with a known
    masked fraction (the counter sees matrix products only, as the formula counts them)."""
    from fairseq.data import Dictionary
    from torch.utils.flop_counter import FlopCounterMode

    from xling.pretrain.fairseq_plugin.mlm_model import XlingMLMEncoder, base_architecture

    class Args:
        pass

    args = Args()
    args.encoder_layers, args.encoder_embed_dim, args.encoder_ffn_embed_dim = 2, 32, 64
    args.encoder_attention_heads, args.max_positions, args.dropout = 2, 16, 0.0
    base_architecture(args)
    dictionary = Dictionary()
    for i in range(40):
        dictionary.add_symbol(f"w{i}")
    enc = XlingMLMEncoder(args, dictionary, 1, None)
    batch, seq = 4, 16
    tokens = torch.randint(dictionary.nspecial, len(dictionary), (batch, seq))
    masked = torch.zeros(batch, seq, dtype=torch.bool)
    masked[:, :4] = True  # a quarter of the positions are predicted
    with FlopCounterMode(display=False) as counter:
        logits, _ = enc(tokens, masked_tokens=masked)
        logits.float().sum().backward()
    expected = batch * seq * train_flops_per_token(2, 32, 64, seq, len(dictionary), 0.25)
    assert counter.get_total_flops() == pytest.approx(expected, rel=0.02)
