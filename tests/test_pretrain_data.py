"""The plugin task's data: BERT masking statistics, in-language random words,
one-language batches and language sampling by sentence share^0.7."""

import numpy as np
import pytest
import torch

from support.inprocess import build
from support.toy_data import BERT_MODEL, TINY_MODEL, TINY_PRETRAIN, write_toy_data
from xling.pretrain.command import fairseq_train_command
from xling.pretrain.job import PretrainJob
from xling.pretrain.sampling import language_sampling_probs

N_TRAIN = {"en": 800, "fr": 200}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_toy_data(tmp_path_factory.mktemp("bin") / "en-fr", ["en", "fr"], n_train=N_TRAIN, seed=3)


def make_task(data_dir, tmp_path, sep_emb, one_language_batches=True):
    """A task of XLM's model; batches mixing languages need one without per-language parts (the
    language embeddings are)."""
    setting = {"separate": {"embeddings": sep_emb, "layers": 0}}
    pre = dict(TINY_PRETRAIN, one_language_batches=one_language_batches)
    job = PretrainJob.build(data_dir, setting, TINY_MODEL if one_language_batches else BERT_MODEL, pre, ["en", "fr"],
                            1)
    cmd = fairseq_train_command(job, tmp_path / "ck")
    return build(cmd)[1]


def masking_counts(task, lang):
    """Counts over one language's (non-resampled) training streams."""
    split = f"train_{lang}"
    task.load_dataset(split)
    ds = task.dataset(split)
    pad, mask = task.source_dictionary.pad(), task.mask_idx
    c = dict(tokens=0, selected=0, masked=0, kept=0, random=0)
    randoms = []
    for i in range(len(ds)):
        item = ds[i]
        src, tgt = item["net_input.src_tokens"], item["target"]  # flattened keys
        sel = tgt.ne(pad)
        c["tokens"] += int(src.ne(pad).sum())
        c["selected"] += int(sel.sum())
        c["masked"] += int((sel & src.eq(mask)).sum())
        c["kept"] += int((sel & src.eq(tgt)).sum())
        rnd = sel & src.ne(mask) & src.ne(tgt)
        c["random"] += int(rnd.sum())
        randoms.append(src[rnd])
    return c, torch.cat(randoms)


@pytest.mark.parametrize("sep_emb", [False, True])
def test_masking_statistics(data_dir, tmp_path, sep_emb):
    task = make_task(data_dir, tmp_path, sep_emb)
    d = task.source_dictionary
    vocab = {lang: {d.index(l.split()[0]) for l in open(data_dir / f"dict.{lang}.txt")} for lang in ("en", "fr")}
    for lang, other in (("en", "fr"), ("fr", "en")):
        c, randoms = masking_counts(task, lang)
        assert c["selected"] / c["tokens"] == pytest.approx(0.15, abs=0.01)
        assert c["masked"] / c["selected"] == pytest.approx(0.8, abs=0.04)
        # a random draw can hit the original word: allow for that in "kept"
        assert c["kept"] / c["selected"] == pytest.approx(0.1, abs=0.03)
        assert c["random"] / c["selected"] == pytest.approx(0.1, abs=0.03)
        drawn = set(randoms.tolist())
        assert task.mask_idx not in drawn and not any(t < d.nspecial for t in drawn)
        assert not any(d[t].startswith("madeupword") for t in drawn)
        own_only = vocab[lang] - vocab[other]  # the "num*" words are shared by both toy languages
        other_only = vocab[other] - vocab[lang]
        if sep_emb:
            assert drawn <= vocab[lang]
        else:
            # shared vocabulary: random words come from both languages (paper: "could be foreign")
            assert drawn & other_only and drawn & own_only


