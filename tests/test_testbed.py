"""The synthetic testbed: formats open with the real readers, labels and dictionaries are right,
trees are well-formed, output is reproducible. Runs on the `tiny` scale."""

from __future__ import annotations

import bz2
import csv
import io
import json
import lzma
import os
import random
import re
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from collections import Counter
from pathlib import Path

import conllu
import numpy as np
import pytest

from xling.testbed import english as E
from xling.testbed import generate, resolve_params
from xling.testbed.generate import HOST, TREEBANKS, nli_pair_sets, parallel
from xling.testbed.lexicon import build_lexicon
from xling.testbed.nli import LABELS, make_pairs, relation
from xling.testbed.realise import FUNCTION_WORDS, LANGS, English
from xling.testbed.structures import Clause, Entity

SEED = 3
CONTENT = {"NOUN", "VERB", "ADJ", "ADV", "PROPN"}


@pytest.fixture(scope="module")
def tb(tmp_path_factory):
    out = tmp_path_factory.mktemp("tb") / "testbed"
    manifest = generate(out, {"scale": "tiny"}, SEED)
    return out, manifest


def _m(tb, rid: str) -> Path:
    out, manifest = tb
    return out / manifest[rid]


def _zip_text(path: Path, member: str) -> str:
    with zipfile.ZipFile(path) as zf:
        return zf.read(member).decode("utf-8")


def _gold(tb, lang: str) -> list[tuple[str, str, str]]:
    out, _ = tb
    with open(out / "gold" / f"lexicon.{lang}.tsv", encoding="utf-8") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))
    assert rows[0] == ["en", "target", "pos"]
    return [tuple(r) for r in rows[1:]]


# --- layout and readers ---------------------------------------------------------------------
def test_manifest_covers_every_download(tb):
    out, manifest = tb
    expected = {f"wiki_{l}" for l in LANGS} | {"cc_fr", "cc_ru", "cc_zh", "xnli", "xnli_15way",
                                              "multinli", "wikiann", "ud", "panlex", "en_paraphrase",
                                              "conll2003_en", "levow_zh", "gold"}
    expected |= {f"muse_en_{l}_{s}" for l in ("fr", "de", "ru", "zh") for s in ("train", "test")}
    expected |= {f"tatoeba_{c}{e}" for c in ("fra", "deu", "rus", "cmn") for e in ("", "_eng")}
    expected |= {f"fasttext_{l}" for l in LANGS} | {"fast_align_src"}
    assert set(manifest) == expected
    for rid, rel in manifest.items():
        assert (out / rel).exists(), rid
        if rel.startswith(HOST):
            assert rel.split("/")[:2] == [HOST, rid]
    assert _m(tb, "wiki_zh").name == "zhwiki-20190701-pages-articles.xml.bz2"
    assert _m(tb, "cc_zh").name == "zh-Hans.txt.xz"


