"""xling.codeswitch.dictd on FreeDict's real dictd files in ../shared/data (eng-fra, fra-eng,
eng-rus): index, dictzip, FreeDict's senses -> weighted pairs; the seeded MUSE split of the
headwords; broken copies refused with the file and line."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from support.shared_data import FREEDICT, needs
from xling.codeswitch.dictd import decode_b64, read_dictd, write_muse_split
from xling.codeswitch.dictionary import Pairs, read_muse
from xling.errors import InputError

pytestmark = needs(FREEDICT)


def files(name: str) -> tuple[Path, Path]:
    return FREEDICT / f"freedict-{name}.index", FREEDICT / f"freedict-{name}.dict.dz"


@pytest.fixture(scope="module")
def eng_fra() -> Pairs:
    return read_dictd(*files("eng-fra"))


def translations(pairs: Pairs, headword: str) -> dict[str, float]:
    return {b: w for (a, b), w in pairs.items() if a == headword}


def test_real_entries_become_their_translations(eng_fra):
    # iron /aiən/ | 1. fer | 2. repasser] | 3. fer à repasser: a stray bracket, a phrase kept whole
    assert translations(eng_fra, "iron") == {"fer": 1, "repasser": 1, "fer à repasser": 1}
    assert translations(eng_fra, "house") == {"maison": 1}
    # the entry's spelling, not the index key "aixlachapelle"; U+2010 HYPHEN written as "-"
    assert translations(eng_fra, "Aix-la-Chapelle") == {"Aix-la-Chapelle": 1}
    assert translations(eng_fra, "Addis Ababa") == {"Addis-Abeba": 1}
    # "... ago" -> "il y a ...": a pattern with a gap, no running text matches it
    assert not [p for p in eng_fra if "..." in p[0] + p[1]]
    # the 00database* entries (the dictionary's info text, URL) are not headwords
    assert not [p for p in eng_fra if "FreeDict" in p[0] + p[1] or "freedict.org" in p[1]]

    eng_rus = read_dictd(*files("eng-rus"))
    assert translations(eng_rus, "about") == {"о": 1, "приблизительно": 1, "примерно": 1}
    assert translations(eng_rus, "ABC") == {"азбука": 1, "алфавит": 1}


def test_fra_eng_parts_of_speech_labels_notes_and_examples_are_dropped():
    fra_eng = read_dictd(*files("fra-eng"))
    assert translations(fra_eng, "cane") == {"duck": 1}  # cane /kan/ <n, fem> | (female) duck
    assert translations(fra_eng, "rognon") == {"kidney": 1}  # 1.  [cul] | 2. kidney
    assert translations(fra_eng, "colza") == {"rape": 1}  # rape (seed)
    assert translations(fra_eng, "falloir") == {}  # its senses are usage examples only
    assert set(translations(fra_eng, "à")) >= {"at", "to", "near to", "in order to", "until"}


def test_a_seeded_muse_split_of_the_headwords(eng_fra, tmp_path):
    train, test = tmp_path / "en-fr.0-500.txt", tmp_path / "en-fr.500-600.txt"
    counts = write_muse_split(eng_fra, train, test, 500, 100, seed=1)
    train_pairs, test_pairs = read_muse(train), read_muse(test)  # one word a side, as MUSE reads it
    train_words, test_words = {a for a, _ in train_pairs}, {a for a, _ in test_pairs}
    assert (len(train_words), len(test_words)) == (500, 100) and not train_words & test_words
    assert set(train_pairs) | set(test_pairs) <= set(eng_fra)
    assert all(eng_fra[(a, b)] for a in train_words for b in translations(eng_fra, a) if " " not in b) and all(
        (a, b) in train_pairs for a in train_words for b in translations(eng_fra, a) if " " not in b)
    assert counts["train"] == {"words": 500, "pairs": len(train_pairs)}
    assert counts["test"] == {"words": 100, "pairs": len(test_pairs)}

    again = tmp_path / "again"
    again.mkdir()
    write_muse_split(eng_fra, again / "train.txt", again / "test.txt", 500, 100, seed=1)
    assert (again / "train.txt").read_bytes() == train.read_bytes()
    assert (again / "test.txt").read_bytes() == test.read_bytes()
    write_muse_split(eng_fra, again / "train.txt", again / "test.txt", 500, 100, seed=2)
    assert (again / "train.txt").read_bytes() != train.read_bytes()


def test_a_split_larger_than_the_dictionary_writes_nothing(tmp_path):
    eng_rus = read_dictd(*files("eng-rus"))
    with pytest.raises(ValueError, match="one-word headwords, fewer than 1500 \\+ 500"):
        write_muse_split(eng_rus, tmp_path / "train.txt", tmp_path / "test.txt", 1500, 500, seed=0)
    assert list(tmp_path.iterdir()) == []


def _copy(tmp_path: Path, name: str) -> tuple[Path, Path]:
    index, dictionary = files(name)
    return Path(shutil.copy(index, tmp_path)), Path(shutil.copy(dictionary, tmp_path))


def _edit_line(path: Path, number: int, edit) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[number - 1] = edit(lines[number - 1])
    path.write_text("".join(lines), encoding="utf-8")


def test_an_index_line_without_three_fields_is_refused(tmp_path):
    index, dictionary = _copy(tmp_path, "eng-rus")
    _edit_line(index, 941, lambda line: line.replace("\t", " ", 1))  # "house KXA\tU"
    with pytest.raises(InputError) as err:
        read_dictd(index, dictionary)
    assert (err.value.path, err.value.line) == (str(index), 941)
    assert "headword<TAB>offset<TAB>length" in str(err.value) and "house KXA" in str(err.value)


def test_an_entry_outside_the_dictionary_is_refused_at_its_index_line(tmp_path):
    index, dictionary = _copy(tmp_path, "eng-rus")
    size = len(gzip.decompress(dictionary.read_bytes()))  # 68,514 bytes
    _edit_line(index, 941, lambda line: "house\tQ0A\tU\n")  # offset 68,608, past the end
    assert decode_b64("Q0A") > size
    with pytest.raises(InputError) as err:
        read_dictd(index, dictionary)
    assert (err.value.path, err.value.line) == (str(index), 941)
    assert f"inside {dictionary.name} ({size} bytes decompressed)" in str(err.value)


def test_a_dictionary_that_is_not_gzip_is_refused(tmp_path):
    index, dictionary = _copy(tmp_path, "eng-rus")
    dictionary.write_bytes(gzip.decompress(dictionary.read_bytes()))  # the plain .dict, named .dict.dz
    with pytest.raises(InputError) as err:
        read_dictd(index, dictionary)
    assert (err.value.path, err.value.line) == (str(dictionary), None)
    assert "a dictzip (gzip) file" in str(err.value)


def _package(root: Path, *names: str) -> Path:
    """FreeDict's dictionaries laid out as their Debian package extracts (usr/share/dictd/)."""
    dictd = root / "usr" / "share" / "dictd"
    dictd.mkdir(parents=True)
    for name in names:
        for suffix in (".index", ".dict.dz"):
            shutil.copyfile(FREEDICT / f"freedict-{name}{suffix}", dictd / f"freedict-{name}{suffix}")
    return root


