"""Write every resource of the synthetic testbed in the layout and format of the real downloads."""

from __future__ import annotations

import csv
import io
import json
import random
import shutil
from dataclasses import replace
from pathlib import Path

from xling.io import atomic_path

from . import archive as A
from . import english as E
from . import formats as F
from .lexicon import TARGETS, Lexicon, build_lexicon, content_concepts, name_tokens
from .nli import make_pairs
from .realise import LANGS, realiser
from .structures import CC, WIKI, Clause, Entity, Grammar, Style
from .tree import Sentence, check_tree

HOST = "testbed.invalid"
FAST_ALIGN_SOURCE = (Path(__file__).resolve().parents[1] / "data"
                     / "fast_align-cab1e9aac8d3bb02ff5ae58218d8d225a039fa11.tar.gz")
SCALES = {
    "small": dict(wiki_sentences=20000, cc_sentences=20000, mnli_train=6000, xnli_dev=1000,
                  xnli_test=1000, ner_train=3000, ner_dev=500, ner_test=500, ud_train=2000,
                  ud_dev=500, ud_test=500, xnli_15way=10000, tatoeba=1000, muse_test_fraction=0.2,
                  fasttext_dim=64, fasttext_epoch=5),
    "tiny": dict(wiki_sentences=300, cc_sentences=200, mnli_train=150, xnli_dev=60, xnli_test=60,
                 ner_train=60, ner_dev=20, ner_test=20, ud_train=60, ud_dev=20, ud_test=20,
                 xnli_15way=100, tatoeba=50, muse_test_fraction=0.2, fasttext_dim=16, fasttext_epoch=1),
}
WIKI_DATE = "20190701"
TREEBANKS = {"en": ("UD_English-EWT", "en_ewt"), "fr": ("UD_French-GSD", "fr_gsd"),
             "de": ("UD_German-GSD", "de_gsd"), "ru": ("UD_Russian-GSD", "ru_gsd"),
             "zh": ("UD_Chinese-GSD", "zh_gsd")}
TATOEBA = {"fr": "fra", "de": "deu", "ru": "rus", "zh": "cmn"}
CC_FILES = {"fr": "fr.txt.xz", "ru": "ru.txt.xz", "zh": "zh-Hans.txt.xz"}
WIKIANN_LANGS = ("en", "fr", "de", "ru")
GENRES = ("fiction", "government", "slate", "telephone", "travel")
XNLI_GENRES = ("facetoface", "fiction", "government", "letters", "nineeleven", "oup", "slate",
               "telephone", "travel", "verbatim")
NER_STYLE = replace(WIKI, p_name=0.6, p_question=0.0)
SHORT = Style(p_conj=0.05, p_relcl=0.03, p_nmod=0.03, p_adj=0.3, p_adv=0.2, p_obl=0.2,
              p_question=0.1, p_imperative=0.05)


def resolve_params(params: dict | None) -> dict:
    params = dict(params or {})
    scale = params.pop("scale", "small")
    if scale not in SCALES:
        raise ValueError(f"testbed scale must be one of {sorted(SCALES)}, got {scale!r}")
    out = dict(SCALES[scale])
    unknown = set(params) - set(out)
    if unknown:
        raise ValueError(f"unknown testbed parameters: {sorted(unknown)}")
    out.update(params)
    return out


class Writer:
    """Collects the files of one run under a root directory, keeping the manifest."""

    def __init__(self, root: Path):
        self.root = root
        self.manifest: dict[str, str] = {}

    def put(self, rid: str | None, rel: str, data: bytes) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if rid is not None:
            self.manifest[rid] = rel

    def mirror(self, rid: str, basename: str, data: bytes) -> None:
        self.put(*_mirrored(rid, basename, data))


def _realise(structs, lang: str, lex: Lexicon, rng: random.Random, paraphrase: bool = False) -> list[Sentence]:
    r = realiser(lang, lex, rng, paraphrase=paraphrase)
    out = []
    for c in structs:
        s = r.sentence(c)
        problems = check_tree(s)
        if problems:       # the realisers build trees head-first, so this is a bug, not data
            raise AssertionError(f"{lang}: ill-formed tree {problems} for {s.text()}")
        out.append(s)
    return out


