"""Word forms of the derived languages: generated pseudo-words with a known English translation.

Words are built from each language's own syllable inventory (not a character map of English), so
the only surface overlap with English is the real anchors: names and numbers (verbatim in fr/de,
transliterated in ru/zh) and chance subwords. The zh-like language takes single characters and
frequent 2-3 character words of a real segmenter's dictionary (with arbitrary meanings), so that
word segmentation behaves as on Chinese: mostly right, sometimes wrong."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

from . import english as E

TARGETS = ("fr", "de", "ru", "zh")
CONTENT_POS = ("NOUN", "VERB", "ADJ", "ADV")
SYNONYM_RATE = 0.15          # share of content concepts with a second translation

# Syllable inventories: (onsets, nuclei, codas)
_SYLLABLES = {
    "fr": (["", "b", "c", "d", "f", "g", "j", "l", "m", "n", "p", "r", "s", "t", "v", "ch", "gr",
            "pl", "tr", "br", "qu"],
           ["a", "e", "i", "o", "u", "ou", "ai", "é", "eu", "au", "on", "an", "in", "oi"],
           ["", "", "", "", "r", "l", "s", "n"]),
    "de": (["b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "w", "z", "sch", "st",
            "pf", "kr", "fl", "gr", "br", "sp"],
           ["a", "e", "i", "o", "u", "ä", "ö", "ü", "ei", "au", "ie"],
           ["", "n", "r", "ch", "st", "ck", "t", "ng", "l", "m"]),
    "ru": (["б", "в", "г", "д", "ж", "з", "к", "л", "м", "н", "п", "р", "с", "т", "ф", "х", "ч",
            "ш", "бр", "пр", "ст", "кр", "дв", "сл"],
           ["а", "е", "и", "о", "у", "ы", "я", "ю"],
           ["", "", "н", "р", "л", "к", "т", "ск", "м"]),
}
from .han import HAN_POOL, TRANSLIT_HAN, ZH_FUNCTION_CHARS, ZH_WORDS_2, ZH_WORDS_3  # noqa: E402

_FR_ENDINGS = {"NOUN": ["", "", "e", "ette", "eau", "ion", "age"], "ADJ": ["", "", "e", "al", "if"],
               "VERB": ["er", "er", "er", "ir"], "ADV": ["ment"]}
_DE_ENDINGS = {"NOUN": ["", "", "e", "ung", "er", "el"], "ADJ": ["", "ig", "lich", "isch"],
               "VERB": ["en"], "ADV": ["", "s"]}
_RU_ENDINGS = {"NOUN": [""], "ADJ": ["ый"], "VERB": ["ать"], "ADV": ["о"]}
_ZH_LENGTHS = {"NOUN": (1, 2, 2, 2, 3), "VERB": (1, 1, 2), "ADJ": (1, 1, 2), "ADV": (2, 2, 1)}

_RU_TRANSLIT = [("sch", "ш"), ("sh", "ш"), ("ch", "ч"), ("th", "т"), ("ph", "ф"), ("ck", "к"),
                ("qu", "кв"), ("x", "кс"), ("a", "а"), ("b", "б"), ("c", "к"), ("d", "д"),
                ("e", "е"), ("f", "ф"), ("g", "г"), ("h", "х"), ("i", "и"), ("j", "й"), ("k", "к"),
                ("l", "л"), ("m", "м"), ("n", "н"), ("o", "о"), ("p", "п"), ("q", "к"), ("r", "р"),
                ("s", "с"), ("t", "т"), ("u", "у"), ("v", "в"), ("w", "в"), ("y", "и"), ("z", "з")]


def transliterate_ru(name: str) -> str:
    """Latin name -> Cyrillic, the way Russian writes foreign names (by sound, roughly)."""
    low, out, i = name.lower(), [], 0
    while i < len(low):
        for src, dst in _RU_TRANSLIT:
            if low.startswith(src, i):
                out.append(dst)
                i += len(src)
                break
        else:
            i += 1
    word = "".join(out)
    return word[:1].upper() + word[1:]


def transliterate_zh(name: str) -> str:
    """Latin name -> Han characters, one per syllable, from the set used for foreign names."""
    import re

    syllables = re.findall(r"[^aeiouy]*[aeiouy]+(?:[^aeiouy]+$)?", name.lower()) or [name.lower()]
    chars = []
    for syl in syllables:
        digest = hashlib.sha1(syl.encode()).digest()
        chars.append(TRANSLIT_HAN[int.from_bytes(digest[:4], "big") % len(TRANSLIT_HAN)])
    return "".join(chars)


def name_tokens() -> list[str]:
    """Every single-token piece of a name (multi-word names are several PROPN tokens)."""
    toks = list(E.FIRST_NAMES) + list(E.LAST_NAMES) + list(E.PLACE_NAMES) + list(E.ORG_HEADS)
    for multi in E.PLACE_MULTI:
        toks += multi.split()
    seen, out = set(), []
    for t in toks:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


def content_concepts() -> list[tuple[str, str]]:
    """(english lemma, UPOS) for every content word; the hypernyms are nouns too."""
    concepts = [(n, "NOUN") for n in E.NOUNS] + [(h, "NOUN") for h in E.HYPERNYMS if h not in E.NOUN_CLASS]
    concepts += [(v, "VERB") for v in E.VERBS] + [(a, "ADJ") for a in E.ADJS]
    concepts += [(a, "ADV") for a in E.ADVS]
    return concepts


@dataclass
class Lexicon:
    """forms[lang][(en, pos)] = translations (first = main one); gender[lang][(en, pos)]."""

    forms: dict[str, dict[tuple[str, str], list[str]]] = field(default_factory=dict)
    gender: dict[str, dict[tuple[str, str], str]] = field(default_factory=dict)
    names: dict[str, dict[str, str]] = field(default_factory=dict)

    def main(self, lang: str, en: str, pos: str) -> str:
        return self.forms[lang][(en, pos)][0]

    def choose(self, lang: str, en: str, pos: str, rng: random.Random) -> str:
        opts = self.forms[lang][(en, pos)]
        # the synonym is the rarer variant, so dictionaries see a dominant and a minor sense
        return opts[1] if len(opts) > 1 and rng.random() < 0.3 else opts[0]

    def name(self, lang: str, token: str) -> str:
        return self.names[lang][token]

    def gold_rows(self, lang: str) -> list[tuple[str, str, str]]:
        rows = [(en, tgt, pos) for (en, pos), tgts in self.forms[lang].items() for tgt in tgts]
        rows += [(tok, self.names[lang][tok], "PROPN") for tok in name_tokens()]
        return rows


def _pseudo_word(rng: random.Random, lang: str, pos: str) -> str:
    if lang == "zh":
        n = rng.choice(_ZH_LENGTHS[pos])
        if n == 1:
            return rng.choice([c for c in HAN_POOL if c not in ZH_FUNCTION_CHARS])
        return rng.choice(ZH_WORDS_2 if n == 2 else ZH_WORDS_3)
    onsets, nuclei, codas = _SYLLABLES[lang]
    nsyl = rng.choice((1, 2, 2, 2, 3)) if pos != "ADV" else rng.choice((1, 2))
    parts = []
    for k in range(nsyl):
        coda = rng.choice(codas) if k == nsyl - 1 else ""
        parts.append(rng.choice(onsets) + rng.choice(nuclei) + coda)
    stem = "".join(parts)
    endings = {"fr": _FR_ENDINGS, "de": _DE_ENDINGS, "ru": _RU_ENDINGS}[lang][pos]
    word = stem + rng.choice(endings)
    if lang == "ru" and pos == "NOUN" and word[-1] in "аеиоуыяю":
        word += rng.choice("нрлкт")     # consonant stems take the case endings cleanly
    if lang == "de" and pos == "NOUN":
        word = word[:1].upper() + word[1:]
    return word


def build_lexicon(seed: int) -> Lexicon:
    """Deterministic in ``seed``: every content concept gets 1-2 unused pseudo-words per language."""
    lex = Lexicon()
    lex.names["en"] = {t: t for t in name_tokens()}
    english = {w.lower() for w, _ in content_concepts()} | {"the", "a", "an", "of", "in", "on"}
    for lang in TARGETS:
        rng = random.Random(f"lexicon-{lang}-{seed}")
        names = _names(lang)
        # names are taken first, so no content word can be mistaken for (or translate) a name
        used: set[str] = set(names.values()) | {v.lower() for v in names.values()}
        forms: dict[tuple[str, str], list[str]] = {}
        gender: dict[tuple[str, str], str] = {}
        for concept in content_concepts():
            pos = concept[1]
            n = 2 if rng.random() < SYNONYM_RATE else 1
            words: list[str] = []
            while len(words) < n:
                w = _pseudo_word(rng, lang, pos)
                # unique per language and never an English word: overlap stays with real anchors
                if w in used or w.lower() in english or len(w) < (1 if lang == "zh" else 3):
                    continue
                used.add(w)
                words.append(w)
            forms[concept] = words
            if pos == "NOUN":
                gender[concept] = rng.choice(("m", "f") if lang == "fr" else ("m", "f", "n"))
        lex.forms[lang] = forms
        lex.gender[lang] = gender
        lex.names[lang] = names
    return lex


def _names(lang: str) -> dict[str, str]:
    """Name pieces in ``lang``: verbatim (fr, de) or transliterated (ru, zh), one-to-one."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for tok in name_tokens():
        if lang in ("fr", "de"):
            form = tok
        elif lang == "ru":
            form = transliterate_ru(tok)
        else:
            form, salt = transliterate_zh(tok), 0
            while form in taken:            # two names sounding alike: lengthen the later one
                salt += 1
                form = transliterate_zh(tok) + transliterate_zh(f"{tok}{salt}")[-1]
        if form in taken:
            raise AssertionError(f"name {tok!r} collides with another name as {form!r} in {lang}")
        taken.add(form)
        out[tok] = form
    return out
