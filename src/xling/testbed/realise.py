"""Realise a structure in one language: surface words, UPOS, dependency tree, NER spans.

One realiser per language. They differ in what the paper's language pairs differ in: word order
(fr adjectives after the noun, de verb-second / verb-final, ru free order with case suffixes, zh
modifiers before the noun and no spaces), morphology, function words and script."""

from __future__ import annotations

import random
from typing import Any, Mapping

from . import english as E
from .lexicon import Lexicon
from .structures import Clause, Entity, subject_number
from .tree import Node, Sentence, drop_leaves, linearise

LANGS = ("en", "fr", "de", "ru", "zh")

# Function words per language (lemmas): everything else with a content UPOS is in the lexicon.
FUNCTION_WORDS = {
    "en": {"the", "a", "this", "of", "with", "in", "near", "behind", "under", "on", "from", "to",
           "for", "and", "but", "not", "do", "will", "be", "who", "have"},
    "fr": {"le", "un", "ce", "de", "avec", "dans", "vers", "derrière", "sous", "sur", "à", "pour",
           "en", "et", "mais", "ne", "pas", "avoir", "aller", "être", "qui"},
    "de": {"der", "ein", "dieser", "von", "mit", "in", "bei", "hinter", "unter", "auf", "aus", "zu",
           "für", "und", "aber", "nicht", "haben", "werden", "sein"},
    "ru": {"этот", "с", "в", "у", "за", "под", "на", "из", "к", "для", "и", "но", "не", "быть",
           "который"},
    "zh": {"的", "这", "个", "在", "里", "旁边", "后面", "下面", "上", "和", "跟", "从", "到", "为",
           "给", "年", "并且", "但是", "不", "没", "会", "了", "很", "吗"},
}
PUNCT = {"en": (".", "?", "!", ","), "fr": (".", "?", "!", ","), "de": (".", "?", "!", ","),
         "ru": (".", "?", "!", ","), "zh": ("。", "？", "！", "，")}


def _name(parts: list[str], ner: str, rel: str) -> Node:
    """Multi-word names: first word heads, the rest attach as flat (UD convention)."""
    head = Node(parts[0], parts[0], "PROPN", rel, "Number=Sing", ner=f"B-{ner}")
    head.right = [Node(p, p, "PROPN", "flat", "Number=Sing", ner=f"I-{ner}") for p in parts[1:]]
    return head


def _punct(lang: str, mood: str) -> Node:
    mark = PUNCT[lang][{"decl": 0, "q": 1, "imp": 2}[mood]]
    return Node(mark, mark, "PUNCT", "punct")


def _comma(lang: str) -> Node:
    return Node(PUNCT[lang][3], PUNCT[lang][3], "PUNCT", "punct")


class Realiser:
    lang = "en"
    # English preposition -> this language's word, or (word, case) in a language with cases
    PREP: Mapping[str, Any]

    def __init__(self, lex: Lexicon, rng: random.Random):
        self.lex, self.rng = lex, rng

    def sentence(self, c: Clause) -> Sentence:
        root = self.clause(c, rel="root", main=True)
        root.right.append(_punct(self.lang, c.mood))
        sent = linearise(root, self.lang, no_space=self.lang == "zh")
        self.postprocess(sent)
        if self.lang != "zh":
            first = sent.tokens[0]
            first.form = first.form[:1].upper() + first.form[1:]
        return sent

    def postprocess(self, sent: Sentence) -> None:
        pass

    def word(self, en: str, pos: str) -> str:
        return self.lex.choose(self.lang, en, pos, self.rng)

    def name_parts(self, e: Entity) -> list[str]:
        return [self.lex.name(self.lang, p) for p in e.lemma.split()]

    def conjoin(self, node: Node, e: Entity, *args) -> None:
        if e.conj is not None:
            other = self.np(e.conj, "conj", *args)
            other.left.insert(0, Node(*self.cc_and(), "CCONJ", "cc"))
            node.right.append(other)

    def cc_and(self) -> tuple[str, str]:
        raise NotImplementedError

    def coordinate(self, node: Node, c: Clause) -> None:
        if c.conj is not None:
            other = self.clause(c.conj, rel="conj", main=True)
            form = self.cc_word(c.cc)
            other.left.insert(0, Node(form, form, "CCONJ", "cc"))
            node.right.append(other)

    def cc_word(self, cc: str) -> str:
        raise NotImplementedError

    def np(self, e: Entity, rel: str, *args) -> Node:
        """A noun phrase: a year, a name (and what is conjoined to it) or a noun with its
        modifiers (``noun_phrase``); ``args``: its case, in a language with cases."""
        if e.kind == "year":
            return self.year(e, rel)
        if e.kind == "name":
            node = _name(self.name_parts(e), e.cls, rel)  # a name's class is its NER type
            self.conjoin(node, e, *args)
            return node
        return self.noun_phrase(e, rel, *args)

    def year(self, e: Entity, rel: str) -> Node:
        return Node(e.lemma, e.lemma, "NUM", rel, "NumType=Card")

    def noun_phrase(self, e: Entity, rel: str, case: str = "nom") -> Node:
        """``case``: in a language with cases."""
        raise NotImplementedError

    def case_phrase(self, prep: str, e: Entity, rel: str) -> Node:
        """``e`` in the case its preposition governs, the preposition first (``PREP``: English
        preposition -> (word, case), in German and Russian)."""
        p, case = self.PREP[prep]
        node = self.np(e, rel, case)
        node.left.insert(0, Node(p, p, "ADP", "case"))
        return node

    def clause(self, c: Clause, rel: str, main: bool) -> Node:
        raise NotImplementedError