def _sample(seed: int, stream: str, n: int, style: Style = WIKI) -> list:
    g = Grammar(random.Random(f"{stream}-{seed}"), style)
    return [g.clause() for _ in range(n)]


# --- Wikipedia ------------------------------------------------------------------------------
def _title(lex: Lexicon, lang: str, topic: Entity) -> str:
    if topic.kind == "name":
        parts = [lex.name(lang, p) for p in topic.lemma.split()]
        return ("" if lang == "zh" else " ").join(parts)
    w = topic.lemma if lang == "en" else lex.main(lang, topic.lemma, "NOUN")
    return w[:1].upper() + w[1:]


def wiki_dump(lang: str, lex: Lexicon, seed: int, n: int, tokens: list[list[str]] | None = None) -> bytes:
    """The language's Wikipedia dump; ``tokens`` (when given) receives every article sentence's
    tokens, the text fastText's wiki vectors are trained on."""
    rng = random.Random(f"wiki-{lang}-{seed}")
    g = Grammar(rng, WIKI)
    real = realiser(lang, lex, random.Random(f"wiki-real-{lang}-{seed}"))
    glue = "" if lang == "zh" else " "
    pages, done, page_id = [F.WIKI_HEAD.format(lang=lang)], 0, 10
    seen_titles: set[str] = set()
    while done < n:
        kind = rng.choice(("PER", "LOC", "ORG", "noun"))
        if kind == "noun":
            cls = rng.choice(("person", "animal", "place", "thing", "food", "event", "plant"))
            topic = Entity("noun", g.pick(cls), det="def")
        else:
            cls, topic = kind, g.name(kind)
        title = _title(lex, lang, topic)
        if title in seen_titles:
            # disambiguate the way Wikipedia does, with a word of the language: "Zara (teacher)"
            cls_word = rng.choice(("person", "place", "thing", "event"))
            word = g.pick(cls_word) if lang == "en" else lex.main(lang, g.pick(cls_word), "NOUN")
            title = f"{title} ({word})"
            if title in seen_titles:
                continue
        seen_titles.add(title)
        g.set_topic(cls, topic)
        k = min(rng.randint(4, 14), n - done)
        # an article opens by defining its topic ("X is famous."), then talks about it
        lead = Clause(None, subj=topic, cop_adj=g.pick("ADJ"), tense="pres")
        sents = [real.sentence(lead)] + [real.sentence(g.clause()) for _ in range(k - 1)]
        if tokens is not None:
            tokens.extend(s.surface_tokens() for s in sents)
        done += k
        paras: list[str] = []
        cur: list[str] = []
        for s in sents:
            def deco(tok, form, s=s):
                x = rng.random()
                if tok.upos in ("PROPN", "NOUN") and x < 0.08:
                    return f"[[{form}]]"
                if tok.upos in ("PROPN", "NOUN") and x < 0.14:
                    target = tok.lemma[:1].upper() + tok.lemma[1:]
                    return f"[[{target}|{form}]]"
                if tok.upos == "ADJ" and x < 0.02:
                    return f"''{form}''"
                return form
            text = s.text(decorate=deco)
            y = rng.random()
            if y < 0.06:
                text += f"<ref>{{{{cite web|url=http://www.example.org/{lang}/{page_id}/{len(cur)}|title={title}}}}}</ref>"
            elif y < 0.09:
                text += "{{citation needed}}"
            cur.append(text)
            if len(cur) >= rng.randint(1, 3):
                paras.append(glue.join(cur))
                cur = []
        if cur:
            paras.append(glue.join(cur))
        body = [f"{{{{Infobox {kind.lower()}\n| name = {title}\n| image = {title}.jpg\n}}}}",
                paras[0].replace(title, f"'''{title}'''", 1)]
        for j, p in enumerate(paras[1:]):
            if j % 3 == 1:
                head = lex.main(lang, g.pick(rng.choice(("place", "event", "thing"))), "NOUN") \
                    if lang != "en" else g.pick("event")
                body.append(f"== {head[:1].upper() + head[1:]} ==")
            body.append(p)
        body.append(f"[[Category:{title}]]")
        pages.append(F.wiki_page(title, page_id, 1000 + page_id, "\n\n".join(body)))
        page_id += 1
        if page_id % 25 == 0:      # non-article namespace: extractors must skip it
            pages.append(F.wiki_page(f"Template:Box{page_id}", page_id, 1000 + page_id,
                                     "{{{1}}} <noinclude>[[Category:Templates]]</noinclude>", ns=10))
            page_id += 1
    pages.append("</mediawiki>\n")
    return A.bz2_bytes("".join(pages).encode("utf-8"))