def test_every_file_opens_with_standard_readers(tb):
    for lang in LANGS:
        root = ET.fromstring(bz2.decompress(_m(tb, f"wiki_{lang}").read_bytes()))
        ns = "{http://www.mediawiki.org/xml/export-0.10/}"
        pages = root.findall(f"{ns}page")
        assert pages and all(p.find(f"{ns}revision/{ns}text").text for p in pages)
    for lang in ("fr", "ru", "zh"):
        text = lzma.decompress(_m(tb, f"cc_{lang}").read_bytes()).decode("utf-8")
        docs = [d for d in text.split("\n\n") if d.strip()]
        assert len(docs) > 5
    with tarfile.open(_m(tb, "wikiann")) as tf:
        assert sorted(tf.getnames()) == ["de.tar.gz", "en.tar.gz", "fr.tar.gz", "ru.tar.gz"]
        inner = tarfile.open(fileobj=io.BytesIO(tf.extractfile("fr.tar.gz").read()), mode="r:gz")
        assert sorted(inner.getnames()) == ["dev", "test", "train"]
    header = _zip_text(_m(tb, "xnli"), "XNLI-1.0/xnli.dev.tsv").split("\n")[0].split("\t")
    assert header == ("language gold_label sentence1_binary_parse sentence2_binary_parse "
                      "sentence1_parse sentence2_parse sentence1 sentence2 promptID pairID genre "
                      "label1 label2 label3 label4 label5 sentence1_tokenized sentence2_tokenized "
                      "match").split()
    line = _zip_text(_m(tb, "multinli"), "multinli_1.0/multinli_1.0_train.jsonl").split("\n")[0]
    assert set(json.loads(line)) == {"annotator_labels", "genre", "gold_label", "pairID", "promptID",
                                     "sentence1", "sentence1_binary_parse", "sentence1_parse",
                                     "sentence2", "sentence2_binary_parse", "sentence2_parse"}
    for code in ("fra", "deu", "rus", "cmn"):
        a = _m(tb, f"tatoeba_{code}").read_text("utf-8").splitlines()
        b = _m(tb, f"tatoeba_{code}_eng").read_text("utf-8").splitlines()
        assert len(a) == len(b) == resolve_params({"scale": "tiny"})["tatoeba"]


def _ud_files(tb) -> dict[str, str]:
    out = {}
    with tarfile.open(_m(tb, "ud"), "r:gz") as tf:
        for m in tf.getmembers():
            if m.name.endswith(".conllu"):
                out[m.name] = tf.extractfile(m).read().decode("utf-8")
    return out


def test_ud_parses_with_conllu_and_trees_are_well_formed(tb):
    files = _ud_files(tb)
    for lang, (tb_dir, prefix) in TREEBANKS.items():
        for split in ("train", "dev", "test"):
            assert f"ud-treebanks-v2.3/{tb_dir}/{prefix}-ud-{split}.conllu" in files
    mwts = 0
    for name, text in files.items():
        lang = name.split("/")[-1][:2]
        for sent in conllu.parse(text):
            words = [t for t in sent if isinstance(t["id"], int)]
            n = len(words)
            assert [t["id"] for t in words] == list(range(1, n + 1))
            heads = {t["id"]: t["head"] for t in words}
            assert sum(1 for h in heads.values() if h == 0) == 1, sent.metadata["text"]
            assert all(0 <= h <= n and h != i for i, h in heads.items())
            for i in heads:                      # following heads from any word reaches the root
                seen, cur = set(), i
                while cur != 0:
                    assert cur not in seen, f"cycle in {sent.metadata['sent_id']}"
                    seen.add(cur)
                    cur = heads[cur]
            # `# text` is exactly the words joined as SpaceAfter says (multiword tokens as one)
            rebuilt, skip = "", 0
            for t in sent:
                if isinstance(t["id"], tuple):
                    mwts += 1
                    skip = t["id"][2]
                    rebuilt += t["form"] + ("" if (t["misc"] or {}).get("SpaceAfter") == "No" else " ")
                elif t["id"] > skip:
                    rebuilt += t["form"] + ("" if (t["misc"] or {}).get("SpaceAfter") == "No" else " ")
            assert rebuilt.strip() == sent.metadata["text"]
            if lang == "zh":
                assert all((t["misc"] or {}).get("SpaceAfter") == "No" for t in words)
                assert " " not in sent.metadata["text"]
    assert mwts > 0, "French contractions (du, au, des, aux) should appear as multiword tokens"


def test_french_contractions_are_multiword_tokens(tb):
    text = _ud_files(tb)["ud-treebanks-v2.3/UD_French-GSD/fr_gsd-ud-train.conllu"]
    for sent in conllu.parse(text):
        for k, t in enumerate(sent):
            if isinstance(t["id"], tuple):
                a, b = sent[k + 1], sent[k + 2]
                assert (a["form"], b["form"], t["form"]) in {("de", "le", "du"), ("de", "les", "des"),
                                                             ("à", "le", "au"), ("à", "les", "aux")}
                assert a["upos"] == "ADP" and b["upos"] == "DET"