@needs(FREEDICT)
def test_code_switching_dictionaries_merge_both_freedict_directions(tmp_path):
    """Extra anchors with FreeDict (codeswitch.dictionary: freedict): eng-fra and fra-eng merged into
    one weighted en-fr dictionary and its reverse; a pair only one direction lists is there; without
    a reverse dictionary the forward one alone; a package without one .index and one .dict.dz is an
    error naming it."""
    from xling.codeswitch import build_dictionary
    from xling.codeswitch.dictd import find_dictd
    from xling.codeswitch.dictionary import read_dict

    fwd_dir, rev_dir = _package(tmp_path / "eng-fra", "eng-fra"), _package(tmp_path / "fra-eng", "fra-eng")
    eng_fra = read_dictd(*find_dictd(fwd_dir))
    fra_eng = read_dictd(*find_dictd(rev_dir))
    info = build_dictionary("freedict", fwd_dir, "en", "fr", tmp_path / "en-fr.tsv", tmp_path / "fr-en.tsv",
                            reverse=rev_dir)
    fwd, rev = read_dict(tmp_path / "en-fr.tsv"), read_dict(tmp_path / "fr-en.tsv")
    only_reverse = next((b, a) for (a, b) in fra_eng if (b, a) not in eng_fra and " " not in a + b)
    both = next(p for p in eng_fra if (p[1], p[0]) in fra_eng and " " not in p[0] + p[1])
    assert only_reverse in fwd and (only_reverse[1], only_reverse[0]) in rev
    assert fwd[both] == eng_fra[both] + fra_eng[(both[1], both[0])]  # each direction's senses add up
    assert info["pairs"] == len(fwd) >= len(eng_fra)
    build_dictionary("freedict", fwd_dir, "en", "fr", tmp_path / "alone.tsv", tmp_path / "alone_rev.tsv")
    assert only_reverse not in read_dict(tmp_path / "alone.tsv")
    _package(tmp_path / "two", "eng-fra", "eng-rus")
    with pytest.raises(InputError, match=r"two: expected exactly one dictd \*\.index file under it"):
        find_dictd(tmp_path / "two")