# --- CC-100 ---------------------------------------------------------------------------------
def cc_file(lang: str, lex: Lexicon, seed: int, n: int) -> bytes:
    rng = random.Random(f"cc-{lang}-{seed}")
    g = Grammar(rng, CC)
    real = realiser(lang, lex, random.Random(f"cc-real-{lang}-{seed}"))
    lines, done = [], 0
    while done < n:
        k = min(rng.randint(2, 10), n - done)
        doc = []
        for _ in range(k):
            doc.append(real.sentence(g.clause()).text())
            x = rng.random()
            if x < 0.04:       # web noise: links, boilerplate
                word = lex.main(lang, g.pick("thing"), "NOUN") if lang == "fr" else f"page{rng.randint(1, 999)}"
                doc.append(f"http://www.{g.pick('PER').lower()}-{rng.randint(1, 99)}.com/{word}")
            elif x < 0.06:
                doc.append(f"© {rng.randint(2005, 2019)} {g.pick('ORG')}")
        done += k
        lines.append("\n".join(doc) + "\n")
    return A.xz_bytes("\n".join(lines).encode("utf-8"))


# --- NLI ------------------------------------------------------------------------------------
def nli_pair_sets(seed: int, p: dict) -> dict[str, list]:
    """The NLI structures behind MultiNLI train and XNLI dev/test: (premise, hypothesis, label)."""
    return {"train": make_pairs(random.Random(f"mnli-{seed}"), p["mnli_train"]),
            "dev": make_pairs(random.Random(f"xnli-dev-{seed}"), p["xnli_dev"]),
            "test": make_pairs(random.Random(f"xnli-test-{seed}"), p["xnli_test"])}


def nli_files(lex: Lexicon, seed: int, p: dict) -> tuple[bytes, bytes]:
    rng = random.Random(f"nli-{seed}")
    sets = nli_pair_sets(seed, p)
    train = sets["train"]
    real = realiser("en", lex, random.Random(f"mnli-real-{seed}"))
    jsonl = []
    for i, (pc, hc, label) in enumerate(train):
        prompt = str(100000 + i)       # one hypothesis per premise: each pair its own prompt
        jsonl.append(F.multinli_line(real.sentence(pc), real.sentence(hc), label,
                                     f"{prompt}{label[0]}", prompt, rng.choice(GENRES), rng))
    mnli = A.zip_bytes({"multinli_1.0/multinli_1.0_train.jsonl": "".join(jsonl).encode("utf-8"),
                        "multinli_1.0/README.txt": b"Synthetic testbed stand-in for MultiNLI 1.0.\n"})
    members = {}
    for split, offset in (("dev", 0), ("test", 500000)):
        pairs = sets[split]
        genres = [rng.choice(XNLI_GENRES) for _ in pairs]
        rows = ["\t".join(F.XNLI_HEADER) + "\n"]
        for lang in LANGS:
            real = realiser(lang, lex, random.Random(f"xnli-real-{split}-{lang}-{seed}"))
            for i, (pc, hc, label) in enumerate(pairs):
                rows.append(F.xnli_row(lang, real.sentence(pc), real.sentence(hc), label,
                                       offset + i + 1, offset + i + 1, genres[i]))
        members[f"XNLI-1.0/xnli.{split}.tsv"] = "".join(rows).encode("utf-8")
    return mnli, A.zip_bytes(members)


# --- NER ------------------------------------------------------------------------------------
def _ner_sentences(lang: str, lex: Lexicon, seed: int, stream: str, n: int) -> list[Sentence]:
    structs = _sample(seed, f"ner-{stream}-{lang}", n, NER_STYLE)
    return _realise(structs, lang, lex, random.Random(f"ner-real-{stream}-{lang}-{seed}"))


