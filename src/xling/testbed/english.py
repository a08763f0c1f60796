"""The source language's vocabulary: English words with the facts the grammar needs.

Nouns carry a semantic class (which decides selectional restrictions) and a hypernym (for
entailment); adjectives carry an exclusive group (antonym pairs, colours: two members of one group
cannot both hold of one entity, which is where contradictions come from)."""

from __future__ import annotations

import re

# class -> (hypernym noun, members). Hypernyms are nouns themselves.
NOUN_CLASSES: dict[str, tuple[str, str]] = {
    "person": ("person", "man woman child teacher doctor farmer student soldier king queen artist "
                         "driver writer singer friend neighbour worker baker nurse judge pilot sailor "
                         "hunter priest boy girl mother father brother sister"),
    "animal": ("animal", "dog cat horse bird cow sheep lion tiger bear wolf fox rabbit mouse snake "
                         "duck goat pig eagle whale monkey"),
    "place": ("place", "city village park river mountain forest market school church garden beach "
                       "island valley lake road bridge harbour field castle station house tower "
                       "hospital museum library factory temple palace"),
    "thing": ("thing", "book letter table chair door window box bag key knife cup bottle hat coat "
                       "ship car train boat bicycle lamp map picture song story clock ring stone ball "
                       "flag bell"),
    "food": ("food", "bread apple cake soup rice cheese milk wine egg meat tea coffee fish"),
    "event": ("event", "race game prize election match contest war battle festival meeting"),
    "plant": ("plant", "tree flower rose grass oak"),
}
HYPERNYMS = sorted({h for h, _ in NOUN_CLASSES.values()})
NOUN_CLASS: dict[str, str] = {}
for _cls, (_hyp, _members) in NOUN_CLASSES.items():
    for _n in _members.split():
        NOUN_CLASS[_n] = _cls
NOUNS = list(NOUN_CLASS)

IRREGULAR_PLURAL = {"man": "men", "woman": "women", "child": "children", "mouse": "mice",
                    "sheep": "sheep", "fish": "fish", "knife": "knives", "wolf": "wolves",
                    "person": "people", "thing": "things"}

# verb -> (irregular past or "", subject classes, object classes, frame)
# frames: intr (no object), tr (object), ditr (object + recipient), excl (transitive and
# exclusive: only one agent can do it to the same object, e.g. win the race)
_ANIM = ("person", "animal", "PER")
_PERS = ("person", "PER")
VERBS: dict[str, tuple[str, tuple, tuple, str]] = {
    "see": ("saw", _ANIM, ("person", "animal", "thing", "place", "food", "plant", "PER", "LOC"), "tr"),
    "watch": ("", _ANIM, ("person", "animal", "thing", "event", "PER"), "tr"),
    "find": ("found", _ANIM, ("thing", "animal", "food", "plant"), "tr"),
    "like": ("", _ANIM, ("person", "animal", "thing", "food", "place", "PER", "LOC"), "tr"),
    "love": ("", _ANIM, ("person", "animal", "thing", "food", "place", "PER", "LOC"), "tr"),
    "build": ("built", _PERS + ("ORG",), ("place", "thing"), "tr"),
    "buy": ("bought", _PERS + ("ORG",), ("thing", "food", "animal"), "tr"),
    "sell": ("sold", _PERS + ("ORG",), ("thing", "food", "animal"), "tr"),
    "visit": ("", _PERS, ("place", "person", "PER", "LOC", "ORG"), "tr"),
    "help": ("", _PERS + ("ORG",), ("person", "animal", "PER"), "tr"),
    "follow": ("", _ANIM, ("person", "animal", "PER"), "tr"),
    "carry": ("", _ANIM, ("thing", "food"), "tr"),
    "paint": ("", _PERS, ("thing", "place", "animal", "plant"), "tr"),
    "open": ("", _PERS, ("thing",), "tr"),
    "clean": ("", _PERS, ("thing", "place"), "tr"),
    "eat": ("ate", _ANIM, ("food",), "tr"),
    "drink": ("drank", _ANIM, ("food",), "tr"),
    "read": ("read", _PERS, ("thing",), "tr"),
    "write": ("wrote", _PERS, ("thing",), "tr"),
    "know": ("knew", _PERS, ("person", "place", "PER", "LOC", "ORG"), "tr"),
    "meet": ("met", _PERS, ("person", "PER"), "tr"),
    "call": ("", _PERS, ("person", "animal", "PER"), "tr"),
    "catch": ("caught", _ANIM, ("animal", "thing"), "tr"),
    "hold": ("held", _PERS, ("thing", "food", "animal"), "tr"),
    "draw": ("drew", _PERS, ("thing", "animal", "place", "plant", "person"), "tr"),
    "teach": ("taught", _PERS, ("person", "PER"), "tr"),
    "study": ("", _PERS, ("thing", "animal", "plant", "event"), "tr"),
    "plant": ("", _PERS, ("plant",), "tr"),
    "win": ("won", _PERS + ("ORG",), ("event",), "excl"),
    "lead": ("led", _PERS, ("ORG",), "excl"),
    "give": ("gave", _PERS, ("thing", "food"), "ditr"),
    "send": ("sent", _PERS + ("ORG",), ("thing",), "ditr"),
    "show": ("", _PERS, ("thing", "animal"), "ditr"),
    "bring": ("brought", _PERS, ("thing", "food"), "ditr"),
    "offer": ("", _PERS + ("ORG",), ("thing", "food"), "ditr"),
    "run": ("ran", _ANIM, (), "intr"),
    "sleep": ("slept", _ANIM, (), "intr"),
    "walk": ("", _ANIM, (), "intr"),
    "swim": ("swam", _ANIM, (), "intr"),
    "dance": ("", _PERS, (), "intr"),
    "sing": ("sang", _ANIM, (), "intr"),
    "arrive": ("", _ANIM, (), "intr"),
    "wait": ("", _ANIM, (), "intr"),
    "laugh": ("", _PERS, (), "intr"),
    "cry": ("", _PERS, (), "intr"),
    "fly": ("flew", ("animal", "PER"), (), "intr"),
    "work": ("", _PERS, (), "intr"),
    "live": ("", _ANIM, (), "intr"),
    "fall": ("fell", _ANIM, (), "intr"),
    "jump": ("", _ANIM, (), "intr"),
    "sit": ("sat", _ANIM, (), "intr"),
    "smile": ("", _PERS, (), "intr"),
    "play": ("", _ANIM, (), "intr"),
    "rest": ("", _ANIM, (), "intr"),
    "travel": ("", _PERS, (), "intr"),
    "shout": ("", _PERS, (), "intr"),
}

