"""NLI pairs whose labels follow from the grammar, and an independent judge that re-derives them.

Construction (``make_pair``) edits a premise structure on purpose; ``relation`` decides the label
from the two structures alone by a small monotonicity logic: entailment = the hypothesis is a
generalisation of a conjunct of the premise (modifiers dropped, hypernym, adjective read off), or,
under negation, a specialisation ("did not run" entails "did not run quickly");
contradiction = the same event with the polarity flipped, an adjective of the same exclusive group
(antonym, other colour) on the same entity, or an exclusive event (winning the same race) with
another agent; otherwise neutral."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Callable, Literal, overload

from . import english as E
from .structures import NLI, Clause, Entity, Grammar

LABELS = ("entailment", "neutral", "contradiction")


# -- the judge -------------------------------------------------------------------------------
def _hypernym(noun: str) -> str | None:
    cls = E.NOUN_CLASS.get(noun)
    return E.NOUN_CLASSES[cls][0] if cls else None


def generalises(pe: Entity | None, he: Entity | None) -> bool:
    """Is every individual described by ``pe`` also described by ``he`` (upward monotone)?"""
    if pe is None or he is None:
        return pe is None and he is None
    if pe.kind != he.kind:
        return False
    if pe.kind != "noun":
        return pe.lemma == he.lemma
    if he.lemma == pe.lemma:
        pass
    elif he.lemma == _hypernym(pe.lemma) and not he.adjs:
        pass       # adjectives are relative to the class ("big mouse" is no "big animal")
    else:
        return False
    return (he.number == pe.number and he.num in (None, pe.num) and set(he.adjs) <= set(pe.adjs)
            and he.nmod in (None, pe.nmod) and he.relcl in (None, pe.relcl)
            and he.conj in (None, pe.conj))


def _same_referent(pe: Entity | None, he: Entity | None) -> bool:
    return (pe is not None and he is not None and pe.kind == he.kind and pe.lemma == he.lemma
            and pe.number == he.number)


def _entities(c: Clause) -> list[Entity]:
    out = [e for e in (c.subj, c.obj, c.iobj) if e is not None]
    if c.obl is not None:
        out.append(c.obl[1])
    return out


def _adjectives_of(p: Clause, he: Entity | None) -> list[str]:
    """Adjectives the premise conjunct asserts of the entity ``he`` refers to."""
    adjs: list[str] = []
    for e in _entities(p):
        if _same_referent(e, he) or generalises(replace(e, adjs=()), he):
            adjs += list(e.adjs)
    if p.verb is None and not p.neg and p.subj is not None and _same_referent(p.subj, he):
        adjs.append(p.adjective)
    return adjs


def subsumes(p: Clause, h: Clause) -> bool:
    """Does conjunct ``p`` entail clause ``h``?"""
    if h.verb is None and not h.neg and (p.verb is not None or p.subj != h.subj):
        return h.cop_adj in _adjectives_of(p, h.subj)
    if p.verb != h.verb or p.neg != h.neg or p.tense != h.tense:
        return False
    if p.neg:      # contraposition: not-P entails not-H exactly when H entails P
        return subsumes(replace(h, neg=False), replace(p, neg=False))
    if p.verb is None:
        return p.cop_adj == h.cop_adj and generalises(p.subj, h.subj)
    return (generalises(p.subj, h.subj) and generalises(p.obj, h.obj) and generalises(p.iobj, h.iobj)
            and h.adv in (None, p.adv) and h.obl in (None, p.obl))


def contradicts(p: Clause, h: Clause) -> bool:
    if p.neg != h.neg and (p.verb == h.verb):
        pos, negated = (p, h) if not p.neg else (h, p)
        if subsumes(pos, replace(negated, neg=False)):
            return True
    if h.verb is None and not h.neg:
        group = E.ADJ_GROUP.get(h.adjective)
        for e in _entities(p):
            if _same_referent(e, h.subj):
                if any(E.ADJ_GROUP.get(a) == group and a != h.cop_adj for a in e.adjs if group is not None):
                    return True
        if (p.verb is None and not p.neg and _same_referent(p.subj, h.subj) and group is not None
                and E.ADJ_GROUP.get(p.adjective) == group and p.cop_adj != h.cop_adj):
            return True
    if (p.verb is not None and p.verb == h.verb and E.VERBS[p.verb][3] == "excl" and not p.neg
            and not h.neg and p.tense == h.tense and p.obj is not None and h.obj is not None
            and p.obj.lemma == h.obj.lemma and p.subj is not None and h.subj is not None
            and p.subj.kind == h.subj.kind == "name" and p.subj.lemma != h.subj.lemma):
        return True
    return False


def relation(premise: Clause, hyp: Clause) -> str:
    conjuncts = premise.conjuncts()
    if any(subsumes(p, hyp) for p in conjuncts):
        return "entailment"
    if any(contradicts(p, hyp) for p in conjuncts):
        return "contradiction"
    return "neutral"


# -- construction ----------------------------------------------------------------------------
@overload
def _strip(rng: random.Random, c: Clause, must: Literal[False]) -> Clause: ...
@overload
def _strip(rng: random.Random, c: Clause, must: Literal[True]) -> Clause | None: ...
def _strip(rng: random.Random, c: Clause, must: bool) -> Clause | None:
    """Drop a random subset of the droppable modifiers; ``must``: a non-empty one (None when there is
    none)."""
    options: list[Callable[[Clause], Clause]] = []
    if c.adv:
        options.append(lambda x: replace(x, adv=None))
    if c.obl:
        options.append(lambda x: replace(x, obl=None))
    for role in ("subj", "obj"):
        e = getattr(c, role)
        if e is not None and e.kind == "noun" and (e.adjs or e.nmod or e.relcl or e.conj):
            def bare(x: Clause, role: str = role) -> Clause:
                return replace(x, **{role: replace(getattr(x, role), adjs=(), nmod=None, relcl=None, conj=None)})
            options.append(bare)
    if not options:
        return None if must else c
    rng.shuffle(options)
    k = rng.randint(1, len(options)) if must else rng.randint(0, len(options))
    for f in options[:k]:
        c = f(c)
    return c


def _distinct_referents(c: Clause) -> bool:
    keys = [(e.kind, e.lemma) for cl in c.conjuncts() for e in _entities(cl)]
    return len(keys) == len(set(keys))


class PairMaker:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.grammar = Grammar(rng, NLI)

    def premise(self) -> Clause:
        while True:
            c = self.grammar.clause()
            if _distinct_referents(c):
                return c

    def _copula(self, ent: Entity, adj: str, tense: str, neg: bool = False) -> Clause:
        subj = replace(ent, adjs=(), nmod=None, relcl=None, conj=None, num=None,
                       det="def" if ent.kind == "noun" else None)
        if subj.kind == "noun" and ent.num is not None:
            subj = replace(subj, det="def")
        return Clause(None, subj=subj, cop_adj=adj, tense=tense, neg=neg)

    def entailment(self) -> tuple[Clause, Clause] | None:
        r, p = self.rng, self.premise()
        method = r.choices(("strip", "hypernym", "adjective", "conjunct", "negated"),
                           (0.3, 0.2, 0.25, 0.15, 0.1))[0]
        if method == "negated":
            # not-P entails not-(P with more detail): "did not run" entails "did not run quickly"
            added = self._add_detail(p, strip=False)
            return (replace(p, neg=True), replace(added, neg=True)) if added is not None else None
        if method == "strip":
            h = _strip(r, p, must=True)
            return (p, h) if h is not None else None
        if method == "hypernym":
            if p.verb is None:       # "the bear is big" does not make "the animal" big
                return None
            roles = [x for x in ("subj", "obj") if getattr(p, x) is not None
                     and getattr(p, x).kind == "noun" and getattr(p, x).lemma in E.NOUN_CLASS]
            if not roles:
                return None
            role = r.choice(roles)
            e = getattr(p, role)
            h = replace(p, **{role: replace(e, lemma=_hypernym(e.lemma), adjs=(), relcl=None,
                                                nmod=None, conj=None)})
            return p, _strip(r, h, must=False)
        if method == "adjective":
            ents = [e for e in _entities(p) if e.adjs and e.kind == "noun"]
            if not ents:
                return None
            e = r.choice(ents)
            return p, self._copula(e, r.choice(e.adjs), p.tense)
        other = self.premise()
        if r.random() < 0.5:
            other = replace(other, neg=True)
        full = replace(p, conj=other, cc="and")
        if not _distinct_referents(full):
            return None
        h = other if r.random() < 0.5 else p
        if not h.neg:
            h = _strip(r, h, must=False)
        return full, h

    def contradiction(self) -> tuple[Clause, Clause] | None:
        r, p = self.rng, self.premise()
        method = r.choices(("negation", "antonym", "exclusive"), (0.45, 0.35, 0.2))[0]
        if method == "negation":
            if r.random() < 0.5:
                return p, replace(_strip(r, p, must=False), neg=True)
            return replace(p, neg=True), p
        if method == "antonym":
            ents = [e for e in _entities(p) if e.adjs and e.kind == "noun"]
            if p.verb is None:
                assert p.subj is not None  # a copular clause has its subject
                ents.append(replace(p.subj, adjs=(p.adjective,)))
            ents = [e for e in ents if any(E.ADJ_GROUP.get(a) is not None for a in e.adjs)]
            if not ents:
                return None
            e = r.choice(ents)
            a = r.choice([a for a in e.adjs if a in E.ADJ_GROUP])
            other = r.choice([b for b in E.ADJ_GROUPS[E.ADJ_GROUP[a]] if b != a])
            return p, self._copula(e, other, p.tense)
        # exclusive events: someone else won the same race
        verb = r.choice([v for v, spec in E.VERBS.items() if spec[3] == "excl"])
        g = self.grammar
        subj = g.name("PER")
        obj = g.entity(E.VERBS[verb][2], 1, allow_mods=False)
        tense = r.choice(("pres", "past"))
        p = Clause(verb, subj=subj, obj=obj, tense=tense)
        rival = subj
        while rival.lemma == subj.lemma:
            rival = g.name("PER")
        definite = replace(obj, det="def") if obj.kind == "noun" and obj.num is None else obj
        return p, Clause(verb, subj=rival, obj=definite, tense=tense)

    def _add_detail(self, p: Clause, strip: bool = True) -> Clause | None:
        """``p`` with information added that ``p`` does not give (an adverb or an adjective);
        with ``strip`` some of ``p``'s own modifiers may go at the same time."""
        r, g = self.rng, self.grammar
        if p.verb is None:
            return None
        if p.adv is None and r.random() < 0.5:
            return replace(_strip(r, p, must=False) if strip else p, adv=g.pick("ADV"))
        nouns = [x for x in ("subj", "obj") if getattr(p, x) is not None
                 and getattr(p, x).kind == "noun" and not getattr(p, x).adjs]
        if not nouns:
            return None
        role = r.choice(nouns)
        return replace(p, **{role: replace(getattr(p, role), adjs=(g.pick("ADJ"),))})

    def neutral(self) -> tuple[Clause, Clause] | None:
        r, p = self.rng, self.premise()
        g = self.grammar
        method = r.choices(("add", "negated_drop", "copula", "other_object", "other_event"),
                           (0.25, 0.15, 0.25, 0.2, 0.15))[0]
        if method == "add":
            added = self._add_detail(p)
            return (p, added) if added is not None else None
        if method == "negated_drop":
            # "did not run quickly" says nothing about "did not run"
            added = self._add_detail(p)
            return (replace(added, neg=True), replace(p, neg=True)) if added is not None else None
        if method == "other_event":
            # an exclusive verb with another agent but another object: no conflict
            verb = r.choice([v for v, spec in E.VERBS.items() if spec[3] == "excl"])
            obj = g.entity(E.VERBS[verb][2], 1, allow_mods=False)
            other = obj
            while other.lemma == obj.lemma:
                other = g.entity(E.VERBS[verb][2], 1, allow_mods=False)
            tense = r.choice(("pres", "past"))
            return (Clause(verb, subj=g.name("PER"), obj=obj, tense=tense),
                    Clause(verb, subj=g.name("PER"), obj=other, tense=tense))
        if method == "copula":
            ents = [e for e in _entities(p) if e.kind in ("noun", "name")]
            if p.verb is None:
                assert p.subj is not None  # a copular clause has its subject
                ents = [replace(p.subj, adjs=(p.adjective,))]
            if not ents:
                return None
            e = r.choice(ents)
            used = {E.ADJ_GROUP.get(a, a) for a in e.adjs}
            free = [a for a in E.ADJS if E.ADJ_GROUP.get(a, a) not in used]
            return p, self._copula(e, r.choice(free), p.tense)
        if p.obj is None or p.obj.kind != "noun" or p.verb is None:
            return None
        cls = E.NOUN_CLASS.get(p.obj.lemma)
        if cls is None:
            return None
        others = [n for n in E.NOUN_CLASSES[cls][1].split() if n != p.obj.lemma]
        new_obj = replace(p.obj, lemma=r.choice(others), adjs=(), nmod=None, relcl=None, conj=None)
        return p, replace(p, obj=new_obj, neg=r.random() < 0.5, adv=None, obl=None)

    def make(self, label: str) -> tuple[Clause, Clause]:
        build = {"entailment": self.entailment, "contradiction": self.contradiction,
                 "neutral": self.neutral}[label]
        while True:
            pair = build()
            if pair is not None:
                return pair


def make_pairs(rng: random.Random, n: int) -> list[tuple[Clause, Clause, str]]:
    """``n`` pairs, labels balanced (cycled) and then shuffled."""
    maker = PairMaker(rng)
    out = []
    for i in range(n):
        label = LABELS[i % 3]
        p, h = maker.make(label)
        out.append((p, h, label))
    rng.shuffle(out)
    return out