def wikiann_tar(lex: Lexicon, seed: int, p: dict) -> bytes:
    inner = {}
    for lang in WIKIANN_LANGS:
        files = {}
        for split in ("train", "dev", "test"):
            sents = _ner_sentences(lang, lex, seed, f"wikiann-{split}", p[f"ner_{split}"])
            files[split] = "".join(F.panx_block(s, lang) for s in sents).encode("utf-8")
        inner[f"{lang}.tar.gz"] = A.gzip_bytes(A.tar_bytes(files, dirs=False))
    return A.tar_bytes(inner, dirs=False)


def conll2003_files(lex: Lexicon, seed: int, p: dict) -> dict[str, bytes]:
    out = {}
    for name, split in (("eng.train", "train"), ("eng.testa", "dev"), ("eng.testb", "test")):
        sents = _ner_sentences("en", lex, seed, f"conll-{split}", p[f"ner_{split}"])
        parts = []
        for i, s in enumerate(sents):
            if i % 12 == 0:
                parts.append("-DOCSTART- -X- -X- O\n\n")
            parts.append(F.conll2003_block(s))
        out[name] = "".join(parts).encode("utf-8")
    return out


def levow_files(lex: Lexicon, seed: int, p: dict) -> dict[str, bytes]:
    out = {}
    for name, n in (("train.txt", p["ner_train"]), ("test.txt", p["ner_test"])):
        sents = _ner_sentences("zh", lex, seed, f"levow-{name}", n)
        out[name] = "".join(F.levow_block(s) for s in sents).encode("utf-8")
    return out


# --- UD -------------------------------------------------------------------------------------
def ud_tgz(lex: Lexicon, seed: int, p: dict) -> bytes:
    members = {}
    for lang, (tb, prefix) in TREEBANKS.items():
        for split in ("train", "dev", "test"):
            structs = _sample(seed, f"ud-{split}-{lang}", p[f"ud_{split}"])
            sents = _realise(structs, lang, lex, random.Random(f"ud-real-{split}-{lang}-{seed}"))
            text = "".join(F.conllu_block(s, f"{prefix}-{split}-s{i + 1}") for i, s in enumerate(sents))
            members[f"ud-treebanks-v2.3/{tb}/{prefix}-ud-{split}.conllu"] = text.encode("utf-8")
        members[f"ud-treebanks-v2.3/{tb}/README.md"] = (
            f"# {tb} (synthetic testbed)\n\nGenerated by xling.testbed; same format as UD v2.3.\n").encode()
    return A.gzip_bytes(A.tar_bytes(members))


# --- dictionaries ---------------------------------------------------------------------------
def _muse_split(lex: Lexicon, seed: int, frac: float) -> tuple[set[str], set[str]]:
    words = sorted({en for en, _ in content_concepts()})
    random.Random(f"muse-split-{seed}").shuffle(words)
    k = int(round(len(words) * (1 - frac)))
    return set(words[:k]), set(words[k:])


def muse_files(lex: Lexicon, seed: int, frac: float) -> dict[str, tuple[bytes, bytes]]:
    train_words, test_words = _muse_split(lex, seed, frac)
    out = {}
    for lang in TARGETS:
        train: list[str] = []
        test: list[str] = []
        for (en, pos), tgts in lex.forms[lang].items():
            for t in tgts:
                (train if en in train_words else test).append(f"{en} {t.lower() if lang == 'de' else t}\n")
        for tok in name_tokens():      # identical or transliterated names, as MUSE lists them
            train.append(f"{tok.lower()} {lex.name(lang, tok).lower()}\n")
        out[lang] = ("".join(sorted(set(train))).encode("utf-8"), "".join(sorted(set(test))).encode("utf-8"))
    return out


PANLEX_LANGVARS = {"en": (187, "eng"), "fr": (157, "fra"), "de": (158, "deu"), "ru": (620, "rus"),
                   "zh": (1469, "cmn")}
UID_LANGVAR = 7257    # art-274: the variety whose expressions are the uids (eng-000, ...)