def test_one_language_batches_and_sampling_alpha(data_dir, tmp_path):
    task = make_task(data_dir, tmp_path, sep_emb=False)
    alpha = TINY_PRETRAIN["sampling_alpha"]
    expected = language_sampling_probs([N_TRAIN["en"], N_TRAIN["fr"]], alpha)
    streams = np.zeros(2)
    batches = np.zeros(2)
    for epoch in (1, 2, 3):
        task.load_dataset("train", epoch=epoch)
        itr = task.get_batch_iterator(task.dataset("train"), max_sentences=16, seed=1, epoch=epoch)
        for batch in itr.next_epoch_itr(shuffle=True):
            ids = batch["net_input"]["src_lang_id"]
            assert ids.eq(ids[0]).all(), "a batch mixed languages"
            streams[int(ids[0])] += len(ids)
            batches[int(ids[0])] += 1
    assert streams / streams.sum() == pytest.approx(expected, abs=0.01)
    assert batches / batches.sum() == pytest.approx(expected, abs=0.03)
    # and not the unsmoothed share (alpha = 1)
    share = np.array([N_TRAIN["en"], N_TRAIN["fr"]]) / sum(N_TRAIN.values())
    assert abs(streams[1] / streams.sum() - share[1]) > 0.05


def test_mixed_batches_when_asked(data_dir, tmp_path):
    task = make_task(data_dir, tmp_path, sep_emb=False, one_language_batches=False)
    task.load_dataset("train")
    itr = task.get_batch_iterator(task.dataset("train"), max_sentences=16, seed=1)
    mixed = sum(int(b["net_input"]["src_lang_id"].unique().numel() > 1) for b in itr.next_epoch_itr(shuffle=True))
    assert mixed > 0


def test_masks_change_each_epoch_and_repeat_with_the_seed(data_dir, tmp_path):
    task = make_task(data_dir, tmp_path, sep_emb=False)
    task.load_dataset("train_en")
    ds = task.dataset("train_en")

    def masks(epoch):
        ds.set_epoch(epoch)
        # read past the 8-item LRU caches so that no stale item is returned
        return [ds[i]["target"].clone() for i in range(20)]

    first, second, again = masks(1), masks(2), masks(1)
    assert all(torch.equal(a, c) for a, c in zip(first, again))
    assert sum(not torch.equal(a, b) for a, b in zip(first, second)) >= 15


def test_one_sentence_per_sample_when_asked(data_dir, tmp_path):
    """sample_break_mode eos: every English training sentence is one sample, <s> first and its
    </s> last (masking leaves positions in place); the default packs sentences into streams."""
    from fairseq.data import data_utils

    setting = {"separate": {"embeddings": False, "layers": 0}}
    tasks = {}
    for mode in ("none", "eos"):
        pre = dict(TINY_PRETRAIN, sample_break_mode=mode)
        job = PretrainJob.build(data_dir, setting, TINY_MODEL, pre, ["en", "fr"], 1)
        cmd = fairseq_train_command(job, tmp_path / mode)
        assert cmd[cmd.index("--sample-break-mode") + 1] == mode
        tasks[mode] = build(cmd)[1]
        tasks[mode].load_dataset("train_en")
    raw = data_utils.load_indexed_dataset(str(data_dir / "en" / "train"), tasks["eos"].source_dictionary)
    eos_ds, stream_ds = tasks["eos"].dataset("train_en"), tasks["none"].dataset("train_en")
    assert len(eos_ds) == len(raw) == N_TRAIN["en"] and len(stream_ds) < len(raw)
    d = tasks["eos"].source_dictionary
    sentences = sorted(tuple(raw[i].tolist()) for i in range(len(raw)))
    samples = []
    for i in range(len(eos_ds)):  # shuffled: compare as a multiset
        item = eos_ds[i]
        src, tgt = item["net_input.src_tokens"], item["target"]
        assert len(src) <= TINY_MODEL["tokens_per_sample"]
        original = torch.where(tgt.ne(d.pad()), tgt, src)  # the sample before masking
        assert original[0] == d.bos() and original[-1] == d.eos()
        samples.append(tuple(original[1:].tolist()))
    assert sorted(samples) == sentences


