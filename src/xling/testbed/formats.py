"""Serialise realised sentences in the formats of the real resources."""

from __future__ import annotations

import json
import random
from xml.sax.saxutils import escape

from .tree import Sentence

# --- CoNLL-U (UD) ---------------------------------------------------------------------------


def conllu_block(sent: Sentence, sent_id: str) -> str:
    lines = [f"# sent_id = {sent_id}", f"# text = {sent.text()}"]
    ranges = {a: (b, f) for a, b, f in sent.mwts}
    for t in sent.tokens:
        if t.id in ranges:
            b, surface = ranges[t.id]
            last = sent.tokens[b - 1]
            misc = "SpaceAfter=No" if not last.space_after and b < len(sent.tokens) else "_"
            lines.append(f"{t.id}-{b}\t{surface}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
        in_range = any(a <= t.id <= b for a, b, _ in sent.mwts)
        # inside a multiword token, spacing belongs to the range line
        misc = "SpaceAfter=No" if (not t.space_after and not in_range and t.id < len(sent.tokens)) else "_"
        if sent.lang == "zh" and t.id == len(sent.tokens):
            misc = "SpaceAfter=No"     # as in UD_Chinese-GSD, every token carries it
        lines.append("\t".join([str(t.id), t.form, t.lemma, t.upos, "_", t.feats or "_",
                                str(t.head), t.deprel, "_", misc]))
    return "\n".join(lines) + "\n\n"


# --- NER ------------------------------------------------------------------------------------


def panx_block(sent: Sentence, lang: str) -> str:
    """XTREME panx: ``lang:word<TAB>BIO``, blank line between sentences."""
    return "".join(f"{lang}:{w}\t{tag}\n" for w, tag in ner_words(sent)) + "\n"


def ner_words(sent: Sentence) -> list[tuple[str, str]]:
    """Orthographic words with BIO tags (a multiword token takes its first word's tag)."""
    return [(surface, t.ner) for surface, t in sent.surface()]


_PTB = {"DET": "DT", "ADP": "IN", "ADJ": "JJ", "ADV": "RB", "NUM": "CD", "CCONJ": "CC",
        "PRON": "WP", "PART": "RB", "AUX": "MD", "PROPN": "NNP"}


_PTB_AUX = {"is": "VBZ", "are": "VBP", "was": "VBD", "were": "VBD", "be": "VB", "does": "VBZ",
            "do": "VBP", "did": "VBD", "will": "MD"}


def _ptb_tag(t) -> str:
    if t.upos == "NOUN":
        return "NNS" if "Plur" in t.feats else "NN"
    if t.upos == "VERB":
        if "Fin" in t.feats:
            return "VBD" if t.form.endswith("ed") else ("VBZ" if t.form.endswith("s") else "VBP")
        return "VB"
    if t.upos == "AUX":
        return _PTB_AUX.get(t.form.lower(), "MD")
    if t.upos == "PUNCT":
        return t.form if t.form in ".," else "."
    return _PTB.get(t.upos, "NN")


def _chunk(upos: str) -> str:
    if upos in ("DET", "ADJ", "NOUN", "PROPN", "NUM", "PRON"):
        return "NP"
    if upos in ("VERB", "AUX", "PART"):
        return "VP"
    if upos == "ADP":
        return "PP"
    if upos == "ADV":
        return "ADVP"
    return ""


def iob1(tags: list[str]) -> list[str]:
    """BIO -> IOB1: B- only where a chunk directly follows another of the same type."""
    out = []
    for i, tag in enumerate(tags):
        if tag == "O":
            out.append("O")
            continue
        kind = tag[2:]
        prev = tags[i - 1] if i else "O"
        if tag.startswith("B-") and prev != "O" and prev[2:] == kind:
            out.append(f"B-{kind}")
        else:
            out.append(f"I-{kind}")
    return out


def conll2003_block(sent: Sentence) -> str:
    toks = sent.tokens
    ner = iob1([t.ner for t in toks])
    chunks_bio, prev = [], None
    for t in toks:
        c = _chunk(t.upos)
        # a new chunk starts at a head-changing boundary; approximate: when the phrase type changes
        chunks_bio.append("O" if not c else (f"I-{c}" if c == prev else f"B-{c}"))
        prev = c or None
    chunks = iob1(chunks_bio)
    return "".join(f"{t.form} {_ptb_tag(t)} {ch} {tag}\n" for t, ch, tag in zip(toks, chunks, ner)) + "\n"


def levow_block(sent: Sentence) -> str:
    """Character-level BIO for the zh-like language (SIGHAN 2006 / MSRA layout)."""
    lines = []
    for t in sent.tokens:
        for k, ch in enumerate(t.form):
            if t.ner == "O":
                tag = "O"
            elif k == 0 and t.ner.startswith("B-"):
                tag = t.ner
            else:
                tag = "I-" + t.ner[2:]
            lines.append(f"{ch}\t{tag}\n")
    return "".join(lines) + "\n"


# --- parses for MultiNLI / XNLI ------------------------------------------------------------


def _children(sent: Sentence) -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {t.id: [] for t in sent.tokens}
    kids[0] = []
    for t in sent.tokens:
        kids[t.head].append(t.id)
    return kids


_PHRASE = {"NOUN": "NP", "PROPN": "NP", "PRON": "NP", "VERB": "VP", "ADJ": "ADJP", "ADV": "ADVP",
           "NUM": "QP", "ADP": "PP"}


def constituency(sent: Sentence) -> tuple[str, str]:
    """(binary parse, labelled parse) read off the dependency tree (each head's span a phrase)."""
    kids = _children(sent)
    toks = {t.id: t for t in sent.tokens}

    def span_items(h: int) -> list[int]:
        return sorted(kids[h] + [h])

    def binary(h: int) -> str:
        items = [binary(i) if i != h and kids[i] else toks[i].form for i in span_items(h)]
        while len(items) > 1:          # right-branching binarisation
            items = items[:-2] + [f"( {items[-2]} {items[-1]} )"]
        return items[0]

    def labelled(h: int) -> str:
        parts = []
        for i in span_items(h):
            if i != h and kids[i]:
                parts.append(labelled(i))
            else:
                parts.append(f"({_ptb_tag(toks[i])} {toks[i].form})")
        return f"({_PHRASE.get(toks[h].upos, 'X')} {' '.join(parts)})"

    root = kids[0][0]
    return binary(root), f"(ROOT (S {labelled(root)}))"


def multinli_line(p: Sentence, h: Sentence, label: str, pair_id: str, prompt_id: str, genre: str,
                  rng: random.Random) -> str:
    b1, p1 = constituency(p)
    b2, p2 = constituency(h)
    row = {"annotator_labels": [label] * rng.choice((1, 5)), "genre": genre, "gold_label": label,
           "pairID": pair_id, "promptID": prompt_id, "sentence1": p.text(),
           "sentence1_binary_parse": b1, "sentence1_parse": p1, "sentence2": h.text(),
           "sentence2_binary_parse": b2, "sentence2_parse": p2}
    return json.dumps(row, ensure_ascii=False) + "\n"


XNLI_HEADER = ("language gold_label sentence1_binary_parse sentence2_binary_parse sentence1_parse "
               "sentence2_parse sentence1 sentence2 promptID pairID genre label1 label2 label3 "
               "label4 label5 sentence1_tokenized sentence2_tokenized match").split()


def xnli_row(lang: str, p: Sentence, h: Sentence, label: str, prompt_id: int, pair_id: int,
             genre: str) -> str:
    clean = lambda s: s.replace("\t", " ")  # noqa: E731  (fields are tab-separated)
    row = [lang, label, "", "", "", "", clean(p.text()), clean(h.text()), str(prompt_id),
           str(pair_id), genre, label, label, label, label, label, " ".join(p.surface_tokens()),
           " ".join(h.surface_tokens()), "True"]
    return "\t".join(row) + "\n"


# --- MediaWiki export -----------------------------------------------------------------------

WIKI_HEAD = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.10/ http://www.mediawiki.org/xml/export-0.10.xsd" version="0.10" xml:lang="{lang}">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>{lang}wiki</dbname>
    <base>https://{lang}.wikipedia.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.34.0-wmf.10</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="-2" case="first-letter">Media</namespace>
      <namespace key="-1" case="first-letter">Special</namespace>
      <namespace key="0" case="first-letter" />
      <namespace key="1" case="first-letter">Talk</namespace>
      <namespace key="10" case="first-letter">Template</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
"""


def wiki_page(title: str, page_id: int, rev_id: int, text: str, ns: int = 0) -> str:
    return (f"  <page>\n    <title>{escape(title)}</title>\n    <ns>{ns}</ns>\n    <id>{page_id}</id>\n"
            f"    <revision>\n      <id>{rev_id}</id>\n      <parentid>{rev_id - 1}</parentid>\n"
            f"      <timestamp>2019-06-30T12:00:00Z</timestamp>\n"
            f"      <contributor>\n        <username>Testbed</username>\n        <id>1</id>\n"
            f"      </contributor>\n      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
            f"      <text xml:space=\"preserve\" bytes=\"{len(text.encode())}\">{escape(text)}</text>\n"
            f"      <sha1>0</sha1>\n    </revision>\n  </page>\n")
