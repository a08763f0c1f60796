"""Figure 4's dictionaries from FreeDict (analysis.words.dictionary: freedict): the dictd files
found in an extracted download, rule freedict_split's MUSE-format train and test files of the real
eng-fra dictionary (fetched and extracted as the download stage does), lowercased as MUSE's, and
the config's checks: a target without a dictionary is left out of Figure 4, none at all refused."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from support.real_section5 import demo_with_real_section5, freedict_tarball
from support.script_run import run_script
from support.shared_data import FREEDICT, needs
from xling import config as xcfg
from xling.analysis.dictionaries import lowercased
from xling.codeswitch.dictd import find_dictd, read_dictd
from xling.codeswitch.dictionary import read_muse
from xling.download.extract import safe_extract
from xling.download.fetch import fetch
from xling.errors import ConfigError, InputError

pytestmark = needs(FREEDICT)


@pytest.fixture(scope="module")
def eng_fra(tmp_path_factory) -> Path:
    """FreeDict's eng-fra as the download stage leaves it: fetched (file://) and extracted."""
    tmp = tmp_path_factory.mktemp("freedict")
    tarball = freedict_tarball("eng-fra", tmp / "freedict-eng-fra.tar.gz")
    archive = tmp / "downloads" / "freedict_eng_fra" / "freedict-eng-fra.tar.gz"
    fetch(tarball.as_uri(), archive)
    return safe_extract(archive, archive.parent / "extracted")


def split(root: Path, out: Path, train: int, test: int, seed: int) -> tuple[Path, Path]:
    """Rule freedict_split's script on the extracted download ``root``."""
    files = out / "en-fr.train.txt", out / "en-fr.test.txt"
    run_script("freedict_split", {"dictd": str(root)}, {"train": str(files[0]), "test": str(files[1])},
               {"train_words": train, "test_words": test, "seed": seed}, out / "split.log")
    return files


def test_the_dictd_files_of_an_extracted_package(eng_fra, tmp_path):
    index, dictionary = find_dictd(eng_fra)
    assert index == eng_fra / "usr/share/dictd/freedict-eng-fra.index"
    assert dictionary == eng_fra / "usr/share/dictd/freedict-eng-fra.dict.dz"
    two = tmp_path / "two"
    shutil.copytree(eng_fra, two)
    shutil.copy(FREEDICT / "freedict-eng-rus.index", two / "usr" / "freedict-eng-rus.index")
    with pytest.raises(InputError, match=r"exactly one dictd \*\.index file under it, got '2: usr/freedict-eng-rus"):
        find_dictd(two)
    (two / "usr" / "freedict-eng-rus.index").unlink()
    (two / "usr/share/dictd/freedict-eng-fra.dict.dz").unlink()
    with pytest.raises(InputError, match=r"two: expected exactly one dictd \*\.dict\.dz file under it, got '0: none'"):
        find_dictd(two)


def test_freedict_split_writes_muse_files_of_the_real_dictionary(eng_fra, tmp_path):
    """MUSE's sizes (5,000 training and 1,500 test headwords), no headword in both, every pair one
    of FreeDict's lowercased, every translation of a drawn headword kept; seeded."""
    train, test = split(eng_fra, tmp_path / "a", 5000, 1500, seed=0)
    pairs = {(a, b) for (a, b) in lowercased(read_dictd(*find_dictd(eng_fra)))}
    got = {name: list(read_muse(path)) for name, path in (("train", train), ("test", test))}
    heads = {name: {a for a, _ in rows} for name, rows in got.items()}
    assert (len(heads["train"]), len(heads["test"])) == (5000, 1500) and not heads["train"] & heads["test"]
    assert all(p in pairs for rows in got.values() for p in rows)
    one_word = {(a, b) for a, b in pairs if " " not in a + b}
    for name, rows in got.items():  # every one-word translation of a drawn headword
        assert set(rows) == {(a, b) for a, b in one_word if a in heads[name]}
    text = train.read_text(encoding="utf-8") + test.read_text(encoding="utf-8")
    assert text == text.lower()  # as MUSE's: Figure 4 reads every vocabulary lowercased
    log = json.loads((tmp_path / "a" / "split.log").read_text().strip().splitlines()[-1])
    assert log["headwords"] == 7246 and log["train"]["words"] == 5000 and log["index"].endswith("eng-fra.index")
    again = split(eng_fra, tmp_path / "b", 5000, 1500, seed=0)
    other = split(eng_fra, tmp_path / "c", 5000, 1500, seed=1)
    assert again[0].read_bytes() == train.read_bytes() and other[0].read_bytes() != train.read_bytes()


def test_a_dictionary_too_small_for_the_sizes_writes_nothing(eng_fra, tmp_path):
    out = tmp_path / "small"
    with pytest.raises(InputError, match=r"freedict-eng-fra\.index: expected 7000 \+ 1500 one-word headwords "
                                         r"\(analysis\.words\.freedict_train \+ freedict_test\)"):
        split(eng_fra, out, 7000, 1500, seed=0)
    assert not list(out.glob("*.txt"))


def test_lowercased_pairs_add_their_weights():
    assert lowercased({("Paris", "Paris"): 1, ("paris", "paris"): 2, ("May", "mai"): 1}) == {
        ("paris", "paris"): 3, ("may", "mai"): 1}


# --- the config --------------------------------------------------------------------------------

@pytest.fixture
def real(tmp_path) -> dict:
    return demo_with_real_section5(tmp_path)


def test_a_target_without_a_dictionary_is_left_out_of_figure4(real):
    # FreeDict's eng-deu is not in the overlay: en-de is left out, and said why
    assert xcfg.figure4_targets(real) == ["fr", "ru"]
    assert xcfg.figure4_unavailable(real) == {
        "de": "codeswitch.freedict has no en-de dictionary (analysis.words.dictionary: freedict)"}
    # MUSE's dictionaries: every target, whatever codeswitch.freedict holds
    muse = xcfg.merge(real, {"analysis": {"words": {"dictionary": "muse"}}})
    assert xcfg.figure4_targets(muse) == ["fr", "de", "ru"] and xcfg.figure4_unavailable(muse) == {}


def test_figure4_with_no_dictionary_at_all_and_unknown_downloads_are_refused(real):
    def problems(mutate) -> list[str]:
        cfg = copy.deepcopy(real)
        mutate(cfg)
        with pytest.raises(ConfigError) as info:
            xcfg.validate(cfg)
        return str(info.value).splitlines()[1:]

    assert problems(lambda c: c["codeswitch"].update(freedict={"fr-en": "freedict_eng_fra"})) == [
        "  config key 'codeswitch.freedict': analysis.words.dictionary: freedict, but no FreeDict dictionary from en "
        "to a Section 5 language (en-fr, en-de, en-ru); Figure 4 would have no pair"]
    assert problems(lambda c: c["codeswitch"]["freedict"].update({"en-de": "freedict_eng_deu"})) == [
        "  config key 'codeswitch.freedict.en-de': 'freedict_eng_deu' is not a key of downloads"]
