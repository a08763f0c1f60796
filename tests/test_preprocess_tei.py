"""xling.preprocess.tei on the real ELTeC files in ../shared/data: the novel's text of <body>, one
unit a line, page breaks and notes taken out without splitting or gluing words; bad files refused
with their line, leaving no output."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.shared_data import ELTEC, needs
from xling.errors import InputError
from xling.preprocess.tei import extract_tei, tei_units

pytestmark = needs(ELTEC)

TROLLOPE = ELTEC / "eng" / "ENG18400_Trollope.xml"  # front, back notes, verse, page breaks
DEU069 = ELTEC / "deu" / "DEU069.xml"

HETHERINGTON = (  # source: 'whether he had taken any <pb n="4"/> degree at all'
    "Mr. Hetherington was a new incumbent, and might, perhaps, have been a little affronted at a "
    "question which, by the blunt manner of it, seemed almost to insinuate a doubt whether he had "
    "taken any degree at all; but, though a good man, and an excellent clergyman to boot, he had a "
    "strong taste for humour, and had already discovered that his neighbour at the great house was "
    "rich in more ways than one. It was, therefore, with the utmost civility that he answered, "
    "\"My degree, Sir Matthew, was that of Master of Arts.\"")


@pytest.fixture(scope="module")
def trollope() -> list[str]:
    return list(tei_units(TROLLOPE))


def _unit(units: list[str], start: str) -> str:
    found = [u for u in units if u.startswith(start)]
    assert len(found) == 1, found
    return found[0]


def _left_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_page_break_between_words_leaves_one_space(trollope):
    assert 'taken any <pb n="4"/> degree' in " ".join(TROLLOPE.read_text(encoding="utf-8").split())
    assert _unit(trollope, "Mr. Hetherington") == HETHERINGTON


def test_a_page_break_inside_a_word_joins_it():
    assert "Arbeit, Neidlosig<pb/>keit dem" in DEU069.read_text(encoding="utf-8")
    unit = _unit(list(tei_units(DEU069)), "„Laß Jeden thun")
    assert unit == (
        "„Laß Jeden thun und Jeden haben, was er will. Der Werth des Lebens besteht nicht darin, zu "
        "sagen, ich bin das und das und ich besitze das und das, sondern darin, daß der Mensch sagt: "
        "Ich bin zufrieden. Liebe zur Arbeit, Neidlosigkeit dem Nächsten gegenüber und der Glaube an "
        "einen ewigen Gott — das sind die drei Dinge, die wir zuerst beherzigen müssen, wollen wir uns "
        "eines wirklichen, innern Glückes erfreuen. Denn, daß das Glück von außen kommt, sagen nur "
        "Diejenigen, die es in ihrem Innern nie empfunden haben.")


def test_notes_and_their_anchors_are_gone_and_the_text_around_them_stays(trollope, tmp_path):
    # ELTeC keeps the notes in <back>, an anchor <ref target="#ENG18400N1">[1]</ref> in the text
    assert _unit(trollope, "Michael, for a piecer,").startswith(
        "Michael, for a piecer, was a tall child for his age; and, though his limbs were")
    text = "\n".join(trollope)
    assert "[1]" not in text and "The children whose duty it is to walk backwards" not in text
    # a note inside a paragraph: its text goes, the words after it stay where they were
    source = TROLLOPE.read_text(encoding="utf-8")
    assert source.count("a doubt whether he had taken") == 1
    noted = tmp_path / "noted.xml"
    noted.write_text(source.replace(
        "a doubt whether", 'a doubt<note place="foot">A <hi>clergyman\'s</hi> degree.</note> whether'),
        encoding="utf-8")
    assert _unit(list(tei_units(noted)), "Mr. Hetherington") == HETHERINGTON


def test_verse_lines_are_units(trollope):
    at = trollope.index('"And should the eye for which I write')
    assert trollope[at:at + 9] == [
        '"And should the eye for which I write', "By sun-lit morn, or moon-lit night,",
        "Drop on this record of my soul,", "Which tells a part — ah! not the whole,",
        "Of hopes that trembling, faltering, timid,", "Now fire my cheek, now turn it livid, —",
        "Should that soft eye but drop one tear,", "I'd hug my chain, and call it dear!\"",
        "The tear asked for, almost came as she ceased."]


def test_header_front_and_back_are_not_novel_text(trollope):
    text = "\n".join(trollope)
    for outside in ("ELTeC edition",  # <teiHeader>'s title
                    "PREFACE.", "When the author of \"Michael Armstrong\"",  # <front>
                    "NOTES", "are called piecers, or pieceners"):  # <back>
        assert outside in TROLLOPE.read_text(encoding="utf-8").replace("\n\t\t\t\t", " ")
        assert outside not in text, outside
    assert trollope[0] == "CHAPTER I." and trollope[-1] == "THE END."
    assert all(u == " ".join(u.split()) and u for u in trollope)


def test_level0_russian_files_body_under_tei_and_loose_text():
    # 003_kazaki has <body> directly under <TEI>; 015's part titles stand in a <div> with no <p>
    assert list(tei_units(ELTEC / "rus" / "003_kazaki.xml"))[:4] == ["Казаки", "Казаки", "1.", "Все затихло в Москве."]
    assert list(tei_units(ELTEC / "rus" / "015_anna-karenina.xml"))[:2] == ["ЧАСТЬ ПЕРВАЯ", "1."]


def test_extract_writes_every_file_in_order_with_counts(trollope, tmp_path):
    out = tmp_path / "eltec.txt"
    counts = extract_tei([TROLLOPE, DEU069], out)
    lines = out.read_text(encoding="utf-8").splitlines()
    deu = list(tei_units(DEU069))
    assert lines == trollope + deu
    assert counts["files"] == [
        {"file": str(TROLLOPE), "units": len(trollope), "words": sum(len(u.split()) for u in trollope)},
        {"file": str(DEU069), "units": len(deu), "words": sum(len(u.split()) for u in deu)}]
    assert counts["units"] == len(lines)


def _refused(paths: list[Path], out: Path, line: int | None, *words: str) -> InputError:
    with pytest.raises(InputError) as err:
        extract_tei(paths, out)
    assert err.value.line == line, str(err.value)
    for w in words:
        assert w in str(err.value), str(err.value)
    assert _left_in(out.parent) == sorted(p.name for p in paths if p.parent == out.parent)
    return err.value


def test_a_file_that_is_not_tei_is_refused(tmp_path):
    source = TROLLOPE.read_text(encoding="utf-8")
    plain = tmp_path / "no_namespace.xml"  # a TEI file without TEI's namespace
    plain.write_text(source.replace('<TEI xmlns="http://www.tei-c.org/ns/1.0"', "<TEI"), encoding="utf-8")
    root_line = source[:source.index("<TEI ")].count("\n") + 1
    _refused([TROLLOPE, plain], tmp_path / "out.txt", root_line, str(plain), "root element <TEI>",
             "http://www.tei-c.org/ns/1.0")


def test_a_truncated_file_is_refused_at_the_parsers_line(tmp_path):
    data = TROLLOPE.read_bytes()
    truncated = tmp_path / "truncated.xml"
    truncated.write_bytes(data[: len(data) // 2])
    last_line = data[: len(data) // 2].count(b"\n") + 1
    _refused([TROLLOPE, truncated], tmp_path / "out.txt", last_line, str(truncated), "well-formed XML",
             "Premature end of data")


def test_a_tei_file_without_body_is_refused(tmp_path):
    # ELTeC-rus' level-0 008_geroi-nashego-vremeni: its chapters stand in <text>, with no <body>
    no_body = ELTEC / "rus" / "008_geroi-nashego-vremeni.xml"
    err = _refused([no_body], tmp_path / "out.txt", 47, str(no_body), "a <body> in <text>")
    assert no_body.read_text(encoding="utf-8").splitlines()[46].strip() == "<text>", err


def test_an_element_the_reader_does_not_know_is_refused_at_its_line(tmp_path):
    source = TROLLOPE.read_text(encoding="utf-8")
    odd = tmp_path / "running_header.xml"
    odd.write_text(source.replace("a doubt whether", 'a doubt <fw type="header">MICHAEL ARMSTRONG.</fw> whether'),
                   encoding="utf-8")
    line = source[:source.index("a doubt whether")].count("\n") + 1
    _refused([odd], tmp_path / "out.txt", line, str(odd), "{http://www.tei-c.org/ns/1.0}fw")
