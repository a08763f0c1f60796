"""Per-language realisation rules of the testbed (word order, morphology, script) and its small
pure helpers, checked against their definitions on hand-built structures."""

from __future__ import annotations

import random

import pytest

from xling.testbed.formats import iob1, ner_words
from xling.testbed.lexicon import build_lexicon, transliterate_ru, transliterate_zh
from xling.testbed.realise import realiser
from xling.testbed.structures import Clause, Entity
from xling.testbed.tree import Sentence, Token, check_tree, drop_leaves


@pytest.fixture(scope="module")
def lex():
    return build_lexicon(1)


def _real(lang, lex, c, seed=0):
    return realiser(lang, lex, random.Random(seed)).sentence(c)


def _by_deprel(sent, rel):
    return [t for t in sent.tokens if t.deprel == rel]


DOG = Entity("noun", "dog", det="def", adjs=("red",))
CAT = Entity("noun", "cat", det="def")
MAN = Entity("noun", "man", det="def", relcl=Clause("see", obj=CAT, gap="subj", tense="past"))


def test_french_adjective_after_noun_and_bangs_before(lex):
    s = _real("fr", lex, Clause("sleep", subj=DOG))
    adj, noun = _by_deprel(s, "amod")[0], _by_deprel(s, "nsubj")[0]
    assert adj.head == noun.id and adj.id > noun.id
    big = Entity("noun", "dog", det="def", adjs=("big",))
    s = _real("fr", lex, Clause("sleep", subj=big))
    adj, noun = _by_deprel(s, "amod")[0], _by_deprel(s, "nsubj")[0]
    assert adj.id < noun.id


def test_french_contraction_becomes_multiword_token(lex):
    def noun(gender, vowel):
        return next(en for (en, pos), g in lex.gender["fr"].items()
                    if g == gender and (lex.main("fr", en, pos)[0] in "aeiouéhâî") == vowel)

    def text_of(possessor):
        house = Entity("noun", "house", det="def", nmod=("of", Entity("noun", possessor, det="def")))
        return _real("fr", lex, Clause("see", subj=Entity("name", "Anna", ner="PER"), obj=house))

    s = text_of(noun("m", False))                 # de + le -> du, one surface token over two words
    assert len(s.mwts) == 1 and " du " in f" {s.text()} "
    a, b, surface = s.mwts[0]
    assert [s.tokens[a - 1].form, s.tokens[b - 1].form, surface] == ["de", "le", "du"] and b == a + 1
    s = text_of(noun("m", True))                  # elision wins: de l'...
    assert not s.mwts and "de l'" in s.text()
    s = text_of(noun("f", False))                 # de la: nothing to contract
    assert not s.mwts and " de la " in s.text()


def test_german_verb_second_and_verb_final(lex):
    c = Clause("see", subj=MAN, obj=DOG, tense="past")
    s = _real("de", lex, c)
    root = _by_deprel(s, "root")[0]
    words = [t for t in s.tokens if t.upos != "PUNCT"]
    assert words[-1].id == root.id                       # participle closes the main clause
    rel = _by_deprel(s, "acl:relcl")[0]
    sub = [t for t in s.tokens if t.head == rel.id and t.upos != "PUNCT"] + [rel]
    assert max(t.id for t in sub) in (rel.id, rel.id + 1)    # relative clause: verb (+aux) last
    aux = [t for t in s.tokens if t.head == rel.id and t.deprel == "aux"][0]
    assert aux.id == rel.id + 1


def test_russian_case_suffixes_and_free_order(lex):
    c = Clause("see", subj=Entity("noun", "dog", det="def"), obj=CAT)
    orders, forms = set(), set()
    for seed in range(40):
        s = _real("ru", lex, c, seed)
        subj, obj, root = _by_deprel(s, "nsubj")[0], _by_deprel(s, "obj")[0], _by_deprel(s, "root")[0]
        orders.add(tuple(sorted(("S", "O", "V"), key=lambda k: {"S": subj, "O": obj, "V": root}[k].id)))
        forms.add((subj.form.lower(), obj.form.lower()))
        assert obj.form.endswith("а") and "Case=Acc" in obj.feats and "Case=Nom" in subj.feats
    assert len(orders) >= 3          # order varies, the case marking carries the roles


def test_chinese_relative_clause_before_noun_and_no_spaces(lex):
    s = _real("zh", lex, Clause("sleep", subj=MAN))
    rel, noun = _by_deprel(s, "acl:relcl")[0], _by_deprel(s, "nsubj")[0]
    assert rel.id < noun.id and s.tokens[noun.id - 2].form == "的"
    assert " " not in s.text() and all(not t.space_after for t in s.tokens)


def test_english_do_support_and_future(lex):
    assert _real("en", lex, Clause("see", subj=CAT, obj=DOG, neg=True)).text() == \
        "The cat does not see the red dog."
    assert _real("en", lex, Clause("sleep", subj=Entity("noun", "cat", det="def", number="pl"),
                                   tense="fut")).text() == "The cats will sleep."
    assert _real("en", lex, Clause("sleep", subj=MAN)).text() == "The man who saw the cat sleeps."


def test_relative_clause_verb_agrees_with_plural_head(lex):
    men = Entity("noun", "man", det="def", number="pl", relcl=Clause("sleep", gap="subj"))
    assert "men who sleep " in _real("en", lex, Clause("run", subj=men)).text()


def test_iob1_definition():
    assert iob1(["B-PER", "I-PER", "O", "B-LOC"]) == ["I-PER", "I-PER", "O", "I-LOC"]
    assert iob1(["B-PER", "B-PER", "I-PER"]) == ["I-PER", "B-PER", "I-PER"]   # adjacent same type
    assert iob1(["B-PER", "B-LOC"]) == ["I-PER", "I-LOC"]


def test_transliteration():
    assert transliterate_ru("Anna") == "Анна" and transliterate_ru("Sasha") == "Саша"
    zh = transliterate_zh("Marlow")
    assert 1 <= len(zh) <= 3 and all("\u4e00" <= ch <= "\u9fff" for ch in zh)
    assert transliterate_zh("Marlow") == zh           # deterministic, not Python's salted hash


def _sent(heads):
    return Sentence([Token(i + 1, f"w{i}", f"w{i}", "X", "_", h, "root" if h == 0 else "dep", True)
                     for i, h in enumerate(heads)])


def test_check_tree_finds_problems():
    assert check_tree(_sent([0, 1, 2])) == []
    assert any("roots" in p for p in check_tree(_sent([0, 0, 1])))
    assert any("cycle" in p for p in check_tree(_sent([0, 3, 2])))
    assert any("out of range" in p for p in check_tree(_sent([0, 7])))


def test_drop_leaves_renumbers_heads():
    s = _sent([0, 1, 1, 3])
    drop_leaves(s, [2])
    assert [(t.id, t.head, t.form) for t in s.tokens] == [(1, 0, "w0"), (2, 1, "w2"), (3, 2, "w3")]
    assert check_tree(s) == []


def test_ner_words_use_surface_of_multiword_tokens():
    s = _sent([0, 1, 1])
    s.mwts = [(2, 3, "du")]
    assert [w for w, _ in ner_words(s)] == ["w0", "du"]
