"""The regime probe's table reads English only: the English validation perplexity of the
pretraining log and the English dev score of each fine-tuning result."""

import json
from pathlib import Path

import yaml

from support import repo_module

REPO = Path(__file__).resolve().parents[1]
probe_regime = repo_module.load("scripts/probe_regime.py")

LOG = "".join(
    f'2026-11-26 09:1{i}:01 | INFO | valid_{lang} | {{"epoch": {i}, "valid_{lang}_loss": "5", '
    f'"valid_{lang}_ppl": "{ppl}", "valid_{lang}_num_updates": "{upd}"}}\n'
    for i, (lang, ppl, upd) in enumerate((("en", "68.59", 250), ("fr", "32.00", 250), ("en", "17.15", 500))))


def test_probe_reads_english_perplexity_per_update(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(LOG, encoding="utf-8")
    assert probe_regime.english_ppl(log) == {250: 68.59, 500: 17.15}


def test_probe_reads_only_the_english_dev_score(tmp_path):
    for task, score in (("xnli", 61.0), ("ner", 97.5)):
        path = tmp_path / task / "bs32_lr0.0005" / "seed1" / "result.json"
        path.parent.mkdir(parents=True)
        # a result without its transfer scores: the probe must not need them
        path.write_text(json.dumps({"en_dev": score}), encoding="utf-8")
    assert probe_regime.english_dev(tmp_path) == {"xnli": 61.0, "ner": 97.5}


def test_probe_points_are_overlays_with_their_own_run():
    probe = yaml.safe_load((REPO / "config" / "probes" / "regime_xlm.yaml").read_text(encoding="utf-8"))
    over = probe_regime.overlay(probe, "lr4e-3")
    assert over["run_name"] == "probe_lr4e-3" and over["pretrain"] == {"lr": 4.0e-3}
    assert over["download"]["mirror"].startswith("results/probe_lr4e-3/")
    assert over["seeds"] == {"pretrain": [1], "finetune": [1]}
    # the real study's probe: every point reads one mirror of real files, and trains Default en-fr only
    real = yaml.safe_load((REPO / "config" / "probes" / "regime_real.yaml").read_text(encoding="utf-8"))
    over = probe_regime.overlay(real, "w128")
    assert over["download"] == {"mirror": "results/real/mirror"} and "licensed" not in over
    assert over["pair_rows"] == {"en-fr": ["default"]} and over["model"]["dim"] == 128
    # common's recipe under the point's own length: 1,000 updates of 32 sentences (4 epochs of 250)
    assert over["pretrain"] == {"batch_size_per_gpu": 32, "streams_per_epoch_per_gpu": 8000, "warmup_updates": 250,
                                "max_epoch": 4}


def test_probe_tabulates_the_mean_and_spread_over_pretraining_seeds(tmp_path):
    """Per point: each number's mean over the pretraining seeds, and the standard deviation over
    the seeds of the mean English dev score (the spread a setting must beat)."""
    probe = {"target": "table1_row_default", "points": {"a": {"pretrain": {"max_epoch": 12}}}}
    for seed, (ppl, scores) in {1: ("10.0", (90.0, 60.0)), 2: ("12.0", (94.0, 62.0))}.items():
        model = tmp_path / "probe_a" / "pretrain" / "default" / "en-fr" / f"seed{seed}"
        model.mkdir(parents=True)
        (model / "train.log").write_text(LOG.replace("17.15", ppl), encoding="utf-8")
        for task, score in zip(("ner", "xnli"), scores):
            path = tmp_path / "probe_a" / "finetune" / "default" / "en-fr" / f"seed{seed}" / task / "hp" / "seed1"
            path.mkdir(parents=True)
            (path / "result.json").write_text(json.dumps({"en_dev": score, "tgt_test": 99.0}), encoding="utf-8")
        # each job's CPU time from its Snakemake benchmark file: a pretraining job, two grid jobs
        bench = tmp_path / "benchmarks" / "probe_a"
        for path, cpu in ((bench / "pretrain" / "default" / "en-fr" / f"seed{seed}.tsv", 240.0 * seed),
                          *((bench / "finetune" / "default" / "en-fr" / f"seed{seed}" / task / "grid_bs32"
                             / "seed1.tsv", 30.0) for task in ("ner", "xnli"))):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"s\th:m:s\tcpu_time\n999.0\t0:16:39\t{cpu}\n", encoding="utf-8")
    row = probe_regime.collect(probe, "a", results=tmp_path, benchmarks=tmp_path / "benchmarks")
    assert row["valid_en_ppl"] == {250: 68.59, 500: 11.0} and row["en_dev"] == {"ner": 92.0, "xnli": 61.0}
    assert row["mean_en_dev"] == 76.5 and abs(row["mean_en_dev_sd"] - 2 ** 0.5 * 1.5) < 1e-9  # means 75 and 78
    # CPU time, not wall time (a job beside another runs at half speed): (4 + 1) and (8 + 1) minutes
    assert row["seeds"][1]["pretrain_cpu_min"] == 4.0 and row["seeds"][2]["finetune_cpu_min"] == 1.0
    assert row["cpu_min_per_model"] == 7.0
    md = probe_regime.markdown([row])
    assert "| a | 2 | 68.59 | 11.00 | 92.0 | 61.0 | 76.50 (2.12) | 7.0 |" in md
