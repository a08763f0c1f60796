"""Tokens per sample counted as the MLM task cuts the data (streams, sentences, windows), and a
windowed model's recipe matched in tokens to its reference (Liu et al.'s 20-token windows)."""

import math

import numpy as np
import pytest

from support.inprocess import build
from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data
from xling.pretrain.command import fairseq_train_command
from xling.pretrain.job import PretrainJob
from xling.pretrain.sampling import language_sampling_probs
from xling.pretrain.schedule import schedule
from xling.pretrain.tokens import match_recipe, matched_recipe, mean_tokens_per_sample, sample_tokens, training_sizes

N_TRAIN = {"en": 300, "fr": 100}
MODEL = dict(TINY_MODEL, tokens_per_sample=12)  # shorter than many toy sentences: every cut matters


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_toy_data(tmp_path_factory.mktemp("bin") / "en-fr", ["en", "fr"], n_train=N_TRAIN, seed=5)


@pytest.mark.parametrize("mode,window", [("none", None), ("eos", None), ("eos", 5)])
def test_counts_are_those_of_the_task_s_samples(data_dir, tmp_path, mode, window):
    """(tokens, samples) of one language, <s> included, equal what the plugin's dataset yields."""
    pre = dict(TINY_PRETRAIN, sample_break_mode=mode, sentence_window=window)
    job = PretrainJob.build(data_dir, {"separate": {"embeddings": False, "layers": 0}}, MODEL, pre, ["en", "fr"], 1)
    cmd = fairseq_train_command(job, tmp_path / "ck")
    task = build(cmd)[1]
    pad = task.source_dictionary.pad()
    sizes = training_sizes(data_dir, ["en", "fr"])
    for lang in ("en", "fr"):
        task.load_dataset(f"train_{lang}")
        ds = task.dataset(f"train_{lang}")
        tokens = sum(int(ds[i]["net_input.src_tokens"].ne(pad).sum()) for i in range(len(ds)))
        assert sample_tokens(sizes[lang], mode, MODEL["tokens_per_sample"], window) == (tokens, len(ds))
    assert len(sizes["en"]) == N_TRAIN["en"]


def test_the_mean_weights_languages_by_their_sampling_share():
    sizes = {"en": [3, 3, 3, 3], "fr": [9]}  # eos, no cut: 4 and 10 tokens a sample with <s>
    p = language_sampling_probs([4, 1], 0.5)
    assert mean_tokens_per_sample(sizes, 0.5, "eos", 64) == pytest.approx(p[0] * 4 + p[1] * 10)
    # windows of 4 (3 tokens + <s>): the 9-token sentence is 3 samples of 4
    assert sample_tokens([9, 3], "eos", 64, window=4) == (9 + 3 + 4, 4)
    with pytest.raises(ValueError, match="unknown sample_break_mode 'complete'"):
        sample_tokens([3], "complete", 64)


def test_matching_by_batch_keeps_the_updates_and_by_updates_the_batch():
    pre = dict(TINY_PRETRAIN, batch_size_per_gpu=16, streams_per_epoch_per_gpu=160, max_epoch=2,
               save_interval_updates=5, max_streams_per_step=8, match_tokens={"by": "batch"})
    before = schedule(pre, MODEL)
    by_batch = match_recipe(pre, 2.5, "batch")
    after = schedule(by_batch, MODEL)
    assert "match_tokens" not in by_batch and by_batch["batch_size_per_gpu"] == 40
    assert by_batch["max_streams_per_step"] == 20
    assert after.max_updates == before.max_updates and after.streams == 2.5 * before.streams
    by_updates = match_recipe(pre, 2.5, "updates")
    after = schedule(by_updates, MODEL)
    assert by_updates["batch_size_per_gpu"] == 16 and after.updates_per_epoch == 25  # 10 x 2.5, a multiple of 5
    assert after.max_updates % by_updates["save_interval_updates"] == 0
    # rounded up to the checkpoint interval: 10 x 1.3 = 13 -> 15
    assert schedule(match_recipe(pre, 1.3, "updates"), MODEL).updates_per_epoch == 15
    with pytest.raises(ValueError, match="match_tokens.by must be one of batch, updates"):
        match_recipe(pre, 2.0, "tokens")


