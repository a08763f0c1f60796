"""Language-independent sentence structures and a seeded probabilistic grammar that samples them.

A structure is meaning plus syntax: every language realises the same structure, so parallel data,
NLI labels and dictionaries all follow from it."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from . import english as E


@dataclass(frozen=True)
class Entity:
    kind: str                      # noun | name | year
    lemma: str                     # noun lemma; for names the full name ("Port Elian"); year digits
    ner: str | None = None         # PER LOC ORG for names
    number: str = "sg"             # sg | pl
    det: str | None = None         # def | indef | dem | None
    num: int | None = None         # nummod (implies pl)
    adjs: tuple[str, ...] = ()
    nmod: tuple[str, "Entity"] | None = None   # (prep, entity): "the house of the king"
    relcl: "Clause | None" = None  # relative clause with a gap (subj or obj)
    conj: "Entity | None" = None   # "the dog and the cat"

    @property
    def cls(self) -> str:
        if self.kind == "name":
            assert self.ner is not None  # a name is made with its NER type
            return self.ner
        return E.NOUN_CLASS.get(self.lemma, self.lemma)


@dataclass(frozen=True)
class Clause:
    verb: str | None                 # None: copular clause "X is ADJ"
    subj: Entity | None = None       # None for imperatives and subject-gapped relative clauses
    obj: Entity | None = None
    iobj: Entity | None = None
    cop_adj: str | None = None
    adv: str | None = None
    obl: tuple[str, Entity] | None = None
    neg: bool = False
    tense: str = "pres"              # pres | past | fut
    mood: str = "decl"               # decl | q | imp
    gap: str | None = None           # None | subj | obj  (relative clauses)
    conj: "Clause | None" = None     # coordinated clause
    cc: str = "and"                  # and | but

    @property
    def adjective(self) -> str:
        """A copular clause's adjective (a clause without a verb is made with one)."""
        assert self.cop_adj is not None, "a copular clause without its adjective"
        return self.cop_adj

    def conjuncts(self) -> list["Clause"]:
        out: list[Clause] = []
        c: Clause | None = self
        while c is not None:
            out.append(replace(c, conj=None))
            c = c.conj
        return out


def subject_number(c: Clause, head: Entity | None = None) -> str:
    """Number the verb agrees with; a subject-gapped relative clause agrees with its head noun."""
    if c.subj is None:
        if c.gap == "subj" and head is not None:
            return "pl" if (head.number == "pl" or head.conj is not None) else "sg"
        return "sg"
    return "pl" if (c.subj.number == "pl" or c.subj.conj is not None) else "sg"


@dataclass
class Style:
    """Domain knobs: wiki (encyclopaedic statements) vs cc (web: questions, imperatives...)."""

    p_question: float = 0.0
    p_imperative: float = 0.0
    p_neg: float = 0.12
    p_conj: float = 0.15
    p_relcl: float = 0.12
    p_nmod: float = 0.12
    p_adj: float = 0.35
    p_adv: float = 0.25
    p_obl: float = 0.35
    p_name: float = 0.3
    p_copula: float = 0.12
    tenses: tuple[float, float, float] = (0.45, 0.45, 0.10)   # pres past fut
    zipf: float = 1.0
    rank_seed: str = "wiki"      # which permutation of word frequencies the domain uses


WIKI = Style()
CC = Style(p_question=0.15, p_imperative=0.1, p_neg=0.15, p_relcl=0.06, p_nmod=0.06,
           p_adv=0.4, p_obl=0.25, p_name=0.15, tenses=(0.7, 0.15, 0.15), zipf=1.2, rank_seed="cc")
NLI = Style(p_conj=0.0, p_relcl=0.08, p_nmod=0.06, p_neg=0.0, tenses=(0.6, 0.3, 0.1))


