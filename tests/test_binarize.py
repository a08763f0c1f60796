"""Binarisation: shared dictionary, per-language vocabularies, fairseq-loadable data."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from fairseq.data import Dictionary, data_utils

from xling.binarize import alias_language, binarize, binarize_variant
from xling.errors import InputError


@pytest.fixture(scope="module")
def bpe_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("bpe")
    rng = random.Random(0)
    vocab = {"en": ["the", "ca@@", "t", "Paris", "2019", "do@@", "g"],
             "fr": ["le", "ch@@", "at", "Paris", "2019", "chi@@", "en", "zz"]}
    for lang, words in vocab.items():
        for split, n in (("train", 60), ("valid", 8), ("test", 8)):
            lines = [" ".join(rng.choice(words[:-1] if split == "train" and lang == "fr" else words)
                              for _ in range(rng.randint(1, 12))) for _ in range(n)]
            (d / f"{lang}.{split}.bpe").write_text("\n".join(lines) + "\n")
    return d


def texts(bpe_dir: Path, langs) -> dict:
    """The bpe stage's files of ``langs``, as the binarize rule declares them."""
    return {l: {s: bpe_dir / f"{l}.{s}.bpe" for s in ("train", "valid", "test")} for l in langs}


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory, bpe_dir) -> Path:
    out = tmp_path_factory.mktemp("bin") / "default" / "en-fr"
    binarize(texts(bpe_dir, ["en", "fr"]), out, workers=1)
    return out


def _train_types(path: Path) -> set[str]:
    return {t for line in path.read_text().splitlines() for t in line.split()}


def test_layout(bin_dir):
    assert (bin_dir / "dict.txt").is_file()
    for lang in ("en", "fr"):
        assert (bin_dir / f"dict.{lang}.txt").is_file()
        for split in ("train", "valid", "test"):
            assert (bin_dir / lang / f"{split}.bin").is_file() and (bin_dir / lang / f"{split}.idx").is_file()
    # multilingual_masked_lm takes every sub-folder as a language
    assert sorted(p.name for p in bin_dir.iterdir() if p.is_dir()) == ["en", "fr"]


def test_preprocess_logs_are_per_language(bin_dir):
    # fairseq-preprocess runs in-process, once per language: each log names its own texts only.
    for lang, other in (("en", "fr"), ("fr", "en")):
        log = (bin_dir / f"preprocess.{lang}.log").read_text()
        assert f"{lang}.train.bpe" in log and f"{other}.train.bpe" not in log


def test_dictionaries(bin_dir, bpe_dir):
    shared = Dictionary.load(str(bin_dir / "dict.txt"))
    en, fr = (_train_types(bpe_dir / f"{l}.train.bpe") for l in ("en", "fr"))
    real = {s for s in shared.symbols[shared.nspecial:] if not s.startswith("madeupword")}
    assert real == en | fr and len(shared) % 8 == 0
    for lang, types in (("en", en), ("fr", fr)):
        rows = [line.rsplit(" ", 1) for line in (bin_dir / f"dict.{lang}.txt").read_text().splitlines()]
        assert {t for t, _ in rows} == types
        counts = {t: int(c) for t, c in rows}
        text = (bpe_dir / f"{lang}.train.bpe").read_text().split()
        assert counts == {t: text.count(t) for t in types}
    assert "zz" not in shared.indices  # only in French valid/test: not in the vocabulary


def test_round_trip(bin_dir, bpe_dir):
    d = Dictionary.load(str(bin_dir / "dict.txt"))
    for lang in ("en", "fr"):
        for split in ("train", "valid", "test"):
            ds = data_utils.load_indexed_dataset(str(bin_dir / lang / split), d)
            lines = (bpe_dir / f"{lang}.{split}.bpe").read_text().splitlines()
            assert len(ds) == len(lines)
            for i, line in enumerate(lines):
                assert ds[i][-1].item() == d.eos()
                expected = " ".join(t if t in d.indices else d.unk_word for t in line.split())
                assert d.string(ds[i]) == expected
    # a token seen only in French valid/test is unknown, the rest round-trip exactly
    ds = data_utils.load_indexed_dataset(str(bin_dir / "fr" / "valid"), d)
    assert any(d.unk() in ds[i].tolist() for i in range(len(ds)))


def test_missing_input(tmp_path):
    with pytest.raises(InputError, match="fr.train.bpe"):
        binarize(texts(tmp_path, ["fr"]), tmp_path / "out")
    assert not (tmp_path / "out" / "dict.txt").exists()


def test_multilingual_masked_lm_task_loads_it(bin_dir, bpe_dir):
    from fairseq import options, tasks

    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, [str(bin_dir), "--task", "multilingual_masked_lm",
                                                "--arch", "roberta_base", "--tokens-per-sample", "32"])
    task = tasks.setup_task(args)
    task.load_dataset("valid")
    ds = task.datasets["valid"]
    # both language sub-folders, cut into blocks of at most 32 tokens (+ <s>)
    n_tokens = sum(len(line.split()) + 1 for l in ("en", "fr")
                   for line in (bpe_dir / f"{l}.valid.bpe").read_text().splitlines())
    assert len(ds) >= n_tokens // 33 > 0