PANLEX_NAMES = {"en": "English", "fr": "French", "de": "German", "ru": "Russian", "zh": "Mandarin"}
PANLEX_COLUMNS = {
    "langvar.csv": ["id", "lang_code", "var_code", "mutable", "name_expr", "script_expr", "meaning", "region_expr",
                    "uid_expr", "grp"],
    "expr.csv": ["id", "langvar", "txt", "txt_degr"],
    "source.csv": ["id", "reg_date", "label", "url", "isbn", "author", "title", "publisher", "year", "quality", "grp",
                   "note", "license", "ip_claim", "ip_claimant", "ip_claimant_email"],
    "meaning.csv": ["id", "source"],
    "denotation.csv": ["id", "meaning", "expr"],
    "source_langvar.csv": ["source", "langvar"],
}


class _PanlexTables:
    """The rows of a PanLex CSV snapshot as they are added, with PanLex's ids."""

    def __init__(self):
        self.exprs: dict[tuple[int, str], int] = {}
        self.rows: dict[str, list[tuple]] = {name: [] for name in PANLEX_COLUMNS}

    def expr(self, langvar: int, txt: str) -> int:
        key = (langvar, txt)
        if key not in self.exprs:
            self.exprs[key] = 10000 + len(self.exprs)
            self.rows["expr.csv"].append((self.exprs[key], langvar, txt, txt.lower()))
        return self.exprs[key]

    def source(self, label: str, quality: int, langs: list[str]) -> int:
        sources = self.rows["source.csv"]
        sid = 100 + len(sources)
        sources.append((sid, "2015-01-01", label, f"http://{HOST}/{label}", "", "Testbed", label,
                        "Testbed Press", 2015, quality, sid, "", "cc0", "", "", ""))
        self.rows["source_langvar.csv"] += [(sid, PANLEX_LANGVARS[lang][0]) for lang in langs]
        return sid

    def meaning(self, sid: int, entries: list[tuple[str, str]]) -> None:
        mid = 500000 + len(self.rows["meaning.csv"])
        self.rows["meaning.csv"].append((mid, sid))
        denotations = self.rows["denotation.csv"]
        for lang, txt in entries:
            denotations.append((9000000 + len(denotations), mid, self.expr(PANLEX_LANGVARS[lang][0], txt)))

    def csv_files(self) -> dict[str, bytes]:
        out = {}
        for name, header in PANLEX_COLUMNS.items():
            buf = io.StringIO()
            w = csv.writer(buf, lineterminator="\n")
            w.writerow(header)
            w.writerows(self.rows[name])
            out[name] = buf.getvalue().encode("utf-8")
        return out


def panlex_zip(lex: Lexicon, seed: int) -> bytes:
    """PanLex CSV snapshot: langvar, expr, source, meaning, denotation, source_langvar."""
    t = _PanlexTables()
    langvars = t.rows["langvar.csv"]
    for lang, (lv, code) in PANLEX_LANGVARS.items():
        uid = t.expr(UID_LANGVAR, f"{code}-000")
        langvars.append((lv, code, 0, "t", t.expr(187, PANLEX_NAMES[lang]), 0, 0, 0, uid, lv))
    langvars.append((UID_LANGVAR, "art", 274, "f", t.expr(187, "uid"), 0, 0, 0, t.expr(UID_LANGVAR, "art-274"),
                     UID_LANGVAR))
    _panlex_meanings(t, lex, random.Random(f"panlex-{seed}"))
    return A.zip_bytes({f"panlex-20190601-csv/{k}": v for k, v in t.csv_files().items()})


