"""Dictionaries (PanLex CSV snapshot, MUSE) and code-switching."""

from __future__ import annotations

import csv
import json
import math
import random
from collections import Counter
from pathlib import Path

import pytest

from xling.codeswitch import (
    PhraseDictionary,
    batches,
    build_dictionary,
    codeswitch_lines,
    codeswitch_pair,
    read_dict,
    read_muse,
    read_panlex,
)
from xling.codeswitch.switch import SwitchStats
from xling.errors import InputError

SOURCE_COLS = ["id", "reg_date", "label", "url", "isbn", "author", "title", "publisher", "year",
               "quality", "grp", "note", "license", "ip_claim", "ip_claimant", "ip_claimant_email"]
LANGVAR_COLS = ["id", "lang_code", "var_code", "mutable", "name_expr", "script_expr", "meaning",
                "region_expr", "uid_expr", "grp"]


def _write(path: Path, header: list[str], rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=header, restval="")
        w.writeheader()
        w.writerows(rows)


def make_snapshot(root: Path, drop: tuple[str, str] | None = None) -> Path:
    snap = root / "panlex-20190601-csv"
    snap.mkdir(parents=True)
    tables = {
        "langvar.csv": (LANGVAR_COLS, [
            {"id": 1, "lang_code": "eng", "var_code": 0}, {"id": 2, "lang_code": "fra", "var_code": 0},
            {"id": 3, "lang_code": "fra", "var_code": 1}, {"id": 4, "lang_code": "deu", "var_code": 0}]),
        "expr.csv": (["id", "langvar", "txt", "txt_degr"], [
            {"id": 10, "langvar": 1, "txt": "dog"}, {"id": 11, "langvar": 1, "txt": "hot dog"},
            {"id": 12, "langvar": 1, "txt": "cat"},
            {"id": 20, "langvar": 2, "txt": "chien"}, {"id": 21, "langvar": 2, "txt": "saucisse chaude"},
            {"id": 22, "langvar": 2, "txt": "chat, domestique"}, {"id": 23, "langvar": 2, "txt": "toutou"},
            {"id": 30, "langvar": 3, "txt": "chienne"}, {"id": 40, "langvar": 4, "txt": "Hund"}]),
        # source 100 and 101 form one group; 103 has no group (its own)
        "source.csv": (SOURCE_COLS, [
            {"id": 100, "quality": 5, "grp": 100}, {"id": 101, "quality": 3, "grp": 100},
            {"id": 102, "quality": 7, "grp": 102}, {"id": 103, "quality": 2, "grp": ""}]),
        "meaning.csv": (["id", "source"], [
            {"id": 1, "source": 100}, {"id": 2, "source": 101}, {"id": 3, "source": 102},
            {"id": 4, "source": 103}, {"id": 5, "source": 102}, {"id": 6, "source": 100},
            {"id": 7, "source": 101}]),
        "denotation.csv": (["id", "meaning", "expr"], [
            {"id": i, "meaning": m, "expr": e} for i, (m, e) in enumerate([
                (1, 10), (1, 20), (1, 40),        # dog chien Hund   (source 100, q5, grp 100)
                (2, 10), (2, 20), (2, 23),        # dog chien toutou (source 101, q3, grp 100)
                (3, 10), (3, 20),                 # dog chien        (source 102, q7, grp 102)
                (4, 10), (4, 23),                 # dog toutou       (source 103, q2, own group)
                (5, 12), (5, 22),                 # cat "chat, domestique" (q7)
                (6, 11), (6, 21),                 # hot dog / saucisse chaude (q5)
                (7, 10), (7, 30)])]),             # dog / chienne of another French variety
    }
    for name, (header, rows) in tables.items():
        if drop and drop[0] == name:
            header = [c for c in header if c != drop[1]]
            rows = [{k: v for k, v in r.items() if k != drop[1]} for r in rows]
        _write(snap / name, header, rows)
    return snap


def test_panlex_weights_follow_definition(tmp_path):
    make_snapshot(tmp_path)
    pairs = read_panlex(tmp_path, "eng-000", "fra-000")
    # dog-chien: meanings 1 (grp 100, q5), 2 (grp 100, q3), 3 (grp 102, q7): max 5 in grp 100 + 7
    # dog-toutou: meaning 2 (grp 100, q3) + meaning 4 (own group, q2)
    assert pairs == {
        ("dog", "chien"): max(5, 3) + 7,
        ("dog", "toutou"): 3 + 2,
        ("cat", "chat, domestique"): 7,
        ("hot dog", "saucisse chaude"): 5,
    }
    assert read_panlex(tmp_path, "fra-000", "deu-000") == {("chien", "Hund"): 5}


def test_panlex_dictionary_files_both_directions(tmp_path):
    make_snapshot(tmp_path / "dl")
    info = build_dictionary("panlex", tmp_path / "dl", "en", "fr", tmp_path / "en-fr.tsv", tmp_path / "fr-en.tsv")
    assert info["pairs"] == 4
    fwd = (tmp_path / "en-fr.tsv").read_text().splitlines()
    assert fwd[:2] == ["cat\tchat, domestique\t7", "dog\tchien\t12"]
    assert read_dict(tmp_path / "fr-en.tsv") == {(b, a): w for (a, b), w in read_dict(tmp_path / "en-fr.tsv").items()}