def test_every_epochs_batches_group_samples_of_one_length(data_dir, tmp_path):
    """One sentence per sample, languages resampled anew each epoch: each epoch's order follows
    that epoch's sample sizes, so its batches pad as little as the first epoch's (ordered by the
    first epoch's sizes, later batches mixed all lengths: half the updates per second)."""
    setting = {"separate": {"embeddings": False, "layers": 0}}
    pre = dict(TINY_PRETRAIN, sample_break_mode="eos")
    job = PretrainJob.build(data_dir, setting, TINY_MODEL, pre, ["en", "fr"], 1)
    task = build(fairseq_train_command(job, tmp_path / "ck"))[1]
    task.load_dataset("train")  # once, as fairseq does for data that is not sharded
    ds = task.dataset("train")
    pad = task.source_dictionary.pad()
    padding = {}
    for epoch in (1, 2, 3):
        itr = task.get_batch_iterator(ds, max_sentences=16, seed=1, epoch=epoch)
        sizes = ds.sizes
        assert np.all(np.diff(sizes[ds.ordered_indices()]) >= 0), f"epoch {epoch}: not ordered by its sizes"
        tokens = [b["net_input"]["src_tokens"] for b in itr.next_epoch_itr(shuffle=True)]
        padding[epoch] = sum(int(t.eq(pad).sum()) for t in tokens) / sum(t.numel() for t in tokens)
    assert padding[1] < 0.1 and padding[2] <= padding[1] + 0.02 and padding[3] <= padding[1] + 0.02, padding


def test_sliced_dataset_cuts_items_into_consecutive_pieces():
    from xling.pretrain.fairseq_plugin.data import SlicedDataset

    items = [torch.arange(7), torch.arange(10, 13), torch.arange(20, 20), torch.arange(30, 35)]
    ds = SlicedDataset(items, [len(t) for t in items], 3)
    pieces = [ds[i].tolist() for i in range(len(ds))]
    assert pieces == [[0, 1, 2], [3, 4, 5], [6], [10, 11, 12], [], [30, 31, 32], [33, 34]]
    assert ds.sizes.tolist() == [len(p) for p in pieces] and sum(ds.sizes) == sum(len(t) for t in items)
    assert ds.ordered_indices().tolist() == list(range(7))
    with pytest.raises(ValueError, match="at least one token"):
        SlicedDataset(items, [len(t) for t in items], 0)


def test_sentence_windows_keep_every_token(data_dir, tmp_path):
    """pretrain.sentence_window (Liu et al.'s 20-token windows): every training sentence is cut
    into samples of at most that many tokens with <s>, and together they hold every token once."""
    from fairseq.data import data_utils

    window = 6
    setting = {"separate": {"embeddings": False, "layers": 0}}
    pre = dict(TINY_PRETRAIN, sample_break_mode="eos", sentence_window=window)
    job = PretrainJob.build(data_dir, setting, TINY_MODEL, pre, ["en", "fr"], 1)
    cmd = fairseq_train_command(job, tmp_path / "w")
    assert cmd[cmd.index("--sentence-window") + 1] == str(window)
    task = build(cmd)[1]
    task.load_dataset("train_en")
    ds = task.dataset("train_en")
    raw = data_utils.load_indexed_dataset(str(data_dir / "en" / "train"), task.source_dictionary)
    d = task.source_dictionary
    expected = sorted(tuple(raw[i][j:j + window - 1].tolist()) for i in range(len(raw))
                      for j in range(0, len(raw[i]), window - 1))
    samples = []
    for i in range(len(ds)):
        item = ds[i]
        src, tgt = item["net_input.src_tokens"], item["target"]
        assert len(src) <= window
        original = torch.where(tgt.ne(d.pad()), tgt, src)
        assert original[0] == d.bos()
        samples.append(tuple(original[1:].tolist()))
    assert sorted(samples) == expected
    assert sum(map(len, samples)) == sum(len(raw[i]) for i in range(len(raw)))
    assert len(samples) > len(raw)  # some sentence was longer than one window