# --------------------------------------------------------------------------------------------
class English(Realiser):
    lang = "en"
    DET = {"def": ("the", "the"), "dem": ("this", "these")}

    def __init__(self, lex: Lexicon, rng: random.Random, paraphrase: bool = False):
        super().__init__(lex, rng)
        self.paraphrase = paraphrase

    def word(self, en: str, pos: str) -> str:
        if self.paraphrase and en in E.PARAPHRASE_SYNONYMS:
            return E.PARAPHRASE_SYNONYMS[en]
        return en

    def cc_and(self):
        return ("and", "and")

    def cc_word(self, cc):
        return cc

    def name_parts(self, e: Entity) -> list[str]:
        return e.lemma.split()

    def noun_phrase(self, e: Entity, rel: str, *args) -> Node:
        lemma = self.word(e.lemma, "NOUN")
        form = E.plural(lemma) if e.number == "pl" else lemma
        node = Node(form, lemma, "NOUN", rel, "Number=Plur" if e.number == "pl" else "Number=Sing")
        adjs = [Node(self.word(a, "ADJ"), self.word(a, "ADJ"), "ADJ", "amod", "Degree=Pos") for a in e.adjs]
        if e.num is not None:
            node.left.append(Node(str(e.num), str(e.num), "NUM", "nummod", "NumType=Card"))
        if e.det == "indef":
            nxt = adjs[0].form if adjs else form
            art = E.article_a(nxt)
            node.left.insert(0, Node(art, "a", "DET", "det", "Definite=Ind|PronType=Art"))
        elif e.det in self.DET:
            sg, pl = self.DET[e.det]
            node.left.insert(0, Node(pl if e.number == "pl" else sg, sg, "DET", "det"))
        node.left += adjs
        if e.nmod is not None:
            prep, inner = e.nmod
            pp = self.np(inner, "nmod")
            pp.left.insert(0, Node(prep, prep, "ADP", "case"))
            node.right.append(pp)
        if e.relcl is not None:
            node.right.append(self.clause(e.relcl, "acl:relcl", main=False, head=e))
        self.conjoin(node, e)
        return node

    def _verb_forms(self, c: Clause, lemma: str, head: Entity | None) -> tuple[str, list[Node]]:
        """Main verb form and auxiliaries (do-support for negation/questions, will for future)."""
        sg = subject_number(c, head) == "sg" and c.mood != "imp"
        auxes = []
        if c.tense == "fut":
            auxes.append(Node("will", "will", "AUX", "aux", "VerbForm=Fin"))
            return lemma, auxes
        if c.neg or c.mood == "q" or (c.mood == "imp" and c.neg):
            if c.tense == "past":
                aux = "did"
            else:
                aux = "does" if sg else "do"
            auxes.append(Node(aux, "do", "AUX", "aux", "VerbForm=Fin"))
            return lemma, auxes
        if c.mood == "imp":
            return lemma, auxes
        if c.tense == "past":
            return (E.past(lemma) if lemma in E.VERBS else lemma + "ed"), auxes
        return (E.third_singular(lemma) if sg else lemma), auxes

    def clause(self, c: Clause, rel: str, main: bool, head: Entity | None = None) -> Node:
        neg = Node("not", "not", "PART", "advmod", "Polarity=Neg") if c.neg else None
        subj = self.np(c.subj, "nsubj") if c.subj is not None else None
        if c.verb is None:
            adj = self.word(c.adjective, "ADJ")
            node = Node(adj, adj, "ADJ", rel, "Degree=Pos")
            pl = subject_number(c, head) == "pl"
            if c.tense == "fut":
                auxes = [Node("will", "will", "AUX", "aux"), Node("be", "be", "AUX", "cop")]
            else:
                form = {"pres": ("is", "are"), "past": ("was", "were")}[c.tense][pl]
                auxes = [Node(form, "be", "AUX", "cop")]
        else:
            lemma = self.word(c.verb, "VERB")
            form, auxes = self._verb_forms(c, lemma, head)
            node = Node(form, lemma, "VERB", rel, "VerbForm=Fin" if not auxes else "VerbForm=Inf")
        if c.gap == "subj":
            who = "who" if head is not None and head.cls in ("person", "PER") else "which"
            node.left.append(Node(who, "who", "PRON", "nsubj", "PronType=Rel"))
        front = []
        if self.paraphrase and rel == "root" and (c.adv or c.obl) and self.rng.random() < 0.7:
            front = ["adv" if c.adv else "obl"]
        if c.mood == "q" and auxes:
            node.left += auxes[:1]
            if subj is not None:
                node.left.append(subj)
            node.left += auxes[1:]
        else:
            if subj is not None:
                node.left.append(subj)
            node.left += auxes[:1]
            if neg is None:
                node.left += auxes[1:]
        if neg is not None:
            node.left.append(neg)
            node.left += auxes[1:] if not (c.mood == "q" and auxes) else []
        if c.iobj is not None:
            node.right.append(self.np(c.iobj, "iobj"))
        if c.obj is not None:
            node.right.append(self.np(c.obj, "obj"))
        adv = Node(self.word(c.adv, "ADV"), self.word(c.adv, "ADV"), "ADV", "advmod") if c.adv else None
        obl = None
        if c.obl is not None:
            prep, ent = c.obl
            obl = self.np(ent, "obl")
            obl.left.insert(0, Node(prep, prep, "ADP", "case"))
        if "adv" in front and adv is not None:
            node.left[:0] = [adv, _comma("en")]
        elif adv is not None:
            node.right.append(adv)
        if "obl" in front and obl is not None:
            node.left[:0] = [obl, _comma("en")]
        elif obl is not None:
            node.right.append(obl)
        self.coordinate(node, c)
        return node