def _panlex_meanings(t: _PanlexTables, lex: Lexicon, rng: random.Random) -> None:
    """A multilingual high-quality source with the main translations; per language, good, fair and
    poor English sources (every form, the last form, noise), phrases and names."""
    concepts = content_concepts()
    multi = t.source("art-testbed:multilingual", 8, list(LANGS))
    for en, pos in concepts:
        if rng.random() < 0.85:
            t.meaning(multi, [("en", en)] + [(l, lex.main(l, en, pos)) for l in TARGETS])
    for lang in TARGETS:
        code = PANLEX_LANGVARS[lang][1]
        qualities = (("good", 7), ("fair", 4), ("poor", 1))
        good, fair, poor = (t.source(f"eng-{code}:{q}", n, ["en", lang]) for q, n in qualities)
        pool = [w for tgts in lex.forms[lang].values() for w in tgts]
        for en, pos in concepts:
            tgts = lex.forms[lang][(en, pos)]
            if rng.random() < 0.7:
                t.meaning(good, [("en", en)] + [(lang, w) for w in tgts])
            if len(tgts) > 1 or rng.random() < 0.3:
                t.meaning(fair, [("en", en), (lang, tgts[-1])])
            if rng.random() < 0.15:          # noise: wrong translation from a poor source
                t.meaning(poor, [("en", en), (lang, rng.choice(pool))])
        # multi-word expressions: phrase-level entries (adjective + noun, "to" + verb)
        for _ in range(40):
            adj, noun = rng.choice(E.ADJS), rng.choice(E.NOUNS)
            a, n = lex.main(lang, adj, "ADJ"), lex.main(lang, noun, "NOUN")
            phrase = {"fr": f"{n} {a}", "de": f"{a}e {n}", "ru": f"{a} {n}", "zh": f"{a}{n}"}[lang]
            t.meaning(fair, [("en", f"{adj} {noun}"), (lang, phrase)])
        for verb in list(E.VERBS)[:20]:
            t.meaning(poor, [("en", f"to {verb}"), (lang, lex.main(lang, verb, "VERB"))])
        for tok in name_tokens():
            t.meaning(good, [("en", tok), (lang, lex.name(lang, tok))])


# --- parallel data --------------------------------------------------------------------------
def parallel(lex: Lexicon, seed: int, stream: str, n: int, langs, style: Style = WIKI,
             paraphrase: bool = False) -> dict[str, list[Sentence]]:
    structs = _sample(seed, stream, n, style)
    out = {lang: _realise(structs, lang, lex, random.Random(f"{stream}-real-{lang}-{seed}"))
           for lang in langs}
    if paraphrase:
        out["en_prime"] = _realise(structs, "en", lex, random.Random(f"{stream}-para-{seed}"),
                                   paraphrase=True)
    return out


def gold_files(lex: Lexicon, seed: int) -> dict[str, bytes]:
    out = {}
    for lang in TARGETS:
        rows = lex.gold_rows(lang) + [(str(k), str(k), "NUM") for k in range(*E.NUMBER_RANGE)]
        out[f"lexicon.{lang}.tsv"] = ("en\ttarget\tpos\n" + "".join(f"{a}\t{b}\t{c}\n" for a, b, c in rows)).encode()
    out["README.md"] = README.format(seed=seed, nconcepts=len(content_concepts()),
                                     nnames=len(name_tokens())).encode()
    return out


README = """# Synthetic bilingual testbed (seed {seed})

Generated by `xling.testbed` (`python -m xling.testbed`). One probabilistic grammar samples
sentence structures (meaning + syntax); each language realises them with its own words, order,
morphology and script. Corpora of different languages are sampled independently (not parallel),
except the resources that are parallel in reality (XNLI, 15-way, Tatoeba).

| code | stands for | script | word order and morphology |
|---|---|---|---|
| en | English | Latin | English words; SVO, do-support, adjectives before nouns |
| fr | French-like | Latin | pseudo-words; SVO, most adjectives after the noun, ne..pas, elision, du/au/des multiword tokens |
| de | German-like | Latin | pseudo-words; capitalised nouns, V2 main clauses, verb-final relative clauses, case-marked articles |
| ru | Russian-like | Cyrillic | pseudo-words; free order (SVO/SOV/OVS/VSO) marked by case suffixes, no articles, genitive possessors |
| zh | Chinese-like | Han | 1-3 character words; no spaces, modifiers and relative clauses before the noun with 的, classifiers |

Anchors: names are shared verbatim by en/fr/de and transliterated in ru/zh; numbers (digits) are
shared by all. Content words ({nconcepts} concepts, some with two translations) and {nnames} name
pieces are listed in `lexicon.<lang>.tsv` (en, target, UPOS).

NLI labels follow from the structures: entailment = hypothesis generalises a conjunct (modifiers
dropped, hypernym, adjective read off; under negation: specialises it); contradiction = polarity
flip, an exclusive adjective (antonym, other colour) on the same entity, or an exclusive event
(winning the same race) with another agent; neutral = the hypothesis adds information. Labels are
balanced; a bag-of-words classifier on the hypothesis alone reaches about 54% (chance 33%).

Files: every resource sits at `testbed.invalid/<resource_id>/<basename>` (the download mirror
layout); `licensed/` holds the CoNLL-2003 and Levow stand-ins; `manifest.json` maps resource ids
to paths. `lexicon.<lang>.tsv` has a header line `en target pos`.
"""