# --- NLI ------------------------------------------------------------------------------------
def test_nli_labels_follow_from_structures():
    pairs = make_pairs(random.Random(11), 600)
    counts = Counter(label for _, _, label in pairs)
    assert counts == {label: 200 for label in LABELS}
    for p, h, label in pairs:
        assert relation(p, h) == label, (p, h)


def test_nli_judge_on_hand_made_cases():
    dog = Entity("noun", "dog", det="def")
    big_dog = Entity("noun", "dog", det="def", adjs=("big",))
    cat = Entity("noun", "cat", det="def")
    animal = Entity("noun", "animal", det="def")
    sees = Clause("see", subj=big_dog, obj=cat, adv="quickly")
    assert relation(sees, Clause("see", subj=dog, obj=cat)) == "entailment"
    assert relation(sees, Clause("see", subj=animal, obj=cat)) == "entailment"
    assert relation(sees, Clause(None, subj=dog, cop_adj="big")) == "entailment"
    assert relation(sees, Clause(None, subj=dog, cop_adj="small")) == "contradiction"
    assert relation(sees, Clause("see", subj=dog, obj=cat, neg=True)) == "contradiction"
    assert relation(sees, Clause(None, subj=dog, cop_adj="old")) == "neutral"
    assert relation(Clause("see", subj=dog, obj=cat), sees) == "neutral"
    # negation reverses monotonicity: dropping a modifier under "not" is not entailed
    neg = Clause("see", subj=big_dog, obj=cat, neg=True)
    assert relation(neg, Clause("see", subj=dog, obj=cat, neg=True)) == "neutral"
    assert relation(Clause("see", subj=dog, obj=cat, neg=True), neg) == "entailment"
    anna = Entity("name", "Anna", ner="PER")
    race = Entity("noun", "race", det="def")
    won = Clause("win", subj=anna, obj=race, tense="past")
    assert relation(won, Clause("win", subj=Entity("name", "Marco", ner="PER"), obj=race,
                                tense="past")) == "contradiction"


def test_nli_files_match_their_structures(tb):
    p = resolve_params({"scale": "tiny"})
    sets = nli_pair_sets(SEED, p)
    lex = build_lexicon(SEED)
    en = English(lex, random.Random(0))
    rows = _zip_text(_m(tb, "xnli"), "XNLI-1.0/xnli.dev.tsv").rstrip("\n").split("\n")[1:]
    by_lang = {}
    for r in rows:
        f = r.split("\t")
        by_lang.setdefault(f[0], []).append(f)
    assert set(by_lang) == set(LANGS)
    pair_ids = [[f[9] for f in by_lang[l]] for l in LANGS]
    assert all(ids == pair_ids[0] for ids in pair_ids), "XNLI must be parallel across languages"
    for (prem, hyp, label), f in zip(sets["dev"], by_lang["en"]):
        assert f[1] == label == relation(prem, hyp)
        assert f[6] == en.sentence(prem).text() and f[7] == en.sentence(hyp).text()
    for l in LANGS:
        assert [f[1] for f in by_lang[l]] == [lab for _, _, lab in sets["dev"]]
    lines = _zip_text(_m(tb, "multinli"), "multinli_1.0/multinli_1.0_train.jsonl").splitlines()
    labels = Counter(json.loads(x)["gold_label"] for x in lines)
    assert max(labels.values()) - min(labels.values()) <= 1
    for (prem, hyp, label), x in zip(sets["train"], lines):
        row = json.loads(x)
        assert row["gold_label"] == label and row["sentence1"] == en.sentence(prem).text()