# --------------------------------------------------------------------------------------------
class French(Realiser):
    lang = "fr"
    PREP = {"in": "dans", "near": "vers", "behind": "derrière", "under": "sous", "on": "sur",
            "with": "avec", "from": "de", "to": "à", "for": "pour", "of": "de"}
    # Beauty-Age-Number-Goodness-Size adjectives come before the noun, the rest after
    BANGS = {"big", "small", "old", "young", "good", "bad", "beautiful", "short", "tall"}
    DET = {("def", "m", "sg"): "le", ("def", "f", "sg"): "la", ("def", "m", "pl"): "les",
           ("def", "f", "pl"): "les", ("indef", "m", "sg"): "un", ("indef", "f", "sg"): "une",
           ("dem", "m", "sg"): "ce", ("dem", "f", "sg"): "cette", ("dem", "m", "pl"): "ces",
           ("dem", "f", "pl"): "ces", (None, "m", "pl"): "des", (None, "f", "pl"): "des"}
    DET_LEMMA = {"def": "le", "indef": "un", "dem": "ce", None: "un"}
    CONTRACT = {("de", "le"): "du", ("de", "les"): "des", ("à", "le"): "au", ("à", "les"): "aux"}

    def cc_and(self):
        return ("et", "et")

    def cc_word(self, cc):
        return {"and": "et", "but": "mais"}[cc]

    @staticmethod
    def noun_plural(w: str) -> str:
        if w.endswith(("s", "x", "z")):
            return w
        return w + ("x" if w.endswith("eau") else "s")

    @staticmethod
    def adj_form(a: str, gender: str, number: str) -> str:
        if gender == "f" and not a.endswith("e"):
            a += "e"
        if number == "pl" and not a.endswith(("s", "x")):
            a += "s"
        return a

    def noun_phrase(self, e: Entity, rel: str, *args) -> Node:
        lemma = self.word(e.lemma, "NOUN")
        g = self.lex.gender["fr"][(e.lemma, "NOUN")]
        form = self.noun_plural(lemma) if e.number == "pl" else lemma
        gfeat = "Gender=Masc" if g == "m" else "Gender=Fem"
        node = Node(form, lemma, "NOUN", rel, f"{gfeat}|Number={'Plur' if e.number == 'pl' else 'Sing'}")
        det = self.DET.get((e.det, g, e.number))
        if e.num is not None:
            node.left.append(Node(str(e.num), str(e.num), "NUM", "nummod", "NumType=Card"))
        elif det is not None:
            node.left.append(Node(det, self.DET_LEMMA[e.det], "DET", "det"))
        for a in e.adjs:
            lem = self.word(a, "ADJ")
            adj = Node(self.adj_form(lem, g, e.number), lem, "ADJ", "amod")
            (node.left if a in self.BANGS else node.right).append(adj)
        if e.nmod is not None:
            prep, inner = e.nmod
            pp = self.np(inner, "nmod")
            pp.left.insert(0, Node(self.PREP[prep], self.PREP[prep], "ADP", "case"))
            node.right.append(pp)
        if e.relcl is not None:
            node.right.append(self.clause(e.relcl, "acl:relcl", main=False, head=e))
        self.conjoin(node, e)
        return node

    def _finite(self, lemma: str, c: Clause, head: Entity | None) -> tuple[str, Node | None, str]:
        """(main verb form, auxiliary, verbform) for tense and subject number."""
        pl = subject_number(c, head) == "pl"
        stem, ir = lemma[:-2], lemma.endswith("ir")
        if c.tense == "past":
            return stem + ("i" if ir else "é"), Node("ont" if pl else "a", "avoir", "AUX", "aux"), "Part"
        if c.tense == "fut":
            return lemma, Node("vont" if pl else "va", "aller", "AUX", "aux"), "Inf"
        if c.mood == "imp":
            return stem + ("is" if ir else "e"), None, "Fin"
        if ir:
            return stem + ("issent" if pl else "it"), None, "Fin"
        return stem + ("ent" if pl else "e"), None, "Fin"

    def clause(self, c: Clause, rel: str, main: bool, head: Entity | None = None) -> Node:
        subj = self.np(c.subj, "nsubj") if c.subj is not None else None
        gender = "m"
        if c.subj is not None and c.subj.kind == "noun":
            gender = self.lex.gender["fr"][(c.subj.lemma, "NOUN")]
        aux: Node | None
        if c.verb is None:
            lem = self.word(c.adjective, "ADJ")
            node = Node(self.adj_form(lem, gender, subject_number(c, head)), lem, "ADJ", rel)
            pl = subject_number(c, head) == "pl"
            cop = {"pres": ("est", "sont"), "past": ("était", "étaient"), "fut": ("sera", "seront")}[c.tense][pl]
            aux = Node(cop, "être", "AUX", "cop")
        else:
            lemma = self.word(c.verb, "VERB")
            form, aux, vf = self._finite(lemma, c, head)
            node = Node(form, lemma, "VERB", rel, f"VerbForm={vf}")
        if c.gap == "subj":
            node.left.append(Node("qui", "qui", "PRON", "nsubj", "PronType=Rel"))
        if subj is not None:
            node.left.append(subj)
        ne = Node("ne", "ne", "ADV", "advmod", "Polarity=Neg") if c.neg else None
        pas = Node("pas", "pas", "ADV", "advmod", "Polarity=Neg") if c.neg else None
        if aux is not None:
            node.left += [x for x in (ne, aux, pas) if x is not None]
        else:
            node.left += [ne] if ne else []
            node.right += [pas] if pas else []
        if c.adv:
            w = self.word(c.adv, "ADV")
            node.right.append(Node(w, w, "ADV", "advmod"))
        if c.obj is not None:
            node.right.append(self.np(c.obj, "obj"))
        if c.iobj is not None:
            io = self.np(c.iobj, "iobj")
            io.left.insert(0, Node("à", "à", "ADP", "case"))
            node.right.append(io)
        if c.obl is not None:
            prep, ent = c.obl
            obl = self.np(ent, "obl")
            p = "en" if ent.kind == "year" else self.PREP[prep]
            obl.left.insert(0, Node(p, p, "ADP", "case"))
            node.right.append(obl)
        self.coordinate(node, c)
        return node

    def postprocess(self, sent: Sentence) -> None:
        """de + des -> de; elision (l', n', d'); de/à + le/les contractions as multiword tokens."""
        drop = [nxt.id for tok, nxt in zip(sent.tokens, sent.tokens[1:])
                if tok.form == "de" and nxt.form == "des" and nxt.upos == "DET"]
        if drop:
            drop_leaves(sent, drop)
        toks = sent.tokens
        for i, tok in enumerate(toks[:-1]):
            following = toks[i + 1].form
            if tok.form in ("le", "la", "ne", "de") and following[:1].lower() in "aeiouéhâî":
                tok.form = tok.form[0] + "'"
                tok.space_after = False
        for i, tok in enumerate(toks[:-1]):
            nxt = toks[i + 1]
            surface = self.CONTRACT.get((tok.form, nxt.form))
            if surface and tok.upos == "ADP" and nxt.upos == "DET" and nxt.head == tok.head:
                sent.mwts.append((tok.id, nxt.id, surface))


