"""Shards, merge, filters, dedup, seeded shuffle and split, caps, bounded memory."""

import io
import random
import tracemalloc
from collections import Counter
from math import comb

import pytest

import xling.preprocess.shuffle as shuffle_mod
import xling.preprocess.split as split_mod
from xling import config as xcfg
from xling.errors import InputError
from xling.preprocess.shards import interleave, split_shards, tokenize_shard
from xling.preprocess.shuffle import n_buckets, shuffle_lines
from xling.preprocess.split import (
    DigestSet,
    SplitSettings,
    filter_lines,
    merge_and_split,
    sample_lines,
    selection_sample,
)
from xling.preprocess.tokenize import TokenizeSettings


def _corpus(n, seed=0, dup_every=10):
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "Mr.", "don't", "(x)"]
    lines = []
    for i in range(n):
        if dup_every and i % dup_every == 5 and lines:
            lines.append(lines[rng.randrange(len(lines))])  # exact duplicate
        else:
            lines.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 12))) + f" n{i}.")
    return lines


def _write(path, lines):
    path.write_text("".join(l + "\n" for l in lines), encoding="utf-8")
    return path


def split_settings(**kw) -> SplitSettings:
    """The paper config's split settings with some changed."""
    base = dict(valid_lines=5000, test_lines=5000, min_tokens=1, max_tokens=None, dedup=False, max_train_lines=None,
                seed=13, shuffle=True)
    return SplitSettings(**{**base, **kw})


def _split(tmp_path, shards, s, tag="a", **kw):
    outs = [tmp_path / f"{tag}.{x}.txt" for x in ("train", "valid", "test")]
    counts = merge_and_split(shards, *outs, s, **kw)
    return counts, [o.read_text(encoding="utf-8").splitlines() for o in outs]


def test_split_shards_interleave_roundtrip(tmp_path):
    lines = _corpus(103)
    src = _write(tmp_path / "raw.txt", lines)
    shards = [tmp_path / f"s{i}.txt" for i in range(4)]
    assert split_shards(src, shards) == [26, 26, 26, 25]
    assert list(interleave(shards)) == lines


def test_interleave_rejects_inconsistent_shards(tmp_path):
    a = _write(tmp_path / "a.txt", ["1", "3"])
    b = _write(tmp_path / "b.txt", ["2", "4", "6", "8"])
    with pytest.raises(InputError, match="b.txt"):
        list(interleave([a, b]))


def test_filters_and_dedup():
    lines = ["a b", "a b c", "a b c", "a b c d e", "a  b  c", "x " * 6]
    assert list(filter_lines(lines, 3, 5, dedup=True)) == ["a b c", "a b c d e", "a  b  c"]
    assert list(filter_lines(lines, 3, 5, dedup=False)) == ["a b c", "a b c", "a b c d e", "a  b  c"]


def test_split_deterministic_disjoint_deduped_filtered(tmp_path):
    lines = _corpus(600)
    shard = _write(tmp_path / "tok.txt", lines)
    s = split_settings(valid_lines=40, test_lines=30, min_tokens=3, max_tokens=10, dedup=True, seed=5)
    counts, (train, valid, test) = _split(tmp_path, [shard], s, "a")
    _, again = _split(tmp_path, [shard], s, "b")
    assert [train, valid, test] == again  # same seed -> same files
    _, other = _split(tmp_path, [shard], SplitSettings(**{**s.__dict__, "seed": 6}), "c")
    assert other[1] != valid
    assert len(valid) == 40 and len(test) == 30
    kept = list(filter_lines(lines, 3, 10, True))
    assert counts["kept"] == len(kept) and len(train) == len(kept) - 70
    everything = train + valid + test
    assert len(set(everything)) == len(everything)  # dedup and disjointness
    assert sorted(everything) == sorted(kept)  # nothing lost, nothing invented
    assert all(3 <= len(l.split()) <= 10 for l in everything)
    assert len(set(lines)) < len(lines)  # the corpus did have duplicates


def test_train_caps(tmp_path):
    shard = _write(tmp_path / "tok.txt", _corpus(500, dup_every=0))
    s = split_settings(valid_lines=20, test_lines=20, min_tokens=1, max_tokens=100, max_train_lines=100)
    _, (train, valid, test) = _split(tmp_path, [shard], s, "a")
    assert len(train) == 100
    _, (train2, _, _) = _split(tmp_path, [shard], s, "b", train_lines=37)
    assert len(train2) == 37 and set(train2) <= set(_corpus(500, dup_every=0))