def test_panlex_missing_column_names_file_and_line(tmp_path):
    make_snapshot(tmp_path, drop=("source.csv", "quality"))
    with pytest.raises(InputError) as err:
        read_panlex(tmp_path, "eng-000", "fra-000")
    assert err.value.path.endswith("source.csv") and err.value.line == 1 and "quality" in str(err.value)


def test_panlex_unknown_variety(tmp_path):
    make_snapshot(tmp_path)
    with pytest.raises(InputError, match="rus-000"):
        read_panlex(tmp_path, "eng-000", "rus-000")


def test_muse(tmp_path):
    p = tmp_path / "en-fr.txt"
    p.write_text("dog chien\ndog toutou\ncat\tchat\n\n")
    assert read_muse(p) == {("dog", "chien"): 1, ("dog", "toutou"): 1, ("cat", "chat"): 1}
    p.write_text("dog chien\ncat\n")
    with pytest.raises(InputError) as err:
        read_muse(p)
    assert err.value.line == 2 and err.value.path == str(p)


def test_bad_dictionary_tsv(tmp_path):
    p = tmp_path / "d.tsv"
    p.write_text("a\tb\t1\na\tb\n")
    with pytest.raises(InputError) as err:
        read_dict(p)
    assert err.value.line == 2


# ------------------------------------------------------------------------------- code-switching
def _text(rng: random.Random, vocab: list[str], lines: int, words: int = 10) -> list[str]:
    return [" ".join(rng.choice(vocab) for _ in range(words)) for _ in range(lines)]


VOCAB = [f"w{i}" for i in range(100)]


def test_deterministic_for_a_seed():
    lines = _text(random.Random(1), VOCAB, 300)
    d = PhraseDictionary({(w, f"T_{w}"): 1 for w in VOCAB[:30]})
    a = list(codeswitch_lines(lines, d, seed=5, batch_words=100))
    b = list(codeswitch_lines(lines, d, seed=5, batch_words=100))
    c = list(codeswitch_lines(lines, d, seed=6, batch_words=100))
    assert a == b and a != c and len(a) == len(lines)


def test_rate_is_replace_prob_when_cap_does_not_bind():
    lines = _text(random.Random(2), VOCAB, 2000)
    d = PhraseDictionary({(w, f"T_{w}"): 1 for w in VOCAB[:20]})  # ~20% coverage -> ~6% drawn < 15%
    stats = SwitchStats()
    out = list(codeswitch_lines(lines, d, seed=3, replace_prob=0.3, max_fraction=0.15,
                                batch_words=1000, stats=stats))
    dict_words = sum(w in set(VOCAB[:20]) for line in lines for w in line.split())
    replaced = sum(t.startswith("T_") for line in out for t in line.split())
    assert stats.capped_batches == 0
    assert stats.dictionary_words == dict_words and stats.replaced_words == replaced
    assert abs(replaced / dict_words - 0.3) < 0.03
    assert stats.summary()["rate_of_dictionary_words"] == replaced / dict_words


def test_cap_never_exceeded_in_any_batch():
    rng = random.Random(4)
    lines = [" ".join(rng.choice(VOCAB) for _ in range(rng.randint(1, 30))) for _ in range(1500)]
    d = PhraseDictionary({(w, f"T_{w}"): 1 for w in VOCAB})  # every word: 30% drawn > 15% cap
    out = list(codeswitch_lines(lines, d, seed=9, batch_words=200, max_fraction=0.15))
    # batches by the definition: whole lines, at least 200 words each
    i = 0
    n_batches = 0
    while i < len(lines):
        j, n = i, 0
        while j < len(lines) and n < 200:
            n += len(lines[j].split())
            j += 1
        replaced = sum(t.startswith("T_") for line in out[i:j] for t in line.split())
        assert replaced <= math.floor(0.15 * n)
        if n >= 200:  # the cap binds: candidates (~30%) are cut to exactly the cap
            assert replaced == math.floor(0.15 * n)
        i, n_batches = j, n_batches + 1
    assert n_batches == len(list(batches((l.split() for l in lines), 200)))


def test_cap_does_not_favour_batch_start():
    lines = _text(random.Random(5), VOCAB, 400, words=10)
    d = PhraseDictionary({(w, f"T_{w}"): 1 for w in VOCAB})
    out = list(codeswitch_lines(lines, d, seed=1, batch_words=1000))
    first = sum(t.startswith("T_") for line in out[0:50] for t in line.split())
    second = sum(t.startswith("T_") for line in out[50:100] for t in line.split())
    assert abs(first - second) < 0.5 * max(first, second)  # both halves of each batch switched