def test_a_windowed_recipe_sees_the_reference_s_tokens(data_dir):
    """Matched on the data: the windowed model's tokens per update (and in all) are the full
    streams' up to one sample's rounding, where unmatched it would see several times fewer."""
    pre = dict(TINY_PRETRAIN, sample_break_mode="eos", sentence_window=4,
               match_tokens={"by": "batch", "sample_break_mode": "none"})
    recipe, record = matched_recipe(pre, MODEL, data_dir, ["en", "fr"])
    sizes = training_sizes(data_dir, ["en", "fr"])
    alpha = TINY_PRETRAIN["sampling_alpha"]
    assert record["reference_tokens_per_sample"] == mean_tokens_per_sample(sizes, alpha, "none", 12)
    assert record["tokens_per_sample"] == mean_tokens_per_sample(sizes, alpha, "eos", 12, window=4)
    ratio = record["reference_tokens_per_sample"] / record["tokens_per_sample"]
    assert ratio > 2.5 and recipe["batch_size_per_gpu"] == round(16 * ratio)
    # a forward pass holds at most the reference's 16 x 12 tokens: 16 x 12 / 4 samples of at most 4
    assert recipe["max_streams_per_step"] == record["max_samples_per_step"] == 16 * 12 // 4
    assert record["tokens_per_update"] == pytest.approx(record["reference_tokens_per_update"],
                                                        rel=1 / recipe["batch_size_per_gpu"])
    assert record["updates"] == schedule(pre, MODEL).max_updates and "match_tokens" not in recipe
    _, by_updates = matched_recipe(dict(pre, match_tokens={"by": "updates", "sample_break_mode": "none"}), MODEL,
                                   data_dir, ["en", "fr"])
    assert by_updates["samples_per_update"] == 16
    assert by_updates["updates"] == 2 * math.ceil(round(10 * ratio) / 5) * 5  # to the checkpoint interval
    # as many tokens, up to that rounding (upwards)
    assert by_updates["tokens"] >= by_updates["reference_tokens"] * (1 - 1 / 20)
    assert by_updates["tokens"] == pytest.approx(by_updates["reference_tokens"] * by_updates["updates"] / (20 * ratio))
    assert np.isclose(by_updates["tokens_per_sample"], record["tokens_per_sample"])


@pytest.mark.slow
def test_a_matched_job_trains_on_the_reference_s_tokens_per_update(data_dir, tmp_path):
    """pretrain_job with match_tokens: fairseq trains the matched batch, done.json records the
    measurement, and the tokens fairseq counted per update are the reference streams'."""
    import json

    from xling.pretrain.run import pretrain_job

    pre = dict(TINY_PRETRAIN, sample_break_mode="eos", sentence_window=4, max_epoch=1, save_interval_updates=None,
               match_tokens={"by": "batch", "sample_break_mode": "none"}, log_interval=1)
    done = pretrain_job(data_dir, tmp_path / "w4" / "done.json", {"separate": {"embeddings": False, "layers": 0}},
                        dict(MODEL, layers=2, dropout=0.0), pre, ["en", "fr"], gpus=0, seed=1)
    match = done["match_tokens"]
    assert json.loads((tmp_path / "w4" / "done.json").read_text())["match_tokens"] == match
    assert done["batch"]["global_batch_streams"] == match["samples_per_update"] > 16 and done["updates"] == 10
    # fairseq's own count of the tokens it trained on, <s> included, over the 10 updates
    assert done["train_tokens"] / done["updates"] == pytest.approx(match["reference_tokens_per_update"], rel=0.15)
