"""xling.preprocess.sentences: the package's sentence splitters, on real ELTeC paragraphs of each
language (abbreviations, dialogue in quotes and dashes, ellipses), and the file job."""

from __future__ import annotations

import pytest

from support.shared_data import ELTEC, needs
from xling.liu import sample
from xling.preprocess.sentences import split_file, split_units, splitter
from xling.preprocess.tei import tei_units

# (file, the paragraph's start, language, the sentences "moses" cuts it into)
PARAGRAPHS = [
    ("eng/ENG18400_Trollope.xml", '"Open the door, Mrs. Tremlett!"', "en", [
        '"Open the door, Mrs. Tremlett!" said Mary.',
        '"Don\'t you hear the knocking?',
        'This is the child I shall take away with me," she added in a whisper, and with a look that her '
        'friend perfectly understood.']),
    ("fra/FRA06401_Chandeneux.xml", "— Bien sûr, M. Evenin", "fr", [
        "— Bien sûr, M. Evenin vient de trouver un bon sujet d'article, ou, mieux encore, un hémistiche "
        "heureux.",
        "Son front est au triomphe, continua M. Jouanny."]),
    ("deu/DEU026.xml", "Merkwürdig, doch ganz konstant", "de", [
        "Merkwürdig, doch ganz konstant stehender Zug: wenn ein Hund in große Freudenbewegung geräth, wenn "
        "er z. B. im höchsten Entzücken auf den ersehnten wiedergefundenen Herrn losstürzt, muß er mitten "
        "im Sprung einhalten und sich kratzen.",
        "Dieß kann erklärt werden"]),  # the paragraph stops there; verse lines follow it
    ("deu/DEU072.xml", "»Rege mich nicht noch mehr auf", "de", [
        "»Rege mich nicht noch mehr auf, Menschenkind«, seufzte Hofrat Dr. Albin Brokenkorb, unfähig, von "
        "neuem grob den Quäler anzufahren.",
        "Dieser aber meinte draußen vor der Tür kopfschüttelnd:"]),
    ("rus/003_kazaki.xml", "— Будешь плакать от меня", "ru", [
        "— Будешь плакать от меня, — и, отвернувшись от нее, крикнул на девок: — Играй, что ль!",
        "Марьяну как будто испугало и рассердило то, что он сказал."]),
    ("rus/013_druzheskie-sovety.xml", "Две услуги его", "ru", [
        "Две услуги его, оказанные нам, могли даже назваться благодеяниями...",
        "И неужели все это делается без всякой отдаленной цели, единственно из доброты сердечной?"]),
]


def _paragraph(name: str, start: str) -> str:
    found = [u for u in tei_units(ELTEC / name) if u.startswith(start)]
    assert len(found) == 1, found
    return found[0]


@needs(ELTEC)
@pytest.mark.parametrize("name,start,lang,sentences", PARAGRAPHS, ids=[p[0] for p in PARAGRAPHS])
def test_real_paragraphs_are_cut_into_their_sentences(name, start, lang, sentences):
    paragraph = _paragraph(name, start)
    assert list(split_units([paragraph], lang, "moses")) == sentences
    assert " ".join(sentences) == paragraph  # nothing lost, nothing added


@needs(ELTEC)
def test_split_file_writes_the_sentences_of_every_line(tmp_path):
    name, start, lang, sentences = PARAGRAPHS[0]
    src, dst = tmp_path / "units.txt", tmp_path / "sentences.txt"
    src.write_text("\n".join(["CHAPTER I.", "", _paragraph(name, start)]) + "\n", encoding="utf-8")
    counts = split_file(src, dst, lang, "moses")
    assert dst.read_text(encoding="utf-8").splitlines() == ["CHAPTER I.", *sentences]
    assert counts == {"lines": 3, "sentences": 4, "words": sum(len(s.split()) for s in ["CHAPTER I.", *sentences])}


def test_a_failed_split_leaves_no_output(tmp_path):
    src, dst = tmp_path / "units.txt", tmp_path / "sentences.txt"
    src.write_bytes("Une phrase. Une autre.\n".encode() + b"\xff\xfe broken\n")
    with pytest.raises(UnicodeDecodeError):
        split_file(src, dst, "fr", "moses")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["units.txt"]


def test_the_names_and_the_liu_sampler_use_this_module():
    assert sample.splitter is splitter
    assert list(splitter("lines", "en")("One. Two.")) == ["One. Two."]
    with pytest.raises(ValueError, match="unknown sentence splitter 'punkt'"):
        splitter("punkt", "en")
    with pytest.raises(ValueError, match="sentence splitter 'moses'"):
        splitter("moses", "zh")  # Moses has no rules for Chinese; sentencex has
