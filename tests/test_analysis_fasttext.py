"""Figure 4's baseline trained on the run's own corpus (analysis.words.fasttext: corpus): rule
fasttext_vectors' script on real text (the first units of an ELTeC novel, tokenised as the corpus
stage tokenises), vectors that read_vec reads, the same bytes every run; its bad inputs."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from support.script_run import run_script
from support.shared_data import ELTEC, needs
from xling.analysis.fasttext import FastTextSettings, train_vectors
from xling.analysis.vec import read_vec
from xling.config import section_defaults
from xling.errors import InputError

# small enough for a test: the schema's other options (skip-gram, windows of 5, 5 negatives, ...)
SMALL = {**section_defaults("analysis", "words", "fasttext_train"), "dim": 50, "bucket": 100_000}


@pytest.fixture(scope="module")
def novel(tmp_path_factory) -> Path:
    """3,000 units of Trollope's novel (230k tokens), Moses-tokenised as R/corpus/en/wiki.train.txt is."""
    from xling.preprocess.tei import tei_units
    from xling.preprocess.tokenize import LineTokenizer, TokenizeSettings

    if not ELTEC.is_dir():
        pytest.skip("../shared/data/eltec not present")
    units = itertools.islice(tei_units(ELTEC / "eng" / "ENG18400_Trollope.xml"), 3000)
    tok = LineTokenizer(TokenizeSettings("en"))
    path = tmp_path_factory.mktemp("corpus") / "wiki.train.txt"
    path.write_text("".join(tok(u) + "\n" for u in units), encoding="utf-8")
    return path


def test_the_schema_section_is_the_trainers_settings():
    """The rule passes analysis.words.fasttext_train as it is: its keys are the type's fields, and
    the defaults are wiki.xx.vec's (skip-gram, dim 300, fastText's minCount, window, n-grams)."""
    settings = FastTextSettings(**section_defaults("analysis", "words", "fasttext_train"))
    assert settings.options() == {"model": "skipgram", "dim": 300, "epoch": 5, "minCount": 5, "ws": 5, "neg": 5,
                                  "minn": 3, "maxn": 6, "bucket": 2_000_000, "lr": 0.05, "thread": 1, "verbose": 0}


@needs(ELTEC)
def test_vectors_of_a_novel_as_the_rule_writes_them(novel, tmp_path):
    out = tmp_path / "analysis" / "words" / "en" / "fasttext.vec"
    run_script("fasttext_vectors", {"text": str(novel)}, {"vec": str(out)}, {"fasttext": SMALL},
               tmp_path / "fasttext.log")
    words, vectors = read_vec(out)
    counts = Counter(novel.read_text(encoding="utf-8").split())
    frequent = {w for w, c in counts.items() if c >= SMALL["min_count"]}
    # fastText's vocabulary: every word seen min_count times, and its end-of-line token
    assert set(words) == frequent | {"</s>"} and vectors.shape == (len(words), SMALL["dim"])
    assert np.isfinite(vectors).all() and words[0] == max(frequent, key=counts.__getitem__)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def nearest(word: str, k: int = 20) -> list[str]:
        return [words[i] for i in np.argsort(-(unit @ unit[words.index(word)]))[1:k + 1]]

    # skip-gram with character n-grams on 230k tokens: a word's neighbours share its contexts
    assert "mother" in nearest("father") and "days" in nearest("day"), (nearest("father"), nearest("day"))


@needs(ELTEC)
def test_the_same_vectors_every_run(novel, tmp_path):
    """One thread, fresh pages for fastText's matrix (xling.analysis.fasttext): the same bytes."""
    text = tmp_path / "text.txt"
    text.write_text("".join(novel.read_text(encoding="utf-8").splitlines(keepends=True)[:300]), encoding="utf-8")
    first, again = tmp_path / "first.vec", tmp_path / "again.vec"
    settings = FastTextSettings(**SMALL)
    assert train_vectors(text, first, settings) == train_vectors(text, again, settings)
    assert first.read_bytes() == again.read_bytes()


def test_the_training_process_imports_this_very_package(tmp_path, monkeypatch):
    """A job has the checkout's src/ on sys.path only (workflow/scripts/_setup.py), not in the
    environment: the process that trains must still import this xling, not another one."""
    other = tmp_path / "other" / "xling"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("raise ImportError('another xling')\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(other.parent))
    text = tmp_path / "text.txt"
    text.write_text("the cat sees the dog\n" * 10, encoding="utf-8")
    assert train_vectors(text, tmp_path / "v.vec", FastTextSettings(**SMALL))["words"] == 5  # 4 words and </s>


def test_a_text_without_a_frequent_word_or_no_text_is_refused(tmp_path):
    rare = tmp_path / "rare.txt"
    rare.write_text("one two three\nfour five\n", encoding="utf-8")
    out = tmp_path / "out.vec"
    with pytest.raises(InputError, match=r"rare\.txt: expected a word seen at least min_count=5 times"):
        train_vectors(rare, out, FastTextSettings(**SMALL))
    assert not out.exists()
    with pytest.raises(InputError, match=r"missing\.txt: expected a text file to train fastText on"):
        train_vectors(tmp_path / "missing.txt", out, FastTextSettings(**SMALL))