# --- dictionaries, anchors, scripts ---------------------------------------------------------
def test_gold_dictionary_translates_word_by_word(tb):
    lex = build_lexicon(SEED)
    n = 40
    sents = parallel(lex, SEED, "15way", n, LANGS, paraphrase=True)
    rows = _zip_text(_m(tb, "xnli_15way"), "XNLI-15way/xnli.15way.orig.tsv").rstrip("\n").split("\n")
    header = rows[0].split("\t")
    for i in range(n):                         # the file holds exactly these realisations
        fields = rows[i + 1].split("\t")
        for lang in LANGS:
            assert fields[header.index(lang)] == sents[lang][i].text()

    def content(sent, lang):
        return [t.lemma for t in sent.tokens
                if t.upos in CONTENT and t.lemma not in FUNCTION_WORDS[lang]]

    def numbers(sent):
        return Counter(t.lemma for t in sent.tokens if t.upos == "NUM")

    for lang in ("fr", "de", "ru", "zh"):
        inverse = {}
        for en, tgt, pos in _gold(tb, lang):
            inverse[tgt] = en
        for s_en, s_tgt in zip(sents["en"], sents[lang]):
            translated = Counter(inverse[w] for w in content(s_tgt, lang))
            assert translated == Counter(content(s_en, "en")), (s_en.text(), s_tgt.text())
            assert numbers(s_en) == numbers(s_tgt)


def test_gold_has_synonyms_and_real_translations(tb):
    for lang in ("fr", "de", "ru", "zh"):
        rows = _gold(tb, lang)
        per_word = Counter((en, pos) for en, _, pos in rows if pos != "PROPN")
        assert sum(1 for v in per_word.values() if v > 1) >= 10      # several translations
        targets = [t for _, t, pos in rows if pos in ("NOUN", "VERB", "ADJ", "ADV")]
        assert len(targets) == len(set(targets))                      # no two concepts share a form


def test_names_numbers_shared_with_fr_scripts_disjoint_for_ru_zh(tb):
    fr = _gold(tb, "fr")
    assert all(en == t for en, t, pos in fr if pos in ("PROPN", "NUM"))
    content_fr = {t.lower() for en, t, pos in fr if pos not in ("PROPN", "NUM")}
    english = {en.lower() for en, _, pos in fr}
    assert not content_fr & english, "fr content words must not be English words"
    for lang, script in (("ru", r"[\u0400-\u04FF]"), ("zh", r"[\u4E00-\u9FFF]")):
        for en, t, pos in _gold(tb, lang):
            if pos == "NUM":
                continue
            assert all(re.match(script, ch) for ch in t if ch.isalpha()), (lang, t)
            assert not re.search("[A-Za-z]", t)
    # the running text of ru/zh Wikipedia has no Latin letters once the markup is stripped
    for lang in ("ru", "zh"):
        text = _extract(tb, lang)
        body = "\n".join(l for l in text.splitlines() if not l.startswith(("<doc", "</doc")))
        assert body.strip() and not re.search("[A-Za-z]", body)


def test_fasttext_vectors_are_trained_on_the_wikipedia_text(tb):
    from xling.analysis.vec import read_vec

    p = resolve_params({"scale": "tiny"})
    for lang in LANGS:
        path = _m(tb, f"fasttext_{lang}")
        assert path.name == f"wiki.{lang}.vec"
        n, dim = map(int, path.read_text("utf-8").split("\n", 1)[0].split())
        words, vecs = read_vec(path)
        assert len(words) == n > 20 and vecs.shape == (n, dim) and dim == p["fasttext_dim"]
        assert np.isfinite(vecs).all() and (np.linalg.norm(vecs, axis=1) > 0).all()
        # the words of its own Wikipedia (minCount 2), the most frequent first
        text = bz2.decompress(_m(tb, f"wiki_{lang}").read_bytes()).decode("utf-8")
        assert sum(w in text for w in words[:50]) >= 45