# --------------------------------------------------------------------------------------------
class German(Realiser):
    lang = "de"
    PREP = {"in": ("in", "dat"), "near": ("bei", "dat"), "behind": ("hinter", "dat"),
            "under": ("unter", "dat"), "on": ("auf", "dat"), "with": ("mit", "dat"),
            "from": ("aus", "dat"), "to": ("zu", "dat"), "for": ("für", "acc"), "of": ("von", "dat")}
    ART = {  # (det, gender/pl) -> nom acc dat
        ("def", "m"): ("der", "den", "dem"), ("def", "f"): ("die", "die", "der"),
        ("def", "n"): ("das", "das", "dem"), ("def", "pl"): ("die", "die", "den"),
        ("indef", "m"): ("ein", "einen", "einem"), ("indef", "f"): ("eine", "eine", "einer"),
        ("indef", "n"): ("ein", "ein", "einem"),
        ("dem", "m"): ("dieser", "diesen", "diesem"), ("dem", "f"): ("diese", "diese", "dieser"),
        ("dem", "n"): ("dieses", "dieses", "diesem"), ("dem", "pl"): ("diese", "diese", "diesen"),
    }
    CASES = ("nom", "acc", "dat")
    REL = {"m": "der", "f": "die", "n": "das", "pl": "die"}

    def cc_and(self):
        return ("und", "und")

    def cc_word(self, cc):
        return {"and": "und", "but": "aber"}[cc]

    @staticmethod
    def noun_plural(w: str) -> str:
        if w.endswith("e"):
            return w + "n"
        if w.endswith(("er", "el")):
            return w
        return w + "en"

    def noun_phrase(self, e: Entity, rel: str, case: str = "nom") -> Node:
        lemma = self.word(e.lemma, "NOUN")
        g = self.lex.gender["de"][(e.lemma, "NOUN")]
        key = "pl" if e.number == "pl" else g
        form = self.noun_plural(lemma) if e.number == "pl" else lemma
        node = Node(form, lemma, "NOUN", rel,
                    f"Case={case.capitalize()}|Number={'Plur' if e.number == 'pl' else 'Sing'}")
        if e.num is not None:
            node.left.append(Node(str(e.num), str(e.num), "NUM", "nummod", "NumType=Card"))
        elif e.det is not None and (e.det, key) in self.ART:
            art = self.ART[(e.det, key)][self.CASES.index(case)]
            node.left.append(Node(art, {"def": "der", "indef": "ein", "dem": "dieser"}[e.det], "DET", "det"))
        weak = e.det in ("def", "dem")
        for a in e.adjs:
            lem = self.word(a, "ADJ")
            if e.number == "pl" or case == "dat" or (case == "acc" and g == "m"):
                end = "en"
            elif weak or g == "f":
                end = "e"
            else:
                end = "er" if g == "m" else "es"
            node.left.append(Node(lem + end, lem, "ADJ", "amod"))
        if e.nmod is not None:
            node.right.append(self.case_phrase(*e.nmod, "nmod"))
        if e.relcl is not None:
            rc = self.clause(e.relcl, "acl:relcl", main=False, head=e)
            node.right.append(rc)
        self.conjoin(node, e, case)
        return node

    def _forms(self, lemma: str, c: Clause, head: Entity | None) -> tuple[str, Node | None, str]:
        pl = subject_number(c, head) == "pl"
        stem = lemma[:-2] if lemma.endswith("en") else lemma
        if c.tense == "past":
            return "ge" + stem + "t", Node("haben" if pl else "hat", "haben", "AUX", "aux"), "Part"
        if c.tense == "fut":
            return lemma, Node("werden" if pl else "wird", "werden", "AUX", "aux"), "Inf"
        if c.mood == "imp":
            return stem + "e", None, "Fin"
        return (lemma if pl else stem + "t"), None, "Fin"

    def clause(self, c: Clause, rel: str, main: bool, head: Entity | None = None) -> Node:
        r = self.rng
        subj = self.np(c.subj, "nsubj", "nom") if c.subj is not None else None
        pl = subject_number(c, head) == "pl"
        fin: Node | None  # the finite auxiliary or copula; None: the lexical verb is finite
        if c.verb is None:
            lem = self.word(c.adjective, "ADJ")
            node = Node(lem, lem, "ADJ", rel)
            cop = {"pres": ("ist", "sind"), "past": ("war", "waren"), "fut": ("wird", "werden")}[c.tense][pl]
            fin = Node(cop, "werden" if c.tense == "fut" else "sein", "AUX", "aux" if c.tense == "fut" else "cop")
            final = Node("sein", "sein", "AUX", "cop") if c.tense == "fut" else None
        else:
            lemma = self.word(c.verb, "VERB")
            form, aux, vf = self._forms(lemma, c, head)
            node = Node(form, lemma, "VERB", rel, f"VerbForm={vf}")
            fin, final = aux, None
        middle: list[Node] = []        # Mittelfeld
        adv = Node(self.word(c.adv, "ADV"), self.word(c.adv, "ADV"), "ADV", "advmod") if c.adv else None
        if c.iobj is not None:
            middle.append(self.np(c.iobj, "iobj", "dat"))
        if c.obj is not None:
            middle.append(self.np(c.obj, "obj", "acc"))
        if c.obl is not None:
            middle.append(self.case_phrase(*c.obl, "obl"))
        nicht = Node("nicht", "nicht", "PART", "advmod", "Polarity=Neg") if c.neg else None
        if not main:
            # subordinate clause: relative pronoun first, finite verb last
            relpron = self.REL["pl" if head.number == "pl" else self.lex.gender["de"].get((head.lemma, "NOUN"), "m")] \
                if head is not None and head.kind == "noun" else "der"
            pre = [_comma("de"), Node(relpron, "der", "PRON", "nsubj", "PronType=Rel")]
            pre += ([adv] if adv else []) + middle + ([nicht] if nicht else [])
            node.left += pre
            post = [x for x in (final, fin) if x is not None]
            node.right += post + [_comma("de")]
            return node
        first = subj
        if adv is not None and subj is not None and c.mood == "decl" and r.random() < 0.3:
            first, middle = adv, [subj] + middle      # adverb fronting: subject moves after verb
            adv = None
        elif adv is not None:
            middle.insert(0 if c.obj is None else len(middle) - (c.obl is not None), adv)
        if c.mood == "q":
            first, middle = None, ([subj] if subj else []) + middle
        tail = middle + ([nicht] if nicht else [])
        if fin is None:
            node.left += [first] if first is not None else []
            node.right += tail
        else:
            node.left += ([first] if first is not None else []) + [fin] + tail
            if final is not None:
                node.left.append(final)
        self.coordinate(node, c)
        return node