class Grammar:
    """Samples structures. ``topic`` biases the vocabulary towards one noun class and one name."""

    def __init__(self, rng: random.Random, style: Style = WIKI, max_depth: int = 2):
        self.rng, self.style, self.max_depth = rng, style, max_depth
        order = random.Random(f"ranks-{style.rank_seed}")
        self._weights: dict[str, list[float]] = {}
        self._pools: dict[str, list[str]] = {}
        pools = {c: m.split() for c, (_, m) in E.NOUN_CLASSES.items()}
        pools["VERB"], pools["ADJ"], pools["ADV"] = list(E.VERBS), list(E.ADJS), list(E.ADVS)
        pools["PER"], pools["LOC"] = list(E.FIRST_NAMES), list(E.PLACE_NAMES) + E.PLACE_MULTI
        pools["ORG"] = [f"{p} {h}" for p in E.PLACE_NAMES[:10] for h in E.ORG_HEADS[:4]]
        for key, pool in pools.items():
            pool = list(pool)
            order.shuffle(pool)           # Zipfian ranks differ between domains
            self._pools[key] = pool
            self._weights[key] = [1.0 / (r + 1) ** style.zipf for r in range(len(pool))]
        self.topic: tuple[str, Entity] | None = None
        self._topic_cls: str | None = None

    # -- lexical choices -------------------------------------------------------------------
    def pick(self, key: str) -> str:
        return self.rng.choices(self._pools[key], self._weights[key])[0]

    def set_topic(self, cls: str, entity: Entity | None) -> None:
        self.topic = (cls, entity) if entity is not None else None
        self._topic_cls = cls

    def person_name(self) -> str:
        first = self.pick("PER")
        if self.rng.random() < 0.4:      # multi-word names: PER spans of two tokens
            return f"{first} {self.rng.choice(E.LAST_NAMES)}"
        return first

    def name(self, ner: str) -> Entity:
        lemma = self.person_name() if ner == "PER" else self.pick(ner)
        return Entity("name", lemma, ner=ner)

    # -- phrases ---------------------------------------------------------------------------
    def entity(self, classes: tuple[str, ...], depth: int, allow_mods: bool = True) -> Entity:
        r, st = self.rng, self.style
        names = [c for c in classes if c in ("PER", "LOC", "ORG")]
        nouns = [c for c in classes if c not in ("PER", "LOC", "ORG")]
        if self.topic is not None and r.random() < 0.25:
            cls, ent = self.topic
            if cls in classes:
                return ent
        if names and (not nouns or r.random() < st.p_name):
            return self.name(r.choice(names))
        cls = self._topic_cls if self._topic_cls in nouns and r.random() < 0.4 else r.choice(nouns)
        lemma = self.pick(cls)
        num = None
        number = "pl" if r.random() < 0.25 else "sg"
        det = r.choices(("def", "indef", "dem", None), (0.55, 0.3, 0.1, 0.05))[0]
        if number == "pl" and det == "indef":
            det = None
        if number == "pl" and r.random() < 0.4:
            num, det = r.randint(*E.NUMBER_RANGE), None
        if number == "sg" and det is None:
            det = "def"
        adjs: tuple[str, ...] = ()
        nmod = relcl = None
        if allow_mods:
            if r.random() < st.p_adj:
                adjs = (self.pick("ADJ"),)
                if r.random() < 0.15:
                    second = self.pick("ADJ")
                    if E.ADJ_GROUP.get(second, -1) != E.ADJ_GROUP.get(adjs[0], -2) and second != adjs[0]:
                        adjs += (second,)
            if depth < self.max_depth and r.random() < st.p_nmod:
                prep = r.choice(E.NMOD_PREPS)
                inner = ("person", "PER", "ORG", "LOC") if prep == "of" else ("thing", "animal")
                nmod = (prep, self.entity(inner, depth + 1, allow_mods=False))
            elif depth < self.max_depth and r.random() < st.p_relcl and cls in ("person", "animal"):
                relcl = self.relative_clause(cls, depth + 1)
        return Entity("noun", lemma, number=number, det=det, num=num, adjs=adjs, nmod=nmod, relcl=relcl)

    def relative_clause(self, head_cls: str, depth: int) -> Clause:
        r = self.rng
        verbs = [v for v, (_, subj, _, _) in E.VERBS.items() if head_cls in subj]
        verb = self.rng.choices(verbs, [self._verb_weight(v) for v in verbs])[0]
        frame = E.VERBS[verb][3]
        obj = None
        if frame != "intr":
            obj = self.entity(E.VERBS[verb][2], depth + 1, allow_mods=False)
        tense = r.choices(("pres", "past", "fut"), self.style.tenses)[0]
        return Clause(verb, subj=None, obj=obj, tense=tense, gap="subj")

    def _verb_weight(self, verb: str) -> float:
        i = self._pools["VERB"].index(verb)
        return self._weights["VERB"][i]

    # -- clauses ---------------------------------------------------------------------------
    def clause(self, depth: int = 0, allow_conj: bool = True) -> Clause:
        r, st = self.rng, self.style
        tense = r.choices(("pres", "past", "fut"), st.tenses)[0]
        mood = "decl"
        x = r.random()
        if x < st.p_question:
            mood = "q"
        elif x < st.p_question + st.p_imperative:
            mood, tense = "imp", "pres"
        neg = r.random() < st.p_neg
        subj: Entity | None
        if r.random() < st.p_copula and mood != "imp":
            subj = self.entity(("person", "animal", "thing", "place", "food", "PER", "LOC"), depth + 1,
                               allow_mods=False)
            subj = replace(subj, adjs=())
            c = Clause(None, subj=subj, cop_adj=self.pick("ADJ"), neg=neg, tense=tense, mood=mood)
        else:
            verb = self.pick("VERB")
            _, subj_cls, obj_cls, frame = E.VERBS[verb]
            subj = None if mood == "imp" else self.entity(subj_cls, depth + 1)
            obj = iobj = None
            if frame != "intr":
                obj = self.entity(obj_cls, depth + 1)
                if frame == "tr" and r.random() < 0.08 and obj.kind == "noun":
                    obj = replace(obj, conj=self.entity(obj_cls, self.max_depth, allow_mods=False))
            if frame == "ditr":
                iobj = self.entity(("person", "PER"), self.max_depth)
            adv = self.pick("ADV") if r.random() < st.p_adv else None
            obl = None
            if r.random() < st.p_obl:
                if r.random() < 0.2:
                    obl = ("in", Entity("year", str(r.randint(*E.YEAR_RANGE))))
                else:
                    prep = r.choice(E.OBL_PREPS)
                    obl = (prep, self.entity(E.OBL_CLASSES[prep], self.max_depth, allow_mods=False))
            c = Clause(verb, subj=subj, obj=obj, iobj=iobj, adv=adv, obl=obl, neg=neg, tense=tense,
                       mood=mood)
        if allow_conj and mood == "decl" and r.random() < st.p_conj:
            other = self.clause(depth, allow_conj=False)
            c = replace(c, conj=replace(other, mood="decl"), cc=r.choice(("and", "and", "but")))
        return c