def test_fasttext_training_does_not_depend_on_reused_memory():
    """fastText leaves most of its input matrix uninitialised on one thread; memory other work has
    freed (here: blocks of NaN bytes) must not reach its vectors."""
    import hashlib

    from xling.testbed.generate import fasttext_vec, wiki_dump
    from xling.testbed.lexicon import build_lexicon

    lex = build_lexicon(SEED)
    texts = {}
    for lang in ("fr", "ru"):
        texts[lang] = []
        wiki_dump(lang, lex, SEED, 300, texts[lang])
    clean = {lang: fasttext_vec(t, 16, 1) for lang, t in texts.items()}
    for _ in range(3):
        junk = [np.full(n, np.nan, dtype=np.float32) for n in (2_000_000, 500_000, 3_000_000)]
        del junk
        for lang, t in texts.items():
            got = fasttext_vec(t, 16, 1)
            assert hashlib.sha256(got).digest() == hashlib.sha256(clean[lang]).digest(), lang
            assert b"nan" not in got.lower()


def test_muse_train_test_disjoint_and_correct(tb):
    for lang in ("fr", "de", "ru", "zh"):
        gold = {(en.lower(), t.lower()) for en, t, _ in _gold(tb, lang)}
        train = [l.split(" ") for l in _m(tb, f"muse_en_{lang}_train").read_text("utf-8").splitlines()]
        test = [l.split(" ") for l in _m(tb, f"muse_en_{lang}_test").read_text("utf-8").splitlines()]
        assert train and test and all(len(x) == 2 for x in train + test)
        assert not {s for s, _ in train} & {s for s, _ in test}
        assert all((s, t) in gold for s, t in train + test)


def test_panlex_tables_join_and_carry_noise(tb):
    with zipfile.ZipFile(_m(tb, "panlex")) as zf:
        tables = {}
        for name in zf.namelist():
            if name.endswith(".csv"):
                rows = list(csv.DictReader(io.StringIO(zf.read(name).decode("utf-8"))))
                tables[name.split("/")[-1][:-4]] = rows
    assert set(tables) >= {"langvar", "expr", "meaning", "denotation", "source"}
    assert list(tables["expr"][0]) == ["id", "langvar", "txt", "txt_degr"]
    exprs = {r["id"]: r for r in tables["expr"]}
    meanings = {r["id"]: r for r in tables["meaning"]}
    sources = {r["id"]: int(r["quality"]) for r in tables["source"]}
    uids = {exprs[r["uid_expr"]]["txt"]: r["id"] for r in tables["langvar"]}
    eng, fra = uids["eng-000"], uids["fra-000"]
    by_meaning = {}
    for d in tables["denotation"]:
        assert d["meaning"] in meanings and d["expr"] in exprs
        by_meaning.setdefault(d["meaning"], []).append(exprs[d["expr"]])
    gold = {(en, t) for en, t, _ in _gold(tb, "fr")}
    wrong_low = wrong_high = mwe = 0
    for mid, ex in by_meaning.items():
        q = sources[meanings[mid]["source"]]
        ens = [e["txt"] for e in ex if e["langvar"] == eng]
        frs = [e["txt"] for e in ex if e["langvar"] == fra]
        mwe += any(" " in e for e in ens)
        for a in ens:
            for b in frs:
                if " " not in a and (a, b) not in gold:
                    wrong_low += q <= 2
                    wrong_high += q > 2
    assert wrong_low > 0 and wrong_high == 0 and mwe > 0


# --- NER ------------------------------------------------------------------------------------
def _valid_bio(tags: list[str]) -> bool:
    prev = "O"
    for t in tags:
        if t.startswith("I-") and (prev == "O" or prev[2:] != t[2:]):
            return False
        prev = t
    return True