# --- entry point ----------------------------------------------------------------------------
def generate(out_dir: Path, params: dict | None, seed: int, workers: int = 1) -> dict:
    """Write the testbed under ``out_dir`` (replaced atomically); return {resource_id: relative path}.
    ``workers``: processes that generate its independent pieces (the same bytes with any number)."""
    out_dir = Path(out_dir)
    p = resolve_params(params)
    if out_dir.exists():
        if not (out_dir / "manifest.json").exists() and any(out_dir.iterdir()):
            raise FileExistsError(f"{out_dir} exists and is not a testbed directory; not replacing it")
        shutil.rmtree(out_dir)
    with atomic_path(out_dir) as tmp:
        shutil.rmtree(tmp, ignore_errors=True)     # leftovers of a killed run
        tmp.mkdir(parents=True)
        _write_all(Writer(tmp), p, seed, workers)
    manifest = json.loads((out_dir / "manifest.json").read_text())
    return manifest["files"]


def fasttext_vec(sentences: list[list[str]], dim: int, epoch: int) -> bytes:
    """Skip-gram vectors trained by fastText itself on tokenised sentences, in the text format of
    the paper's ``wiki.xx.vec`` (rows by decreasing frequency); trained by
    ``xling.analysis.fasttext`` in a process of its own (see there why), on one thread: the same
    bytes every run."""
    import tempfile

    from xling.analysis.fasttext import FastTextSettings, train_vectors

    # fastText's defaults but a small corpus' minCount 2 and a small hash table
    settings = FastTextSettings(dim=dim, epochs=epoch, min_count=2, window=5, negatives=5, minn=3, maxn=6,
                                bucket=100_000, lr=0.05)
    with tempfile.TemporaryDirectory() as tmp:
        text, out = Path(tmp) / "text.txt", Path(tmp) / "wiki.vec"
        text.write_text("".join(" ".join(s) + "\n" for s in sentences), encoding="utf-8")
        train_vectors(text, out, settings)
        return out.read_bytes()


# Each piece draws from its own string-seeded generators, so the pieces are independent: a pool
# of processes computes them in any order and the files are the same bytes as one process's.
# A piece returns (resource id or None, path under the mirror root, bytes) triples.
def _mirrored(rid: str, basename: str, data: bytes) -> tuple[str, str, bytes]:
    # the download stage maps https://<host>/<path> to <mirror>/<host>/<path>
    return rid, f"{HOST}/{rid}/{basename}", data


def _wiki_piece(lex: Lexicon, p: dict, seed: int, lang: str) -> list:
    sentences: list[list[str]] = []
    dump = wiki_dump(lang, lex, seed, p["wiki_sentences"], sentences)
    return [_mirrored(f"wiki_{lang}", f"{lang}wiki-{WIKI_DATE}-pages-articles.xml.bz2", dump),
            _mirrored(f"fasttext_{lang}", f"wiki.{lang}.vec",
                      fasttext_vec(sentences, p["fasttext_dim"], p["fasttext_epoch"]))]


def _cc_piece(lex: Lexicon, p: dict, seed: int, lang: str) -> list:
    return [_mirrored(f"cc_{lang}", CC_FILES[lang], cc_file(lang, lex, seed, p["cc_sentences"]))]


def _nli_piece(lex: Lexicon, p: dict, seed: int) -> list:
    mnli, xnli = nli_files(lex, seed, p)
    return [_mirrored("multinli", "multinli_1.0.zip", mnli), _mirrored("xnli", "XNLI-1.0.zip", xnli)]


def _ud_piece(lex: Lexicon, p: dict, seed: int) -> list:
    return [_mirrored("ud", "ud-treebanks-v2.3.tgz", ud_tgz(lex, seed, p))]


def _wikiann_piece(lex: Lexicon, p: dict, seed: int) -> list:
    return [_mirrored("wikiann", "panx_dataset.tar", wikiann_tar(lex, seed, p))]


