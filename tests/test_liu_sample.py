"""Liu et al.'s data sizes: a prefix of the training split, nested, refused when too short."""

import pytest

from xling.errors import InputError
from xling.liu.sample import copy_first_lines


def test_first_lines_nest_and_keep_the_last_newline(tmp_path):
    src = tmp_path / "train.txt"
    src.write_text("a b\nc\nd e f\ng", encoding="utf-8")
    small, big = tmp_path / "n2.txt", tmp_path / "n4.txt"
    assert copy_first_lines(src, small, 2) == 2 and copy_first_lines(src, big, 4) == 4
    assert small.read_text() == "a b\nc\n" and big.read_text() == "a b\nc\nd e f\ng\n"
    assert big.read_text().startswith(small.read_text())


def test_too_few_lines_names_the_file_and_writes_nothing(tmp_path):
    src = tmp_path / "train.txt"
    src.write_text("a\nb\n", encoding="utf-8")
    dst = tmp_path / "out" / "n3.txt"
    with pytest.raises(InputError, match=r"train\.txt: expected at least 3 sentences.*'2 lines'"):
        copy_first_lines(src, dst, 3)
    assert not dst.exists() and not any(dst.parent.iterdir())