def test_code_switched_variants_share_one_dictionary(tmp_path, bpe_dir):
    """A second switched copy brings a token the first lacks: the shared dictionary counts every
    copy, each copy is binarised with it, and fairseq trains epoch k on copy k mod n."""
    from support.inprocess import build
    from support.toy_data import TINY_MODEL, TINY_PRETRAIN
    from xling.pretrain.command import data_path, fairseq_train_command
    from xling.pretrain.job import PretrainJob

    bpe = tmp_path / "bpe"
    bpe.mkdir()
    for f in bpe_dir.iterdir():
        (bpe / f.name).write_text(f.read_text())
    (bpe / "en.train.v1.bpe").write_text("the chien@@ s Paris\n" * 40)
    (bpe / "fr.train.v1.bpe").write_text("le dog Paris\n" * 40)
    out = tmp_path / "bin"
    binarize(texts(bpe, ["en", "fr"]), out, copies={l: [bpe / f"{l}.train.v1.bpe"] for l in ("en", "fr")})
    d = Dictionary.load(str(out / "dict.txt"))
    assert "chien@@" in d.indices and "dog" in d.indices
    binarize_variant(out / "dict.txt", {l: bpe / f"{l}.train.v1.bpe" for l in ("en", "fr")}, out / "v1")
    assert sorted(p.name for p in (out / "v1").iterdir()) == ["en", "fr"]
    ds = data_utils.load_indexed_dataset(str(out / "v1" / "en" / "train"), d)
    assert d.string(ds[0]) == "the chien@@ s Paris" and len(ds) == 40
    with pytest.raises(InputError, match="en.train.v2.bpe.*code-switched copy of en"):
        binarize_variant(out / "dict.txt", {"en": bpe / "en.train.v2.bpe"}, out / "v2")

    job = PretrainJob.build([out, out / "v1"], {"separate": {"embeddings": False, "layers": 0}},
                            dict(TINY_MODEL, tokens_per_sample=16), TINY_PRETRAIN, ["en", "fr"], 1)
    cmd = fairseq_train_command(job, tmp_path / "ck")
    assert cmd[1] == data_path([out, out / "v1"])
    _, task, _, _ = build(cmd)

    def train_tokens(epoch):
        task.load_dataset("train", epoch=epoch)
        ds = task.datasets["train"]
        return {t for i in range(len(ds)) for t in d.string(ds[i]["target"][ds[i]["target"].ne(d.pad())]).split()}

    # targets are the masked positions: over a whole epoch they cover the copy's vocabulary
    assert "chien@@" in train_tokens(2) and "chien@@" not in train_tokens(1)
    assert "chien@@" not in train_tokens(3)  # epoch 3 is copy 0 again


def test_alias_language_reads_the_same_data_under_a_second_id(tmp_path, bpe_dir):
    """Figure 7's bilingual en-en' model: English data under 'en' and 'en_prime', no copy made."""
    mono = tmp_path / "mono" / "en"
    binarize(texts(bpe_dir, ["en"]), mono)
    out = tmp_path / "en-en_prime"
    data = [mono / "en" / f"{s}.{x}" for s in ("train", "valid", "test") for x in ("bin", "idx")]
    alias_language(mono / "dict.txt", mono / "dict.en.txt", data, "en", "en_prime", out)
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["en", "en_prime"]
    for name in ("en", "en_prime"):
        for split in ("train", "valid", "test"):
            built = out / name / f"{split}.bin"
            assert built.read_bytes() == (mono / "en" / f"{split}.bin").read_bytes()
            assert built.stat().st_ino == (mono / "en" / f"{split}.bin").stat().st_ino  # a hard link
        assert (out / f"dict.{name}.txt").read_text() == (mono / "dict.en.txt").read_text()
    assert (out / "dict.txt").read_text() == (mono / "dict.txt").read_text()
    # the dictionaries (the rule's outputs) are fresh files, newer than every input: a hard link
    # would carry its source's older time, which Snakemake takes for a stale output
    newest_input = max(p.stat().st_mtime_ns for p in [mono / "dict.txt", mono / "dict.en.txt", *data])
    for f in ("dict.txt", "dict.en.txt", "dict.en_prime.txt"):
        assert (out / f).stat().st_ino != (mono / "dict.txt").stat().st_ino
        assert (out / f).stat().st_mtime_ns >= newest_input
    assert not list(out.glob(".*tmp"))
    with pytest.raises(InputError, match="nowhere.*binarize_mono output"):
        alias_language(tmp_path / "nowhere", mono / "dict.en.txt", data, "en", "en_prime", tmp_path / "x")
