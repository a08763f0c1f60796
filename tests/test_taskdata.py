"""xling.taskdata: readers of the real task formats -> normalised task files.

UD and Tatoeba readers run on the real files in ../shared/data; the others on small files written
here in the real formats (XNLI-1.0 TSV, MultiNLI jsonl, XTREME panx tars, CoNLL-2003, Levow)."""

from __future__ import annotations

import io
import json
import runpy
import tarfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from xling.download import safe_extract
from xling.errors import InputError
from xling.preprocess.segment import segmenter
from xling.taskdata.ner import (
    build_conll2003,
    build_levow,
    build_wikiann,
    entity_spans,
    iob1_to_bio,
    read_conll2003,
    read_levow,
    realign_to_words,
)
from xling.taskdata.nli import build_xnli, read_xnli_tsv
from xling.taskdata.parallel_text import read_tatoeba, read_xnli_15way, tatoeba_files
from xling.taskdata.textio import blank_line_blocks, read_bio
from xling.taskdata.ud import build_ud, validate_conllu

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
UD = SHARED / "ud-2.3"
TATOEBA = SHARED / "tatoeba-v1"
needs_shared = pytest.mark.skipif(not UD.is_dir() or not TATOEBA.is_dir(), reason="../shared/data not present")


def _raises_at(fn, line: int | None, *words: str) -> InputError:
    with pytest.raises(InputError) as err:
        fn()
    assert err.value.line == line, str(err.value)
    for w in words:
        assert w in str(err.value)
    return err.value


# ---------------------------------------------------------------------------------------------
# tag maths


def _is_bio(tags):
    """Definition: every entity starts with B-; an I-X only follows B-X or I-X."""
    prev = "O"
    for t in tags:
        if t.startswith("I-") and prev[2:] != t[2:]:
            return False
        prev = t
    return True


@pytest.mark.parametrize(
    "iob1,bio",
    [
        (["I-PER", "I-PER", "O", "I-LOC"], ["B-PER", "I-PER", "O", "B-LOC"]),
        (["I-ORG", "B-ORG", "I-ORG"], ["B-ORG", "B-ORG", "I-ORG"]),  # two adjacent ORGs stay two
        (["I-PER", "I-LOC", "I-LOC"], ["B-PER", "B-LOC", "I-LOC"]),  # type change starts an entity
        (["O", "O"], ["O", "O"]),
    ],
)
def test_iob1_to_bio(iob1, bio):
    out = iob1_to_bio(iob1)
    assert out == bio and _is_bio(out)
    # same entities: IOB1 read with the IOB1 rule (I- continues same type, B- splits) = BIO spans
    assert entity_spans(out) == entity_spans(bio)


def test_entity_spans():
    assert entity_spans(["B-PER", "I-PER", "O", "I-LOC", "B-LOC", "I-ORG"]) == [
        (0, 2, "PER"), (3, 4, "LOC"), (4, 5, "LOC"), (5, 6, "ORG")]


def test_realign_rule():
    chars = list("在北京大学见张三")
    tags = ["O", "B-ORG", "I-ORG", "I-ORG", "I-ORG", "O", "B-PER", "I-PER"]
    # entity across two words; a word starting outside and reaching into an entity
    words = ["在", "北京", "大学", "见张", "三"]
    assert realign_to_words(chars, tags, words) == ["O", "B-ORG", "I-ORG", "B-PER", "I-PER"]
    assert realign_to_words(chars, tags, ["在北京", "大学见", "张三"]) == ["B-ORG", "I-ORG", "B-PER"]
    # two entities merged in one word: the first wins, the second continues as B on its next word
    tags2 = ["O", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "O", "O", "O"]
    assert realign_to_words(chars, tags2, ["在", "北京大", "学", "见张三"]) == ["O", "B-LOC", "B-ORG", "O"]
    # identity segmentation keeps the labels exactly
    assert realign_to_words(chars, tags, chars) == tags
    with pytest.raises(ValueError):
        realign_to_words(chars, tags, ["在", "北京"])


