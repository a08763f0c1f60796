"""BPE stage: the three modes, anchors, SubwordTokenizer agreement with the .bpe files."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from xling.bpe import SubwordTokenizer, anchors_table, build_bpe, read_manifest
from xling.bpe.anchors import anchor_stats, token_counts
from xling.bpe.learn import count_words, learn_codes
from xling.errors import InputError

# Two toy "languages" with different letter inventories plus shared names (digits and proper
# nouns), as real text pairs share names and numbers.
NAMES = ["Paris", "Berlin", "Obama", "2019", "NASA", "Tokyo"]


def _words(rng: random.Random, letters: str, n: int) -> list[str]:
    return ["".join(rng.choice(letters) for _ in range(rng.randint(2, 7))) for _ in range(n)]


def _corpus(path: Path, vocab: list[str], rng: random.Random, lines: int) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for _ in range(lines):
            words = [rng.choice(vocab) for _ in range(rng.randint(4, 12))]
            words.insert(rng.randrange(len(words)), rng.choice(NAMES))
            fh.write(" ".join(words) + "\n")


@pytest.fixture(scope="module")
def texts(tmp_path_factory) -> dict[str, dict[str, Path]]:
    root = tmp_path_factory.mktemp("corpus")
    rng = random.Random(0)
    vocab = {"en": _words(rng, "abcdefghij", 300), "fr": _words(rng, "klmnopqrst", 300)}
    out: dict[str, dict[str, Path]] = {}
    for lang in ("en", "fr"):
        out[lang] = {}
        for split, n in (("train", 400), ("valid", 30), ("test", 30)):
            p = root / f"{lang}.{split}.txt"
            _corpus(p, vocab[lang], rng, n)
            out[lang][split] = p
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory, texts):
    root = tmp_path_factory.mktemp("bpe")
    dirs = {}
    for mode in ("joint", "per_language", "per_language_prefixed"):
        dirs[mode] = root / mode
        build_bpe(dirs[mode], mode, 200, texts)
    return dirs


def _types(path: Path) -> set[str]:
    return set(token_counts(path))


def test_no_anchors_vocabularies_are_disjoint(built):
    d = built["per_language_prefixed"]
    en, fr = _types(d / "en.train.bpe"), _types(d / "fr.train.bpe")
    assert en and fr and not (en & fr)
    assert all(t.startswith("en_") for t in en) and all(t.startswith("fr_") for t in fr)
    assert json.loads((d / "anchors.json").read_text())["shared"] == 0


@pytest.mark.parametrize("mode", ["joint", "per_language"])
def test_shared_names_are_anchors(built, mode):
    d = built[mode]
    shared = _types(d / "en.train.bpe") & _types(d / "fr.train.bpe")
    assert shared  # the names and digits are segmented identically on both sides
    stats = json.loads((d / "anchors.json").read_text())
    assert stats["shared"] == len(shared)
    assert stats["union_size"] == len(_types(d / "en.train.bpe") | _types(d / "fr.train.bpe"))
    assert set(stats["examples"]) <= shared


def test_prefixed_is_per_language_plus_prefix(built):
    plain, pref = built["per_language"], built["per_language_prefixed"]
    for lang in ("en", "fr"):
        a = (plain / f"{lang}.valid.bpe").read_text().splitlines()
        b = (pref / f"{lang}.valid.bpe").read_text().splitlines()
        assert [" ".join(f"{lang}_{t}" for t in line.split()) for line in a] == b


def test_files_and_manifest(built):
    for mode, d in built.items():
        m = read_manifest(d / "bpe.json")
        assert m["mode"] == mode and m["languages"] == ["en", "fr"]
        for lang in ("en", "fr"):
            assert (d / m["codes"][lang]).is_file()
            for split in ("train", "valid", "test"):
                assert (d / f"{lang}.{split}.bpe").is_file()
    assert read_manifest(built["joint"] / "bpe.json")["codes"] == {"en": "codes.joint", "fr": "codes.joint"}


def test_segmentation_round_trips_to_words(built, texts):
    for d in built.values():
        for lang in ("en", "fr"):
            seg = (d / f"{lang}.test.bpe").read_text().splitlines()
            orig = texts[lang]["test"].read_text().splitlines()
            strip = (lambda t: t[3:]) if "prefixed" in d.name else (lambda t: t)
            words = [" ".join(strip(t) for t in line.split()).replace("@@ ", "") for line in seg]
            assert words == orig


def test_joint_learns_min_of_merges_and_possible(tmp_path, texts):
    paths = [texts["en"]["train"], texts["fr"]["train"]]
    possible = learn_codes(paths, tmp_path / "all", 10**6)
    assert 0 < possible < 10**6
    assert learn_codes(paths, tmp_path / "few", possible // 2) == possible // 2
    assert learn_codes(paths, tmp_path / "more", possible + 50) == possible
    lines = (tmp_path / "few").read_text().splitlines()
    assert lines[0].startswith("#version") and len(lines) == 1 + possible // 2
    # with min_frequency=1 every merge stops only when each word is one symbol
    n = learn_codes(paths, tmp_path / "full", 10**6, min_frequency=1)
    from xling.bpe.apply import load_codes, segment_words
    bpe = load_codes(tmp_path / "full")
    words = list(count_words(paths))
    assert n >= possible
    assert all(len(p) == 1 for p in segment_words(bpe, words))


def test_subword_tokenizer_matches_bpe_files(built, texts):
    for d in built.values():
        for lang in ("en", "fr"):
            tok = SubwordTokenizer(d / "bpe.json", lang)
            orig = texts[lang]["valid"].read_text().splitlines()
            seg = (d / f"{lang}.valid.bpe").read_text().splitlines()
            for o, s in zip(orig, seg):
                pieces = tok.words_to_subwords(o.split())
                assert len(pieces) == len(o.split())
                assert " ".join(p for word in pieces for p in word) == s


def test_subword_tokenizer_rejects_bad_input(built, tmp_path):
    tok = SubwordTokenizer(built["joint"] / "bpe.json", "en")
    with pytest.raises(ValueError):
        tok.words_to_subwords(["two words"])
    with pytest.raises(InputError):
        SubwordTokenizer(built["joint"] / "bpe.json", "zh")
    with pytest.raises(InputError, match="bpe.json"):
        SubwordTokenizer(tmp_path / "bpe.json", "en")


def test_anchor_stats_definition():
    from collections import Counter
    st = anchor_stats({"en": Counter(a=5, b=1, c=2), "fr": Counter(b=3, c=9, d=1)})
    assert st["shared"] == 2 and st["union_size"] == 4
    assert st["vocab_size"] == {"en": 3, "fr": 3}
    assert st["examples"] == ["c", "b"]  # by min count: c=2, b=1
    table = anchors_table([("Default", st), ("No anchors", {**st, "shared": 0, "shared_fraction_of_union": 0.0})])
    assert "| Default | 3 | 3 | 4 | 2 | 50.0 |" in table
    assert "| No anchors | 3 | 3 | 4 | 0 | 0.0 |" in table


def test_monolingual(tmp_path, texts):
    m = build_bpe(tmp_path / "mono", "joint", 100, {"en": texts["en"]})
    assert m["languages"] == ["en"] and not (tmp_path / "mono" / "anchors.json").exists()
    tok = SubwordTokenizer(tmp_path / "mono" / "bpe.json", "en")
    first = texts["en"]["train"].read_text().splitlines()[0].split()
    line = (tmp_path / "mono" / "en.train.bpe").read_text().splitlines()[0]
    assert " ".join(p for w in tok.words_to_subwords(first) for p in w) == line


def test_parallel_workers_give_identical_files(tmp_path, texts, built):
    build_bpe(tmp_path / "par", "per_language_prefixed", 200, texts, workers=2)
    for name in ("codes.en", "codes.fr", "en.train.bpe", "fr.valid.bpe", "anchors.json"):
        assert (tmp_path / "par" / name).read_bytes() == (built["per_language_prefixed"] / name).read_bytes()


@pytest.mark.parametrize("workers", [1, 3])
def test_apply_file_writes_what_subword_nmt_writes(tmp_path, texts, built, monkeypatch, workers):
    """Our ordered parallel pass gives subword-nmt's own ``process_lines`` output line for line,
    also with chunks far smaller than the file (order across workers) and a last line without a
    newline; prefixed mode adds the language to every piece of it."""
    import io

    from xling.bpe import apply as apply_mod
    from xling.bpe.manifest import prefix_token

    monkeypatch.setattr(apply_mod, "BPE_CHUNK_LINES", 7)
    src = tmp_path / "in.txt"
    src.write_text(texts["en"]["train"].read_text() + "Paris abcd", encoding="utf-8")
    bpe = apply_mod.load_codes(built["joint"] / "codes.joint")
    reference = io.StringIO()
    bpe.process_lines(str(src), reference, num_workers=1)
    apply_mod.apply_file(bpe, src, tmp_path / "out.bpe", workers=workers)
    assert (tmp_path / "out.bpe").read_text(encoding="utf-8") == reference.getvalue()
    apply_mod.apply_file(bpe, src, tmp_path / "out.prefixed", prefix_lang="en", workers=workers)
    expected = [" ".join(prefix_token("en", t) for t in line.split()) for line in reference.getvalue().splitlines()]
    assert (tmp_path / "out.prefixed").read_text(encoding="utf-8").splitlines() == expected


def test_canonical_setting_on_paper_config():
    from xling.bpe import canonical_setting
    from xling.config import REPO, load_yaml
    settings = load_yaml(REPO / "config" / "config.yaml")["settings"]
    canon = {s: canonical_setting(settings, s) for s in settings}
    # the Sep* rows change parameters, not data: they reuse Default anchors' BPE
    for s in ("sep_emb", "sep_l1_3", "sep_l1_6", "sep_emb_l1_3", "sep_emb_l1_6"):
        assert canon[s] == "default_anchors"
    for s in ("default", "wiki_cc", "no_anchors", "default_anchors", "extra_anchors"):
        assert canon[s] == s


def _materialise_sample(train: dict[str, Path], sample, out: Path) -> None:
    """XLM's ``shuf -r -n <lines> train.<lang> >> bpe.train`` for each language, from the same draws."""
    from xling.bpe.sample import draw_lines
    with open(out, "w", encoding="utf-8") as fo:
        for lang, path in train.items():
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
            for i, times in zip(*draw_lines(len(lines), sample.lines, sample.seed, lang)):
                fo.write(lines[i] * int(times))