# --------------------------------------------------------------------------------------------
class Russian(Realiser):
    lang = "ru"
    NOUN_END = {"sg": {"nom": "", "gen": "а", "dat": "у", "acc": "а", "ins": "ом", "loc": "е"},
                "pl": {"nom": "ы", "gen": "ов", "dat": "ам", "acc": "ов", "ins": "ами", "loc": "ах"}}
    ADJ_END = {"sg": {"nom": "ый", "gen": "ого", "dat": "ому", "acc": "ого", "ins": "ым", "loc": "ом"},
               "pl": {"nom": "ые", "gen": "ых", "dat": "ым", "acc": "ых", "ins": "ыми", "loc": "ых"}}
    PREP = {"in": ("в", "loc"), "near": ("у", "gen"), "behind": ("за", "ins"), "under": ("под", "ins"),
            "on": ("на", "loc"), "with": ("с", "ins"), "from": ("из", "gen"), "to": ("к", "dat"),
            "for": ("для", "gen")}
    CASE_FEAT = {"nom": "Nom", "gen": "Gen", "dat": "Dat", "acc": "Acc", "ins": "Ins", "loc": "Loc"}

    def cc_and(self):
        return ("и", "и")

    def cc_word(self, cc):
        return {"and": "и", "but": "но"}[cc]

    def noun_phrase(self, e: Entity, rel: str, case: str = "nom") -> Node:
        lemma = self.word(e.lemma, "NOUN")
        num = e.number
        node = Node(lemma + self.NOUN_END[num][case], lemma, "NOUN", rel,
                    f"Case={self.CASE_FEAT[case]}|Number={'Plur' if num == 'pl' else 'Sing'}")
        if e.det == "dem":
            node.left.append(Node("эти" if num == "pl" else "этот", "этот", "DET", "det"))
        if e.num is not None:
            node.left.append(Node(str(e.num), str(e.num), "NUM", "nummod", "NumType=Card"))
        for a in e.adjs:
            lem = self.word(a, "ADJ")
            node.left.append(Node(lem[:-2] + self.ADJ_END[num][case], lem, "ADJ", "amod",
                                  f"Case={self.CASE_FEAT[case]}"))
        if e.nmod is not None:
            prep, inner = e.nmod
            if prep == "of":       # possessor: bare genitive, no preposition
                node.right.append(self.np(inner, "nmod", "gen"))
            else:
                node.right.append(self.case_phrase(prep, inner, "nmod"))
        if e.relcl is not None:
            node.right.append(self.clause(e.relcl, "acl:relcl", main=False, head=e))
        self.conjoin(node, e, case)
        return node

    def clause(self, c: Clause, rel: str, main: bool, head: Entity | None = None) -> Node:
        r = self.rng
        pl = subject_number(c, head) == "pl"
        subj = self.np(c.subj, "nsubj", "nom") if c.subj is not None else None
        aux = None
        if c.verb is None:
            lem = self.word(c.adjective, "ADJ")
            node = Node(lem[:-2] + self.ADJ_END["pl" if pl else "sg"]["nom"], lem, "ADJ", rel)
            if c.tense != "pres":        # present tense has no copula
                form = {"past": ("был", "были"), "fut": ("будет", "будут")}[c.tense][pl]
                aux = Node(form, "быть", "AUX", "cop")
        else:
            lemma = self.word(c.verb, "VERB")
            stem = lemma[:-3]
            if c.mood == "imp":
                form = stem + "ай"
            elif c.tense == "past":
                form = stem + ("али" if pl else "ал")
            elif c.tense == "fut":
                form = lemma
                aux = Node("будут" if pl else "будет", "быть", "AUX", "aux")
            else:
                form = stem + ("ают" if pl else "ает")
            node = Node(form, lemma, "VERB", rel)
        verb_group = [x for x in (Node("не", "не", "PART", "advmod", "Polarity=Neg") if c.neg else None, aux) if x]
        pre: list[Node] = []
        post: list[Node] = []
        if c.gap == "subj":
            pre += [_comma("ru"), Node("которые" if head is not None and head.number == "pl" else "который",
                                       "который", "PRON", "nsubj", "PronType=Rel")]
        if c.adv:
            w = self.word(c.adv, "ADV")
            pre.append(Node(w, w, "ADV", "advmod"))
        objs = []
        if c.iobj is not None:
            objs.append(self.np(c.iobj, "iobj", "dat"))
        if c.obj is not None:
            objs.append(self.np(c.obj, "obj", "acc"))
        obl = self.case_phrase(*c.obl, "obl") if c.obl is not None else None
        # free word order: case endings, not position, mark the roles
        order = r.choices(("SVO", "SOV", "OVS", "VSO"), (0.6, 0.15, 0.15, 0.1))[0] if main else "SVO"
        if subj is None or not objs:
            order = "SVO"
        s = [subj] if subj is not None else []
        if order == "SVO":
            pre = s + pre
            post += objs
        elif order == "SOV":
            pre = s + objs + pre
        elif order == "OVS":
            pre = objs + pre
            post += s
        else:
            post += s + objs
        if obl is not None:
            if main and r.random() < 0.3:
                pre.insert(0, obl)
            else:
                post.append(obl)
        node.left += pre + verb_group
        node.right += post
        if c.gap == "subj":
            node.right.append(_comma("ru"))
        self.coordinate(node, c)
        return node