def test_wiki_cc_train_matches_a_token_count(tmp_path):
    """Wiki-CC: the CC train split holds as many tokens as Wikipedia's, not as many lines (CC
    lines here are three times longer, so a line match would triple the tokens)."""
    rng = random.Random(3)
    lines = [" ".join(f"w{rng.randrange(1000)}" for _ in range(rng.randrange(20, 40))) for _ in range(3000)]
    shard = _write(tmp_path / "cc.tok.txt", lines)
    s = split_settings(valid_lines=50, test_lines=50)
    wiki_tokens = 10_000  # e.g. 1,000 Wikipedia lines of ~10 tokens
    counts, (train, valid, test) = _split(tmp_path, [shard], s, "a", train_tokens=wiki_tokens)
    got = sum(len(l.split()) for l in train)
    assert counts["train_tokens"] == got
    assert abs(got - wiki_tokens) < 0.05 * wiki_tokens  # a random subset: equal in expectation
    assert len(train) < 0.2 * len(lines)
    assert set(train) <= set(lines) and not set(train) & (set(valid) | set(test))
    # more tokens asked than there are: everything that is not held out
    counts, (train, _, _) = _split(tmp_path, [shard], s, "b", train_tokens=10 ** 9)
    assert len(train) == len(lines) - 100


def test_defaults_are_xlms_no_filter_no_dedup(tmp_path):
    """XLM drops empty lines only: a one-word line, a 400-token line and duplicates all stay."""
    lines = ["solo", "a b c", "a b c", " ".join(["x"] * 400)] * 30
    s = SplitSettings.from_config(xcfg.load(xcfg.REPO / "config" / "config.yaml")["preprocess"])
    assert (s.min_tokens, s.max_tokens, s.dedup, s.shuffle) == (1, None, False, True)
    assert list(filter_lines(lines, s.min_tokens, s.max_tokens, s.dedup)) == lines
    assert list(filter_lines(["", "a"], 1, None, False)) == ["a"]


def test_too_small_corpus_is_an_input_error(tmp_path):
    shard = _write(tmp_path / "tok.txt", _corpus(20, dup_every=0))
    with pytest.raises(InputError, match="valid_lines"):
        _split(tmp_path, [shard], split_settings(valid_lines=15, test_lines=15, min_tokens=1))


def test_sharded_equals_unsharded(tmp_path):
    raw = ["The U.S. isn't here, Mr. Smith said.", "", "« L’homme » (x) n’est pas là…"] + \
          [f"Line {i}: it’s “quoted” text, isn't it? ({i % 7})" for i in range(300)]
    src = _write(tmp_path / "raw.txt", raw)
    settings = TokenizeSettings("en")
    whole = tmp_path / "whole.tok"
    assert tokenize_shard(src, whole, settings, threads=1) == len(raw)
    shards = [tmp_path / f"raw.{i}.txt" for i in range(3)]
    split_shards(src, shards)
    toks = [tmp_path / f"tok.{i}.txt" for i in range(3)]
    for i, (a, b) in enumerate(zip(shards, toks)):
        tokenize_shard(a, b, settings, threads=2 if i == 0 else 1, chunk_lines=17)
    assert list(interleave(toks)) == whole.read_text(encoding="utf-8").splitlines()
    s = split_settings(valid_lines=10, test_lines=10, min_tokens=3)
    assert _split(tmp_path, toks, s, "sharded") == _split(tmp_path, [whole], s, "whole")


def test_tokenize_shard_invalid_utf8(tmp_path):
    src = tmp_path / "raw.txt"
    src.write_bytes(b"fine\nalso fine\n\xc3\x28 broken\n")
    with pytest.raises(InputError, match=r"raw\.txt:3: expected UTF-8"):
        tokenize_shard(src, tmp_path / "tok.txt", TokenizeSettings("en"))
    assert not (tmp_path / "tok.txt").exists()


def test_digest_set_membership():
    ds = DigestSet(buffer=4)
    values = [random.Random(i).getrandbits(64) for i in range(50)]
    for v in values[:25]:
        ds.add(v)
    assert len(ds) == 25 and ds.sorted.size == 24  # moved to the sorted array in batches of 4
    assert all(v in ds for v in values[:25]) and not any(v in ds for v in values[25:])