def test_joint_sample_is_xlms_bpe_train(tmp_path, texts):
    """Codes learnt with a sample are those learnt on XLM's bpe.train written out: each language's
    lines drawn with replacement (more draws than lines, so lines repeat), concatenated."""
    from xling.bpe import JointSample
    from xling.bpe.sample import draw_lines
    sample = JointSample(lines=700, seed=3)
    m = build_bpe(tmp_path / "s", "joint", 200, texts, sample=sample)
    assert m["sample"] == {"lines": 700, "seed": 3}
    train = {lang: texts[lang]["train"] for lang in texts}
    _materialise_sample(train, sample, tmp_path / "bpe.train")
    learn_codes([tmp_path / "bpe.train"], tmp_path / "codes.xlm", 200)
    assert (tmp_path / "s" / "codes.joint").read_bytes() == (tmp_path / "codes.xlm").read_bytes()
    assert len((tmp_path / "bpe.train").read_text().splitlines()) == 2 * 700
    idx, times = draw_lines(400, 700, 3, "en")
    assert times.sum() == 700 and times.max() > 1 and list(idx) == sorted(set(idx))
    # a language has its own draws; the same seed gives the same draws
    assert list(draw_lines(400, 700, 3, "fr")[0]) != list(idx)
    assert list(draw_lines(400, 700, 3, "en")[0]) == list(idx)


