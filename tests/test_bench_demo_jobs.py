"""bench/bench_demo_jobs.py reads where a pretraining job's wall went from its fairseq log: the
steps (fairseq's per-epoch train_wall), the rest of fairseq's clock, the start-up before it and the
exit after it; a job that wrote no epoch record is an error, not a zero."""

from __future__ import annotations

import pytest

from support import repo_module

bench = repo_module.load("bench/bench_demo_jobs.py")

STAMP = "2026-11-27 18:29:43 | INFO | "


def valid(lang: str, epoch: int, ppl: str, updates: int) -> str:
    return (STAMP + f'valid_{lang} | {{"epoch": {epoch}, "valid_{lang}_loss": "6", "valid_{lang}_ppl": "{ppl}", '
            f'"valid_{lang}_num_updates": "{updates}"}}')


def saved(name: str, updates: int, seconds: float) -> str:
    return (STAMP + f"fairseq.checkpoint_utils | Saved checkpoint {name} (@ {updates} updates) "
            f"(writing took {seconds} seconds)")


LOG = [  # (seconds after the job's start the line was seen, the line)
    (3.0, "=== xling pretrain start 2026-11-27T18:29:40 resume_from_updates=0 ==="),
    (4.0, STAMP + "fairseq_cli.train | {'_name': None, 'common': {'seed': 1}}"),  # a Python dict, not a record
    (6.5, STAMP + "fairseq.trainer | begin training epoch 1"),
    (20.0, valid("en", 1, "95.28", 250)),
    (20.1, valid("fr", 1, "99.00", 250)),
    (20.2, saved("x.pt", 250, 0.02)),
    (34.0, STAMP + 'train | {"epoch": 1, "train_num_updates": "487", "train_wpb": "819.4", "train_train_wall": "25", '
                   '"train_wall": "27"}'),
    (40.0, valid("en", 2, "60.00", 500)),
    (40.2, saved("y.pt", 500, 0.03)),
    (48.0, STAMP + 'train | {"epoch": 2, "train_num_updates": "750", "train_wpb": "802.6", "train_train_wall": "13", '
                   '"train_wall": "42"}'),
    (48.5, STAMP + "fairseq_cli.train | done training in 41.6 seconds"),
]


def test_a_jobs_wall_splits_into_start_up_steps_the_rest_and_exit():
    p = bench.pretrain_phases(LOG, wall=50.0)
    assert p["updates"] == 750 and p["steps_s"] == 25 + 13 and p["fairseq_s"] == 42.0
    assert p["fairseq_besides_steps_s"] == 4.0 and p["startup_s"] == 6.5 and p["after_training_s"] == 1.5
    assert p["validations"] == 2 and p["saves"] == 2 and p["save_writing_s"] == pytest.approx(0.05)
    tokens = 487 * 819.4 + (750 - 487) * 802.6
    assert p["tokens_per_update"] == pytest.approx(tokens / 750)
    assert p["tokens_per_s_steps"] == pytest.approx(tokens / 38) and p["updates_per_s_steps"] == pytest.approx(750 / 38)


def test_a_job_without_an_epoch_record_is_an_error():
    with pytest.raises(ValueError, match="no epoch record"):
        bench.pretrain_phases(LOG[:6], wall=20.0)


def test_the_spread_of_repeats():
    assert bench.spread([3.0, None, 1.0, 2.0]) == {"min": 1.0, "median": 2.0, "max": 3.0, "n": 3}
    assert bench.spread([None]) is None