def test_ner_files(tb):
    with tarfile.open(_m(tb, "wikiann")) as tf:
        for lang in ("en", "fr", "de", "ru"):
            inner = tarfile.open(fileobj=io.BytesIO(tf.extractfile(f"{lang}.tar.gz").read()), mode="r:gz")
            text = inner.extractfile("train").read().decode("utf-8")
            sents = [s.splitlines() for s in text.strip("\n").split("\n\n")]
            tags = []
            for s in sents:
                for line in s:
                    assert re.fullmatch(rf"{lang}:\S+\t(O|[BI]-(PER|LOC|ORG))", line), line
                tags.append([l.split("\t")[1] for l in s])
                assert _valid_bio(tags[-1])
            assert any("B-PER" in t for t in tags) and any("B-LOC" in t for t in tags)
    out, manifest = tb
    conll = (out / manifest["conll2003_en"] / "eng.train").read_text("utf-8")
    assert conll.startswith("-DOCSTART- -X- -X- O\n\n")
    for block in conll.strip("\n").split("\n\n"):
        lines = block.splitlines()
        if lines[0].startswith("-DOCSTART-"):
            continue
        prev = "O"
        for line in lines:
            w = line.split(" ")
            assert len(w) == 4 and re.fullmatch(r"O|[IB]-(PER|LOC|ORG)", w[3])
            if w[3].startswith("B-"):                 # IOB1: B- only right after the same type
                assert prev[2:] == w[3][2:]
            prev = w[3]
    levow = (out / manifest["levow_zh"] / "train.txt").read_text("utf-8")
    for block in levow.strip("\n").split("\n\n"):
        lines = [l.split("\t") for l in block.splitlines()]
        assert all(len(c) == 1 and re.fullmatch(r"O|[BI]-(PER|LOC|ORG)", t) for c, t in lines)
        assert _valid_bio([t for _, t in lines])


# --- Wikipedia through WikiExtractor ---------------------------------------------------------
_EXTRACTED: dict = {}


def _extract(tb, lang: str) -> str:
    if lang not in _EXTRACTED:
        out, _ = tb
        dest = out.parent / f"wx_{lang}"
        subprocess.run([sys.executable, "-m", "wikiextractor.WikiExtractor", str(_m(tb, f"wiki_{lang}")),
                        "-o", str(dest), "-q", "--processes", "1"], check=True, capture_output=True)
        _EXTRACTED[lang] = "".join(p.read_text("utf-8") for p in sorted(dest.rglob("wiki_*")))
    return _EXTRACTED[lang]


def test_wikiextractor_strips_markup(tb):
    text = _extract(tb, "en")
    docs = re.findall(r'<doc id="\d+" url="[^"]+" title="([^"]+)">', text)
    root = ET.fromstring(bz2.decompress(_m(tb, "wiki_en").read_bytes()))
    ns = "{http://www.mediawiki.org/xml/export-0.10/}"
    pages = root.findall(f"{ns}page")
    articles = [p for p in pages if p.find(f"{ns}ns").text == "0"]
    assert len(docs) == len(articles) < len(pages)        # every article, no Template: page
    raw = "".join(p.find(f"{ns}revision/{ns}text").text for p in pages)
    assert "[[" in raw and "'''" in raw and "{{" in raw and "<ref>" in raw
    for marker in ("[[", "]]", "'''", "{{", "}}", "<ref", "Category:", "Infobox"):
        assert marker not in text, marker
    assert re.search(r"\b(The|A|This) [a-z]+", text)