def _merge_share(codes: Path, letters: str) -> float:
    merges = codes.read_text(encoding="utf-8").splitlines()[1:]
    return sum(all(c in letters + "</w>" for c in "".join(m.split())) for m in merges) / len(merges)


def test_joint_sample_gives_each_language_an_equal_say(tmp_path):
    """A corpus ten times larger takes most of the merges of codes learnt on the whole corpora;
    on an equal sample of each language (XLM's recipe) the two languages share them about evenly."""
    from xling.bpe import JointSample
    rng = random.Random(1)
    vocab = {"en": _words(rng, "abcdefghij", 400), "fr": _words(rng, "klmnopqrst", 400)}
    texts = {}
    for lang, n in (("en", 4000), ("fr", 400)):
        texts[lang] = {}
        for split, k in (("train", n), ("valid", 10), ("test", 10)):
            p = tmp_path / f"{lang}.{split}.txt"
            _corpus(p, vocab[lang], rng, k)
            texts[lang][split] = p
    build_bpe(tmp_path / "full", "joint", 300, texts)
    build_bpe(tmp_path / "sample", "joint", 300, texts, sample=JointSample(lines=2000, seed=1))
    full_en, full_fr = (_merge_share(tmp_path / "full" / "codes.joint", a) for a in ("abcdefghij", "klmnopqrst"))
    en, fr = (_merge_share(tmp_path / "sample" / "codes.joint", a) for a in ("abcdefghij", "klmnopqrst"))
    assert full_en > 2 * full_fr, (full_en, full_fr)
    assert abs(en - fr) < 0.25 * (en + fr), (en, fr)


def test_sample_params_and_refusals(tmp_path, texts):
    from xling import config as xcfg
    from xling.bpe import JointSample, sample_params
    cfg = xcfg.load(xcfg.REPO / "config" / "config.yaml")
    # the paper config follows XLM's README: 10M lines of each language
    assert cfg["bpe"]["sample_lines"] == 10_000_000 == xcfg.schema()["properties"]["bpe"]["properties"][
        "sample_lines"]["default"]
    assert sample_params(cfg["bpe"], "joint") == {"lines": 10_000_000, "seed": cfg["bpe"]["sample_seed"]}
    assert sample_params(cfg["bpe"], "per_language") is None
    assert sample_params({**cfg["bpe"], "sample_lines": None}, "joint") is None
    with pytest.raises(ValueError, match="joint codes"):
        build_bpe(tmp_path / "x", "per_language", 50, texts, sample=JointSample(lines=10, seed=1))
    with pytest.raises(ValueError, match="at least one line"):
        JointSample(lines=0, seed=1)
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(InputError, match=r"empty\.txt: expected a train split with lines"):
        build_bpe(tmp_path / "y", "joint", 50, {"en": {**texts["en"], "train": empty}, "fr": texts["fr"]},
                  sample=JointSample(lines=10, seed=1))