@pytest.mark.parametrize("shuffle", [True, False])
def test_merge_streams_in_bounded_memory(tmp_path, monkeypatch, shuffle):
    monkeypatch.setattr(split_mod, "DEDUP_BUFFER", 1024)
    monkeypatch.setattr(shuffle_mod, "SHUFFLE_BUCKET_BYTES", 1 << 19)
    # ~13 MB of text; the merge must not hold it: peak traced memory is the dedup digests and one
    # shuffle bucket only
    n = 30_000
    shard = tmp_path / "big.txt"
    with open(shard, "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(f"line {i} " + "filler " * 60 + "end\n")
    size = shard.stat().st_size
    s = split_settings(valid_lines=100, test_lines=100, min_tokens=3, max_tokens=250, shuffle=shuffle)
    tracemalloc.start()
    try:
        counts = merge_and_split([shard], *(tmp_path / f"o.{x}" for x in "abc"), s)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert counts["kept"] == n
    assert peak < size / 4, (peak, size)


def test_selection_sample_exact_count_and_uniform():
    for n, k in [(10, 3), (5, 9), (7, 0), (1, 1)]:
        assert sum(selection_sample(n, k, random.Random(1))) == min(n, k)
    # every 2-subset of 4 items equally likely (chi-square-ish bound on 6 cells)
    rng = random.Random(3)
    trials = 6000
    seen = Counter(tuple(i for i, f in enumerate(selection_sample(4, 2, rng)) if f) for _ in range(trials))
    assert len(seen) == comb(4, 2)
    expected = trials / comb(4, 2)
    assert all(abs(c - expected) < 5 * expected ** 0.5 for c in seen.values())


def test_sample_lines(tmp_path):
    src = _write(tmp_path / "cc.txt", [f"l{i}" for i in range(100)])
    out = tmp_path / "cc.sample.txt"
    assert sample_lines(src, out, 30, seed=1) == 30
    got = out.read_text().splitlines()
    assert len(set(got)) == 30 and got == sorted(got, key=lambda x: int(x[1:]))  # file order kept
    sample_lines(src, tmp_path / "again.txt", 30, seed=1)
    assert (tmp_path / "again.txt").read_text().splitlines() == got
    assert sample_lines(src, tmp_path / "all.txt", 500, seed=1) == 100


def _numbered(n):
    return [f"line {i} " + "w " * (i % 7) + "." for i in range(n)]


def _number(line):
    return int(line.split()[1])


def test_train_split_is_a_seeded_shuffle_of_the_lines(tmp_path):
    """XLM's get-data-wiki.sh shuffles every line before it cuts the splits: the train split is
    in random order (not the dump's), the same for the same seed, another for another seed;
    shuffle: false keeps the corpus's order."""
    lines = _numbered(400)
    shard = _write(tmp_path / "tok.txt", lines)
    s = split_settings(valid_lines=20, test_lines=20)
    _, (train, valid, test) = _split(tmp_path, [shard], s, "a")
    _, again = _split(tmp_path, [shard], s, "b")
    assert [train, valid, test] == again
    assert sorted(train + valid + test) == sorted(lines)
    order = [_number(line) for line in train]
    assert order != sorted(order)
    # far from the file's order: consecutive train lines are consecutive in the corpus ~1/n of the time
    assert sum(b == a + 1 for a, b in zip(order, order[1:])) < 0.05 * len(order)
    _, (other, _, _) = _split(tmp_path, [shard], split_settings(valid_lines=20, test_lines=20, seed=14), "c")
    assert other != train
    _, (kept_order, _, _) = _split(tmp_path, [shard], split_settings(valid_lines=20, test_lines=20, shuffle=False), "d")
    assert [_number(line) for line in kept_order] == sorted(_number(line) for line in kept_order)


def test_shuffled_caps_are_a_random_subset_in_random_order(tmp_path):
    lines = _numbered(500)
    shard = _write(tmp_path / "tok.txt", lines)
    s = split_settings(valid_lines=20, test_lines=20, max_train_lines=100)
    _, (train, _, _) = _split(tmp_path, [shard], s, "a")
    order = [_number(line) for line in train]
    assert len(train) == 100 and order != sorted(order) and max(order) > 400 and min(order) < 100


def _shuffled(lines, seed, bucket_bytes, tmp_path):
    out = io.BytesIO()
    n = shuffle_lines(iter(lines), out, seed, size_hint=sum(len(x) + 1 for x in lines), tmp_dir=tmp_path,
                      bucket_bytes=bucket_bytes)
    assert n == len(lines)
    return out.getvalue().decode("utf-8").split("\n")[:-1]


def test_shuffle_order_does_not_depend_on_the_memory_bound(tmp_path):
    """The order is the lines sorted by their random keys: one bucket or many give the same bytes."""
    lines = _numbered(3000) + ["dup", "dup", "tab\tinside", "carriage\rreturn", "ünïcødé 中文"]
    total = sum(len(x.encode()) + 1 for x in lines)
    assert n_buckets(total, 1 << 30) == 1 and n_buckets(total, 2000) > 20
    one = _shuffled(lines, 5, 1 << 30, tmp_path)
    many = _shuffled(lines, 5, 2000, tmp_path)
    assert one == many and sorted(one) == sorted(lines) and one != lines
    assert _shuffled(lines, 6, 2000, tmp_path) != one
    assert not list(tmp_path.iterdir())  # the buckets are gone


def test_shuffle_makes_every_order_equally_likely(tmp_path):
    """Over seeds, each of the 3! orders of three lines comes out equally often (5-sigma bound),
    with one bucket a line."""
    trials = 1200
    seen = Counter(tuple(_shuffled(["a", "b", "c"], seed, 2, tmp_path)) for seed in range(trials))
    assert len(seen) == 6
    expected = trials / 6
    assert all(abs(c - expected) < 5 * expected ** 0.5 for c in seen.values()), seen
