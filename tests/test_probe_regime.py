"""The regime probe's table reads English only: the English validation perplexity of the
pretraining log and the English dev score of each fine-tuning result."""

import importlib.util
import json
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("probe_regime", REPO / "scripts" / "probe_regime.py")
probe_regime = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe_regime)

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
    md = probe_regime.markdown([{"point": "a", "valid_en_ppl": {250: 9.0}, "en_dev": {"ner": 90.0, "xnli": 60.0}}])
    assert "| a | 9.00 | 90.0 | 60.0 | 75.0 |" in md