# --- reproducibility ------------------------------------------------------------------------
def _digest(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_same_bytes_other_seed_other_bytes(tb, tmp_path):
    out, _ = tb
    again = tmp_path / "again"
    # another process with another string-hash seed: no dependence on set/dict hashing order
    subprocess.run([sys.executable, "-m", "xling.testbed", "--out", str(again), "--scale", "tiny",
                    "--seed", str(SEED)], check=True, capture_output=True,
                   env={**os.environ, "PYTHONHASHSEED": "12345"})
    a, b = _digest(out), _digest(again)
    assert a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []
    other = tmp_path / "other"
    generate(other, {"scale": "tiny"}, SEED + 1)
    c = _digest(other)
    differing = [k for k in a if k != "manifest.json" and a[k] != c.get(k)]
    assert len(differing) >= len(a) - 2


def test_params_are_checked_and_existing_dirs_protected(tmp_path):
    with pytest.raises(ValueError):
        resolve_params({"scale": "huge"})
    with pytest.raises(ValueError):
        resolve_params({"scale": "tiny", "wiki_sentense": 3})
    assert resolve_params({"scale": "tiny", "tatoeba": 7})["tatoeba"] == 7
    keep = tmp_path / "precious"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        generate(keep, {"scale": "tiny"}, 1)
    assert (keep / "notes.txt").read_text() == "mine"


def test_snakemake_script_runs_the_generator(tmp_path):
    import runpy
    from types import SimpleNamespace

    script = Path(__file__).resolve().parents[1] / "workflow" / "scripts" / "make_testbed.py"
    out, log = tmp_path / "mirror", tmp_path / "logs" / "testbed.log"
    sm = SimpleNamespace(output=[str(out)], log=[str(log)], threads=2,
                         params=SimpleNamespace(testbed={"scale": "tiny", "seed": 5, "tatoeba": 9}, seed=5))
    runpy.run_path(str(script), init_globals={"snakemake": sm})
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["seed"] == 5 and manifest["params"]["tatoeba"] == 9
    assert (out / HOST / "tatoeba_fra" / "tatoeba.fra-eng.fra").read_text("utf-8").count("\n") == 9
    assert "resources" in log.read_text()


def test_paraphrases_keep_lines_and_change_surface(tb):
    en_prime = _m(tb, "en_paraphrase").read_text("utf-8").splitlines()
    rows = _zip_text(_m(tb, "xnli_15way"), "XNLI-15way/xnli.15way.orig.tsv").rstrip("\n").split("\n")
    en_col = rows[0].split("\t").index("en")
    en = [r.split("\t")[en_col] for r in rows[1:]]
    assert len(en_prime) == len(en)
    changed = sum(a != b for a, b in zip(en, en_prime))
    assert 0.2 * len(en) < changed < len(en)


def test_english_morphology():
    assert E.plural("city") == "cities" and E.plural("box") == "boxes" and E.plural("man") == "men"
    assert E.third_singular("carry") == "carries" and E.third_singular("watch") == "watches"
    assert E.past("carry") == "carried" and E.past("see") == "saw" and E.past("dance") == "danced"


@pytest.mark.slow
def test_small_scale_is_fast_and_sized(tmp_path):
    """The demo scale: generated on one core within the time budget, with the sizes asked for."""
    import time

    t0 = time.process_time()
    manifest = generate(tmp_path / "small", {"scale": "small"}, 1)
    assert time.process_time() - t0 < 60
    p = resolve_params({"scale": "small"})
    rows = _zip_text(tmp_path / "small" / manifest["xnli"], "XNLI-1.0/xnli.test.tsv").splitlines()
    assert len(rows) == 1 + 5 * p["xnli_test"]
    way = _zip_text(tmp_path / "small" / manifest["xnli_15way"], "XNLI-15way/xnli.15way.orig.tsv")
    assert len(way.splitlines()) == 1 + p["xnli_15way"]
    text = lzma.decompress((tmp_path / "small" / manifest["cc_zh"]).read_bytes()).decode("utf-8")
    assert len([l for l in text.splitlines() if l.strip()]) >= p["cc_sentences"]


def test_pool_of_workers_writes_the_same_bytes(tb, tmp_path):
    """The pieces run in a process pool (the rule's threads) and still give one process's files."""
    out, _ = tb
    pooled = tmp_path / "pooled"
    generate(pooled, {"scale": "tiny"}, SEED, workers=2)
    a, b = _digest(out), _digest(pooled)
    assert a.keys() == b.keys() and [k for k in a if a[k] != b[k]] == []