# exclusive groups: antonym pairs and the colours
ADJ_GROUPS: list[tuple[str, ...]] = [
    ("big", "small"), ("old", "young"), ("hot", "cold"), ("happy", "sad"), ("fast", "slow"),
    ("rich", "poor"), ("strong", "weak"), ("tall", "short"), ("good", "bad"), ("clean", "dirty"),
    ("light", "heavy"), ("dark", "bright"), ("quiet", "loud"), ("empty", "full"), ("wet", "dry"),
    ("hard", "soft"), ("cheap", "expensive"), ("kind", "cruel"), ("safe", "dangerous"),
    ("wide", "narrow"), ("thick", "thin"),
    ("red", "blue", "green", "yellow", "white", "black"),
]
# adjectives outside any group: never contradict anything
FREE_ADJS = ("famous", "strange", "beautiful", "wooden", "golden", "wild", "modern", "foreign")
ADJ_GROUP: dict[str, int] = {a: i for i, g in enumerate(ADJ_GROUPS) for a in g}
ADJS = [a for g in ADJ_GROUPS for a in g] + list(FREE_ADJS)
# "clean" and "open"-like clashes with verbs are resolved by POS in the lexicon key
ANTONYM: dict[str, str] = {g[0]: g[1] for g in ADJ_GROUPS if len(g) == 2}
ANTONYM.update({v: k for k, v in list(ANTONYM.items())})

ADVS = ("quickly slowly quietly loudly happily sadly carefully often again today together "
        "suddenly finally well early late").split()

# obl prepositions (locative / comitative / ...); "of" and "with" also head noun modifiers
OBL_PREPS = ("in", "near", "behind", "under", "on", "with", "from", "to", "for")
OBL_CLASSES = {"in": ("place", "LOC"), "near": ("place", "LOC", "thing", "plant"),
               "behind": ("place", "thing", "plant"), "under": ("thing", "plant"),
               "on": ("thing", "place"), "with": ("person", "animal", "PER"),
               "from": ("place", "LOC", "ORG"), "to": ("place", "LOC"),
               "for": ("person", "PER", "ORG")}
NMOD_PREPS = ("of", "with")

# Names are shared verbatim with the Latin-script languages (the natural anchors).
FIRST_NAMES = ("Anna Marco Elena Tomas Lucas Maria Oliver Sofia Ivan Leo Nora Hugo Clara Felix "
               "Ida Otto Vera Emil Lina Paul Rosa Jonas Mila Omar Zara Viktor Alma Bruno Iris Karl "
               "Greta Milan Selma Arno Dana Pavel Ines Rafael Tilda Boris").split()
LAST_NAMES = ("Marlow Berg Novak Costa Keller Moreau Fischer Petrov Lindqvist Duval Horvat Brandt "
              "Silva Olsen Varga Romano Kowal Dietz Laurent Falk").split()
PLACE_NAMES = ("Valdora Norhaven Kestria Aldmere Ostrelo Bramwick Tallis Corvena Duneholt Selvik "
               "Marrow Quenby Istra Halvard Ravelle Ebbon Lunor Tavira Whitcombe Zelmar").split()
PLACE_MULTI = ["Port Elian", "San Ravel", "New Carden", "Upper Moss", "Lake Orvin", "Mount Tessa"]
ORG_HEADS = ("Bank", "Institute", "Company", "Museum", "Group", "Council", "Records", "Union")

NUMBER_RANGE = (2, 20)       # nummod
YEAR_RANGE = (1850, 2019)    # "in 1990"

_VOWEL = re.compile(r"[aeiou]")


def plural(noun: str) -> str:
    if noun in IRREGULAR_PLURAL:
        return IRREGULAR_PLURAL[noun]
    if noun.endswith(("s", "sh", "ch", "x")):
        return noun + "es"
    if noun.endswith("y") and noun[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def third_singular(verb: str) -> str:
    if verb.endswith(("s", "sh", "ch", "x", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def past(verb: str) -> str:
    irregular = VERBS[verb][0]
    if irregular:
        return irregular
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ied"
    return verb + "ed"


def article_a(next_word: str) -> str:
    return "an" if _VOWEL.match(next_word[0].lower()) else "a"


# English synonyms for the paraphrased English side (en'): same meaning, other surface form
PARAPHRASE_SYNONYMS = {
    "big": "large", "small": "little", "quickly": "fast", "often": "frequently",
    "finally": "eventually", "suddenly": "abruptly", "happy": "glad", "begin": "start",
    "see": "notice", "buy": "purchase", "help": "assist", "road": "street", "city": "town",
    "child": "kid", "boat": "vessel", "picture": "image", "dangerous": "risky", "rich": "wealthy",
}