# ---------------------------------------------------------------------------------------------
# XNLI / MultiNLI

XNLI_HEADER = ("language\tgold_label\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1_parse\t"
               "sentence2_parse\tsentence1\tsentence2\tpromptID\tpairID\tgenre\tlabel1\tlabel2\tlabel3\t"
               "label4\tlabel5\tsentence1_tokenized\tsentence2_tokenized\tmatch")


def _xnli_row(lang, label, s1, s2, pair=1):
    return "\t".join([lang, label, "", "", "", "", s1, s2, "1", str(pair), "fiction", label, label, label,
                      label, label, s1, s2, "True"])


def _write_xnli(root: Path, rows_dev, rows_test):
    d = root / "XNLI-1.0"
    d.mkdir(parents=True, exist_ok=True)
    (d / "xnli.dev.tsv").write_text("\n".join([XNLI_HEADER] + rows_dev) + "\n", encoding="utf-8")
    (d / "xnli.test.tsv").write_text("\n".join([XNLI_HEADER] + rows_test) + "\n", encoding="utf-8")


def test_build_xnli(tmp_path):
    xnli, mnli, out = tmp_path / "xnli", tmp_path / "mnli", tmp_path / "tasks"
    dev = [_xnli_row("en", "entailment", "A man eats.", "Someone eats."),
           _xnli_row("fr", "neutral", "Un homme mange.", "Il a faim."),
           _xnli_row("zh", "contradiction", "一个人在吃饭。", "没有人吃饭。"),
           _xnli_row("de", "neutral", "x", "y")]
    test = [_xnli_row("fr", "contradiction", "Il pleut.", "Il fait beau."),
            _xnli_row("en", "neutral", "It rains.", "It is cold."),
            _xnli_row("zh", "entailment", "下雨了。", "天气不好。")]
    _write_xnli(xnli, dev, test)
    (mnli / "multinli_1.0").mkdir(parents=True)
    rows = [{"gold_label": "neutral", "sentence1": "P1", "sentence2": "H1"},
            {"gold_label": "-", "sentence1": "P2", "sentence2": "H2"},
            {"gold_label": "contradiction", "sentence1": "P3 has\ta tab", "sentence2": "H3"}]
    (mnli / "multinli_1.0" / "multinli_1.0_train.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    counts = build_xnli(xnli, mnli, ["en", "fr", "zh"], out)
    assert counts == {"en": {"dev": 1, "test": 1, "train": 2}, "fr": {"dev": 1, "test": 1}, "zh": {"dev": 1, "test": 1}}
    expected = "premise\thypothesis\tlabel\nP1\tH1\tneutral\nP3 has a tab\tH3\tcontradiction\n"
    assert (out / "en/train.tsv").read_text() == expected
    assert (out / "zh/dev.tsv").read_text().splitlines()[1] == "一个人在吃饭。\t没有人吃饭。\tcontradiction"
    assert not (out / "fr/train.tsv").exists() and not (out / "de").exists()


def test_xnli_malformed_lines(tmp_path):
    _write_xnli(tmp_path, [_xnli_row("en", "entailment", "a", "b"), _xnli_row("en", "neutral", "a", "b")[:-5]], [])
    dev = tmp_path / "XNLI-1.0/xnli.dev.tsv"
    _raises_at(lambda: read_xnli_tsv(dev), 3, "xnli.dev.tsv:3", "19 tab-separated columns")
    _write_xnli(tmp_path, [_xnli_row("en", "entailment", "a", "b")] * 3 + [_xnli_row("en", "maybe", "a", "b")], [])
    _raises_at(lambda: read_xnli_tsv(dev), 5, "entailment|neutral|contradiction", "maybe")
    _write_xnli(tmp_path, [_xnli_row("en", "entailment", "a", "b")], [])
    _raises_at(lambda: read_xnli_tsv(tmp_path / "XNLI-1.0/xnli.dev.tsv", ["ru"]), None, "examples for languages ru")


def test_multinli_bad_json_line(tmp_path):
    (tmp_path / "xnli").mkdir()
    _write_xnli(tmp_path / "xnli", [_xnli_row("en", "entailment", "a", "b")], [_xnli_row("en", "neutral", "c", "d")])
    d = tmp_path / "mnli" / "multinli_1.0"
    d.mkdir(parents=True)
    (d / "multinli_1.0_train.jsonl").write_text(
        '{"gold_label": "neutral", "sentence1": "a", "sentence2": "b"}\n{"gold_label": \n')
    _raises_at(lambda: build_xnli(tmp_path / "xnli", tmp_path / "mnli", ["en"], tmp_path / "out"), 2, "JSON")
    assert not (tmp_path / "out/en/train.tsv").exists()  # atomic: no half-written file


# ---------------------------------------------------------------------------------------------
# WikiAnn (XTREME panx layout)


def _tar_bytes(members: dict[str, bytes], mode: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


PANX_TRAIN = ("en:John\tB-PER\nen:Smith\tI-PER\nen:visited\tO\nen:New\tB-LOC\nen:York\tI-LOC\n\n"
              "en:ratio\tO\nen:3:2\tO\n\n")


def _panx(tmp_path: Path, en_train: str) -> Path:
    lang_tars = {
        "panx_dataset/en.tar.gz": _tar_bytes({"train": en_train.encode(), "dev": b"en:IBM\tB-ORG\n\n",
                                              "test": b"en:Paris\tB-LOC\n", "extra": b"ignored"}, "w:gz"),
        "panx_dataset/fr.tar.gz": _tar_bytes({"train": b"fr:Paris\tB-LOC\n\n", "dev": b"fr:le\tO\n\n",
                                              "test": b"fr:la\tO\n\n"}, "w:gz"),
    }
    tmp_path.mkdir(parents=True, exist_ok=True)
    arc = tmp_path / "panx_dataset.tar"
    arc.write_bytes(_tar_bytes(lang_tars, "w"))
    return safe_extract(arc, tmp_path / "extracted")


def test_build_wikiann(tmp_path):
    root = _panx(tmp_path, PANX_TRAIN)
    counts = build_wikiann(root, "en", tmp_path / "ner/en")
    assert counts == {"train": 2, "dev": 1, "test": 1}
    assert read_bio(tmp_path / "ner/en/train.bio") == [
        [("John", "B-PER"), ("Smith", "I-PER"), ("visited", "O"), ("New", "B-LOC"), ("York", "I-LOC")],
        [("ratio", "O"), ("3:2", "O")]]  # only the language prefix is cut, not later colons
    assert build_wikiann(root, "fr", tmp_path / "ner/fr")["train"] == 1


def test_wikiann_bad_lines(tmp_path):
    root = _panx(tmp_path, "en:John\tB-PER\nen:x\tB-MISC\n")
    _raises_at(lambda: build_wikiann(root, "en", tmp_path / "o"), 2, "en.tar.gz!train:2", "B-MISC")
    root = _panx(tmp_path / "b", "en:John\tB-PER\n\nfr:Jean\tB-PER\n")
    _raises_at(lambda: build_wikiann(root, "en", tmp_path / "o"), 3, "prefixed with 'en:'")
    root = _panx(tmp_path / "c", "en:John B-PER\n")
    _raises_at(lambda: build_wikiann(root, "en", tmp_path / "o"), 1, "<TAB>")
    with pytest.raises(InputError, match="one ru.tar.gz"):
        build_wikiann(root, "ru", tmp_path / "o")


# ---------------------------------------------------------------------------------------------
# CoNLL-2003 English


CONLL = """-DOCSTART- -X- -X- O

EU NNP I-NP I-ORG
rejects VBZ I-VP O
German JJ I-NP I-MISC
call NN I-NP O
. . O O

Peter NNP I-NP I-PER
Blackburn NNP I-NP I-PER
Smith NNP I-NP B-PER

-DOCSTART- -X- -X- O

BRUSSELS NNP I-NP I-LOC
"""


def test_build_conll2003(tmp_path):
    for name, text in (("eng.train", CONLL), ("eng.testa", CONLL), ("eng.testb", "Rome NNP I-NP I-LOC\n")):
        (tmp_path / name).write_text(text)
    assert build_conll2003(tmp_path, tmp_path / "out") == {"train": 3, "dev": 3, "test": 1}
    sents = read_bio(tmp_path / "out/train.bio")
    assert [t for _, t in sents[0]] == ["B-ORG", "O", "B-MISC", "O", "O"]
    assert [t for _, t in sents[1]] == ["B-PER", "I-PER", "B-PER"]
    assert sents[2] == [("BRUSSELS", "B-LOC")]
    assert all(_is_bio([t for _, t in s]) for s in sents)


def test_conll2003_bad_lines(tmp_path):
    p = tmp_path / "eng.train"
    p.write_text("EU NNP I-NP I-ORG\nrejects VBZ O\n")
    _raises_at(lambda: read_conll2003(p), 2, "eng.train:2", "4 space-separated columns")
    p.write_text("EU NNP I-NP I-ORG\n\nx NN I-NP I-FOO\n")
    _raises_at(lambda: read_conll2003(p), 3, "I-FOO")


# ---------------------------------------------------------------------------------------------
# Levow Chinese


LEVOW = "我\tO\n在\tO\n北\tB-NS\n京\tI-NS\n大\tI-NS\n学\tI-NS\n。\tO\n\n张\tB-PER\n三\tI-PER\n来\tO\n了\tO\n\n"


def _lexicon_segment(text: str) -> list[str]:
    """Greedy longest match over a fixed lexicon: a deterministic stand-in segmenter for tests."""
    lex = {"北京", "大学", "张三", "来了"}
    out, i = [], 0
    while i < len(text):
        w = next((text[i:i + 2] for _ in [0] if text[i:i + 2] in lex), text[i])
        out.append(w)
        i += len(w)
    return out


def test_build_levow(tmp_path):
    (tmp_path / "train.txt").write_text(LEVOW * 5)  # 10 sentences
    (tmp_path / "test.txt").write_text(LEVOW)
    counts = build_levow(tmp_path, tmp_path / "out", _lexicon_segment, dev_fraction=0.2)
    assert counts == {"train": 8, "dev": 2, "test": 2}
    test = read_bio(tmp_path / "out/test.bio")
    assert test[0] == [("我", "O"), ("在", "O"), ("北京", "B-LOC"), ("大学", "I-LOC"), ("。", "O")]
    assert test[1] == [("张三", "B-PER"), ("来了", "O")]
    # a batch segmenter (the Stanford one starts Java once per call) gets one call per file
    class Batch:
        calls = 0

        def segment_lines(self, lines):
            Batch.calls += 1
            return [_lexicon_segment(x) for x in lines]

        def __call__(self, text):
            raise AssertionError("per-sentence call on a batch segmenter")

    written = read_bio(tmp_path / "out/train.bio") + read_bio(tmp_path / "out/dev.bio")
    assert read_levow(tmp_path / "train.txt", Batch()) == written
    assert Batch.calls == 1
    # the real segmenter spells the characters too and keeps one entity per char entity
    sents = read_levow(tmp_path / "test.txt", segmenter("jieba"))
    assert "".join(w for w, _ in sents[0]) == "我在北京大学。"
    assert [t[:2] for _, t in sents[0]].count("B-") == 1


def test_levow_bad_lines(tmp_path):
    p = tmp_path / "train.txt"
    p.write_text("我\tO\n在\tO\n\n北\tB-GPE\n")
    _raises_at(lambda: read_levow(p, list), 4, "train.txt:4", "B-GPE")
    p.write_text("我们\tO\n")
    _raises_at(lambda: read_levow(p, list), 1, "one character")
    p.write_text("我\tO\n\n\n你\tO\n好\tO\n")
    _raises_at(lambda: read_levow(p, lambda s: [s[:1]]), 4, "spells")  # line of the sentence's first char


# ---------------------------------------------------------------------------------------------
# UD (real files)


@needs_shared
def test_build_ud_real_files(tmp_path):
    counts = build_ud(UD, "UD_French-GSD", {"train": "dev", "dev": "dev", "test": "test"}, tmp_path / "fr")
    assert counts == {"train": 1476, "dev": 1476, "test": 416}
    assert (tmp_path / "fr/test.conllu").read_bytes() == (UD / "UD_French-GSD/fr_gsd-ud-test.conllu").read_bytes()
    for tb in ("UD_English-EWT", "UD_Russian-GSD", "UD_Chinese-GSD"):
        src = next((UD / tb).glob("*-ud-test.conllu"))
        n = validate_conllu(src)
        text = src.read_text(encoding="utf-8")
        assert n == text.count("\n# sent_id") + text.startswith("# sent_id")


@needs_shared
def test_ud_malformed(tmp_path):
    lines = (UD / "UD_French-GSD/fr_gsd-ud-dev.conllu").read_text(encoding="utf-8").splitlines()
    # line 3 is token 1 of the first sentence (after sent_id and text)
    assert lines[2].startswith("1\t")

    def bad(k: int, new: str) -> Path:
        mod = list(lines)
        mod[k] = new
        p = tmp_path / "bad.conllu"
        p.write_text("\n".join(mod) + "\n", encoding="utf-8")
        return p

    cols = lines[3].split("\t")
    _raises_at(lambda: validate_conllu(bad(3, "\t".join(cols[:9]))), 4, "10 tab-separated")
    _raises_at(lambda: validate_conllu(bad(3, "\t".join(cols[:6] + ["99"] + cols[7:]))), 4, "head in 0..10")
    _raises_at(lambda: validate_conllu(bad(3, "\t".join(cols[:6] + ["x"] + cols[7:]))), 4, "valid CoNLL-U")
    _raises_at(lambda: validate_conllu(bad(3, "\t".join(["7"] + cols[1:]))), 4, "word id 2")
    mwt = next(k for k, line in enumerate(lines) if line.split("\t")[0].count("-") == 1 and "\t" in line)
    a, b = map(int, lines[mwt].split("\t")[0].split("-"))
    _raises_at(lambda: validate_conllu(bad(mwt, "\t".join([f"{b}-{a}"] + lines[mwt].split("\t")[1:]))), mwt + 1, "id")
    _raises_at(lambda: validate_conllu(bad(mwt, "\t".join([f"{a + 1}-{b + 1}"] + lines[mwt].split("\t")[1:]))),
               mwt + 1, "multiword range")


# ---------------------------------------------------------------------------------------------
# Tatoeba (real files) and XNLI-15way


@needs_shared
def test_tatoeba_real_files():
    for lang, probe in (("fr", "é"), ("ru", "я"), ("zh", "我")):
        xs, ens = read_tatoeba(*tatoeba_files(TATOEBA, lang))
        assert len(xs) == len(ens) == 1000
        assert any(probe in x for x in xs)
        assert not any(probe in e for e in ens[:50])


@needs_shared
def test_tatoeba_unequal_lines(tmp_path):
    fra, eng = tatoeba_files(TATOEBA, "fr")
    short = tmp_path / fra.name
    short.write_text("".join(fra.read_text(encoding="utf-8").splitlines(keepends=True)[:999]), encoding="utf-8")
    _raises_at(lambda: read_tatoeba(short, eng), 1000, str(short), "1000")


def test_xnli_15way(tmp_path):
    p = tmp_path / "xnli.15way.orig.tsv"
    p.write_text("ar\ten\tfr\tzh\nمرحبا\tHello\tBonjour\t你好\nشكرا\tThanks\tMerci\t谢谢\n", encoding="utf-8")
    assert read_xnli_15way(p, ["en", "zh"]) == {"en": ["Hello", "Thanks"], "zh": ["你好", "谢谢"]}
    assert list(read_xnli_15way(p)) == ["ar", "en", "fr", "zh"]
    _raises_at(lambda: read_xnli_15way(p, ["ru"]), 1, "columns for ru")
    p.write_text("ar\ten\tfr\tzh\na\tb\tc\td\na\tb\tc\n", encoding="utf-8")
    _raises_at(lambda: read_xnli_15way(p), 3, "4 tab-separated columns")


def test_an_empty_tsv_is_refused_at_its_header(tmp_path):
    empty = tmp_path / "empty.tsv"
    empty.write_text("", encoding="utf-8")
    _raises_at(lambda: read_xnli_15way(empty), 1, "a header of language codes", "end of file")
    _raises_at(lambda: read_xnli_tsv(empty), 1, "a header line", "end of file")


# ---------------------------------------------------------------------------------------------
# Snakemake scripts (run as Snakemake would, with a stand-in `snakemake` object)


@needs_shared
def test_taskdata_script_parsing(tmp_path):
    from snakemake.iocontainers import Namedlist

    out = tmp_path / "tasks/parsing/zh"
    sm = SimpleNamespace(
        rule="taskdata_parsing", input=Namedlist(fromdict={"ud": str(UD)}),
        output=Namedlist([str(out / "dev.conllu"), str(out / "test.conllu")]),
        params=Namedlist(fromdict={"treebank": "UD_Chinese-GSD", "splits": {"dev": "dev", "test": "test"}}),
        log=[str(tmp_path / "log")],
    )
    runpy.run_path(str(REPO / "workflow/scripts/taskdata_parsing.py"), init_globals={"snakemake": sm})
    assert validate_conllu(out / "dev.conllu") == 500 and (out / "test.conllu").is_file()
    assert '"dev": 500' in (tmp_path / "log").read_text()


def test_download_script_fetch_and_extract(tmp_path):
    from snakemake.iocontainers import Namedlist

    src = tmp_path / "src" / "a.tar"
    src.parent.mkdir()
    src.write_bytes(_tar_bytes({"d/x.txt": b"x"}, "w"))
    dest = tmp_path / "downloads/res/a.tar"
    sm = SimpleNamespace(rule="download_res", input=Namedlist(), output=Namedlist([str(dest)]),
                         params=Namedlist(fromdict={"url": src.as_uri(), "sha256": None, "retries": 0, "timeout": 5}),
                         log=[])
    runpy.run_path(str(REPO / "workflow/scripts/download.py"), init_globals={"snakemake": sm})
    assert dest.read_bytes() == src.read_bytes() and Path(str(dest) + ".sha256").is_file()
    sm = SimpleNamespace(rule="extract_res", input=Namedlist(fromdict={"archive": str(dest)}),
                         output=Namedlist([str(tmp_path / "downloads/res/extracted")]), log=[])
    runpy.run_path(str(REPO / "workflow/scripts/extract.py"), init_globals={"snakemake": sm})
    assert (tmp_path / "downloads/res/extracted/d/x.txt").read_bytes() == b"x"


def test_ner_dirs_follow_the_dataset():
    from xling.taskdata.layout import task_dirs

    cfg = {"finetune": {"ner": {"datasets": {"fr": "wikiann", "zh": "levow"}}}}
    assert task_dirs(cfg, "ner", "en-fr") == ("en", "fr")
    assert task_dirs(cfg, "ner", "en-zh") == ("en_conll2003", "zh")
    assert task_dirs(cfg, "xnli", "en-zh") == ("en", "zh")
    assert task_dirs(cfg, "ner", "en-ru") == ("en", "ru")  # unlisted: WikiAnn


def test_blank_line_blocks_split_on_blank_and_whitespace_lines():
    lines = list(enumerate(["", "a", "b", "  ", "", "c", "\t", "d"], 1))
    assert list(blank_line_blocks(lines)) == [[(2, "a"), (3, "b")], [(6, "c")], [(8, "d")]]
    assert list(blank_line_blocks([])) == []


def test_read_bio_rejects_bad_tags_and_reads_empty_file_as_no_sentences(tmp_path):
    p = tmp_path / "x.bio"
    p.write_text("", encoding="utf-8")
    assert read_bio(p) == []
    p.write_text("Paris\tB-LOC\n\nRome\tLOC\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"x\.bio:3.*O, B-X, I-X"):
        read_bio(p)