# --------------------------------------------------------------------------------------------
class Chinese(Realiser):
    lang = "zh"
    # preposition + optional localiser after the noun (circumpositions: 在 X 上)
    PREP = {"in": ("在", "里"), "near": ("在", "旁边"), "behind": ("在", "后面"), "under": ("在", "下面"),
            "on": ("在", "上"), "with": ("和", None), "from": ("从", None), "to": ("到", None),
            "for": ("为", None)}

    def cc_and(self):
        return ("和", "和")

    def cc_word(self, cc):
        return {"and": "并且", "but": "但是"}[cc]

    def year(self, e: Entity, rel: str) -> Node:
        node = Node(e.lemma, e.lemma, "NUM", rel, "NumType=Card")
        node.right.append(Node("年", "年", "NOUN", "clf"))
        return node

    def noun_phrase(self, e: Entity, rel: str, *args) -> Node:
        lemma = self.word(e.lemma, "NOUN")
        node = Node(lemma, lemma, "NOUN", rel)
        # modifiers precede the noun: possessor/relative clause + 的, then det/number + classifier
        if e.nmod is not None:
            prep, inner = e.nmod
            pp = self.np(inner, "nmod")
            if prep == "with":
                pp.left.insert(0, Node("跟", "跟", "ADP", "case"))
            pp.right.append(Node("的", "的", "PART", "case"))
            node.left.append(pp)
        if e.relcl is not None:
            rc = self.clause(e.relcl, "acl:relcl", main=False, head=e)
            rc.right.append(Node("的", "的", "PART", "mark:relcl"))
            node.left.append(rc)
        if e.det == "dem":
            d = Node("这", "这", "DET", "det")
            d.right.append(Node("个", "个", "NOUN", "clf"))
            node.left.append(d)
        elif e.num is not None:
            n = Node(str(e.num), str(e.num), "NUM", "nummod", "NumType=Card")
            n.right.append(Node("个", "个", "NOUN", "clf"))
            node.left.append(n)
        for a in e.adjs:
            w = self.word(a, "ADJ")
            adj = Node(w, w, "ADJ", "amod")
            if len(w) > 1:
                adj.right.append(Node("的", "的", "PART", "mark"))
            node.left.append(adj)
        self.conjoin(node, e)
        return node

    def clause(self, c: Clause, rel: str, main: bool, head: Entity | None = None) -> Node:
        subj = self.np(c.subj, "nsubj") if c.subj is not None else None
        neg = None
        if c.neg:
            w = "没" if c.tense == "past" and c.verb is not None else "不"
            neg = Node(w, w, "ADV", "advmod", "Polarity=Neg")
        aux = Node("会", "会", "AUX", "aux") if c.tense == "fut" else None
        if c.verb is None:
            w = self.word(c.adjective, "ADJ")
            node = Node(w, w, "ADJ", rel)
            pre = [neg] if neg else [Node("很", "很", "ADV", "advmod")]
            if aux is not None:
                pre = ([neg] if neg else []) + [aux]
            node.left += ([subj] if subj else []) + pre
            self.coordinate(node, c)
            if c.mood == "q":
                node.right.append(Node("吗", "吗", "PART", "discourse"))
            return node
        w = self.word(c.verb, "VERB")
        node = Node(w, w, "VERB", rel)
        if subj is not None:
            node.left.append(subj)
        if c.adv:
            a = self.word(c.adv, "ADV")
            node.left.append(Node(a, a, "ADV", "advmod"))
        node.left += [x for x in (neg, aux) if x is not None]
        if c.obl is not None:
            prep, ent = c.obl
            obl = self.np(ent, "obl")
            p, loc = ("在", None) if ent.kind == "year" else self.PREP[prep]
            obl.left.insert(0, Node(p, p, "ADP", "case"))
            if loc:
                obl.right.append(Node(loc, loc, "ADP", "case"))
            node.left.append(obl)
        if c.iobj is not None:
            io = self.np(c.iobj, "obl")
            io.left.insert(0, Node("给", "给", "ADP", "case"))
            node.left.append(io)
        if c.tense == "past" and not c.neg:
            node.right.append(Node("了", "了", "AUX", "aux", "Aspect=Perf"))
        if c.obj is not None:
            node.right.append(self.np(c.obj, "obj"))
        self.coordinate(node, c)
        if c.mood == "q":
            node.right.append(Node("吗", "吗", "PART", "discourse"))
        return node


REALISERS = {"en": English, "fr": French, "de": German, "ru": Russian, "zh": Chinese}


def realiser(lang: str, lex: Lexicon, rng: random.Random, paraphrase: bool = False) -> Realiser:
    if lang == "en":
        return English(lex, rng, paraphrase=paraphrase)
    return REALISERS[lang](lex, rng)