def test_multiword_entries_longest_match_first():
    d = PhraseDictionary({("New York", "Nueva York"): 1, ("New", "Nuevo"): 1, ("York", "Yorko"): 1,
                          ("hot dog", "perro caliente"): 1, ("dog", "el perro"): 1})
    stats = SwitchStats()
    out = list(codeswitch_lines(["in New York a hot dog and a dog", "New"], d, seed=0,
                                replace_prob=1.0, max_fraction=1.0, stats=stats))
    assert out == ["in Nueva York a perro caliente and a el perro", "Nuevo"]
    assert stats.dictionary_matches == 4 and stats.dictionary_words == 6 and stats.replaced_words == 6


def test_translations_sampled_by_weight():
    d = PhraseDictionary({("a", "x"): 3, ("a", "y"): 1, ("a", "z"): 0})
    out = list(codeswitch_lines(["a"] * 4000, d, seed=2, replace_prob=1.0, max_fraction=1.0))
    c = Counter(out)
    assert set(c) == {"x", "y"} and abs(c["x"] / 4000 - 0.75) < 0.03


def test_codeswitch_pair_writes_files_and_report(tmp_path):
    rng = random.Random(7)
    (tmp_path / "en.txt").write_text("\n".join(_text(rng, VOCAB, 50)) + "\n")
    (tmp_path / "fr.txt").write_text("\n".join(_text(rng, [f"f{i}" for i in range(50)], 50)) + "\n")
    (tmp_path / "en-fr.tsv").write_text("".join(f"w{i}\tf{i}\t1\n" for i in range(100)))
    (tmp_path / "fr-en.tsv").write_text("".join(f"f{i}\tw{i}\t1\n" for i in range(50)))
    out = tmp_path / "out"
    rep = codeswitch_pair({"en": tmp_path / "en.txt", "fr": tmp_path / "fr.txt"},
                          {"en": tmp_path / "en-fr.tsv", "fr": tmp_path / "fr-en.tsv"},
                          {"en": out / "en.train.txt", "fr": out / "fr.train.txt"}, out / "report.json", seed=7,
                          batch_words=100)
    on_disk = json.loads((tmp_path / "out" / "report.json").read_text())
    assert on_disk == json.loads(json.dumps(rep))
    for lang, other in (("en", "f"), ("fr", "w")):
        text = (tmp_path / "out" / f"{lang}.train.txt").read_text().split()
        assert any(t.startswith(other) for t in text)  # words of the other language came in
        assert on_disk["languages"][lang]["max_batch_fraction"] <= 0.15


def test_variants_switch_independently(tmp_path):
    """Each code-switched copy (one per training epoch) draws its own replacements; variant 0 keeps
    the stream of a single copy, and every copy obeys the cap."""
    rng = random.Random(3)
    (tmp_path / "en.txt").write_text("\n".join(_text(rng, VOCAB, 200)) + "\n")
    (tmp_path / "en-fr.tsv").write_text("".join(f"w{i}\tf{i}\t1\n" for i in range(100)))
    reports, texts = [], []
    for k in range(3):
        out = tmp_path / f"v{k}"
        reports.append(codeswitch_pair({"en": tmp_path / "en.txt"}, {"en": tmp_path / "en-fr.tsv"},
                                       {"en": out / "en.train.txt"}, out / "report.json", seed=7, batch_words=100,
                                       variant=k))
        texts.append((out / "en.train.txt").read_text())
    assert len(set(texts)) == 3
    assert [r["variant"] for r in reports] == [0, 1, 2]
    assert all(r["languages"]["en"]["max_batch_fraction"] <= 0.15 for r in reports)
    again = tmp_path / "again"
    codeswitch_pair({"en": tmp_path / "en.txt"}, {"en": tmp_path / "en-fr.tsv"}, {"en": again / "en.train.txt"},
                    again / "report.json", seed=7, batch_words=100)
    assert (tmp_path / "again" / "en.train.txt").read_text() == texts[0]


def test_lowercase_fallback_for_capitalised_words():
    pairs = {("the cat", "le chat"): 1, ("dog", "chien"): 1, ("Paris", "Lutèce"): 1}
    on = PhraseDictionary(pairs, lowercase_fallback=True)
    off = PhraseDictionary(pairs)
    line = "The cat and Dog saw Paris"
    args = dict(seed=0, replace_prob=1.0, max_fraction=1.0)
    assert list(codeswitch_lines([line], on, **args)) == ["le chat and chien saw Lutèce"]
    assert list(codeswitch_lines([line], off, **args)) == ["The cat and Dog saw Lutèce"]


def test_entries_tokenised_in_one_batch_and_merged():
    from xling.codeswitch.dictionary import tokenize_pairs
    calls = []

    def tok(texts):
        calls.append(list(texts))
        return [t.replace("'", "' ") for t in texts]

    out = tokenize_pairs({("l'homme", "the man"): 2, ("l' homme", "the man"): 1, ("x", "y"): 1}, tok, None)
    assert out == {("l' homme", "the man"): 3, ("x", "y"): 1}
    assert len(calls) == 1 and sorted(calls[0]) == ["l' homme", "l'homme", "x"]