def _licensed_piece(lex: Lexicon, p: dict, seed: int) -> list:
    return ([("conll2003_en", f"licensed/conll2003/{n}", d) for n, d in conll2003_files(lex, seed, p).items()]
            + [("levow_zh", f"licensed/levow/{n}", d) for n, d in levow_files(lex, seed, p).items()])


def _dictionary_piece(lex: Lexicon, p: dict, seed: int) -> list:
    out = []
    for lang, (train, test) in muse_files(lex, seed, p["muse_test_fraction"]).items():
        out += [_mirrored(f"muse_en_{lang}_train", f"en-{lang}.0-5000.txt", train),
                _mirrored(f"muse_en_{lang}_test", f"en-{lang}.5000-6500.txt", test)]
    out.append(_mirrored("panlex", "panlex-20190601-csv.zip", panlex_zip(lex, seed)))
    return out + [(None, f"gold/{name}", data) for name, data in gold_files(lex, seed).items()]


def _tatoeba_piece(lex: Lexicon, p: dict, seed: int, lang: str) -> list:
    code = TATOEBA[lang]
    sents = parallel(lex, seed, f"tatoeba-{lang}", p["tatoeba"], ("en", lang), SHORT)
    return [_mirrored(f"tatoeba_{code}", f"tatoeba.{code}-eng.{code}",
                      "".join(s.text() + "\n" for s in sents[lang]).encode("utf-8")),
            _mirrored(f"tatoeba_{code}_eng", f"tatoeba.{code}-eng.eng",
                      "".join(s.text() + "\n" for s in sents["en"]).encode("utf-8"))]


def _15way_piece(lex: Lexicon, p: dict, seed: int) -> list:
    way = parallel(lex, seed, "15way", p["xnli_15way"], LANGS, paraphrase=True)
    cols = sorted(LANGS)
    rows = ["\t".join(cols) + "\n"] + ["\t".join(way[c][i].text() for c in cols) + "\n"
                                       for i in range(p["xnli_15way"])]
    return [_mirrored("xnli_15way", "XNLI-15way.zip",
                      A.zip_bytes({"XNLI-15way/xnli.15way.orig.tsv": "".join(rows).encode("utf-8")})),
            _mirrored("en_paraphrase", "xnli.15way.en_prime.txt",
                      "".join(s.text() + "\n" for s in way["en_prime"]).encode("utf-8"))]


def _pieces() -> list[tuple]:
    """(function, extra arguments), the slowest first so that a pool ends together."""
    return ([(_wiki_piece, (lang,)) for lang in LANGS] + [(_15way_piece, ())]
            + [(_cc_piece, (lang,)) for lang in CC_FILES]
            + [(piece, ()) for piece in (_nli_piece, _ud_piece, _wikiann_piece, _licensed_piece)]
            + [(_tatoeba_piece, (lang,)) for lang in TATOEBA] + [(_dictionary_piece, ())])


_POOL_LEXICON: Lexicon | None = None  # a pool worker's copy, inherited from the parent by fork


def _run_piece(fn, p: dict, seed: int, args: tuple) -> list:
    return fn(_POOL_LEXICON, p, seed, *args)


def _write_all(w: Writer, p: dict, seed: int, workers: int = 1) -> None:
    global _POOL_LEXICON
    lex = build_lexicon(seed)
    pieces = _pieces()
    if workers > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        _POOL_LEXICON = lex
        try:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                results = list(pool.map(_run_piece, *zip(*[(fn, p, seed, args) for fn, args in pieces])))
        finally:
            _POOL_LEXICON = None
    else:
        results = [fn(lex, p, seed, *args) for fn, args in pieces]
    for files in results:
        for rid, rel, data in files:
            w.put(rid, rel, data)
    # the licensed corpora are directories the config points at, not single downloads
    w.manifest["conll2003_en"] = "licensed/conll2003"
    w.manifest["levow_zh"] = "licensed/levow"
    # not synthetic: the aligner's real source release, so the demo builds fast_align offline
    w.mirror("fast_align_src", FAST_ALIGN_SOURCE.name, FAST_ALIGN_SOURCE.read_bytes())
    w.manifest["gold"] = "gold"
    meta = {"seed": seed, "params": p, "host": HOST, "files": dict(sorted(w.manifest.items()))}
    w.put(None, "manifest.json", (json.dumps(meta, indent=1, sort_keys=True) + "\n").encode())
