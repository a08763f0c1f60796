"""The novel's text of an ELTeC TEI file: one text unit (paragraph, verse line, heading...) a line.

Only the ``<body>`` is read: never the ``<teiHeader>``, ``<front>`` or ``<back>`` (title pages,
prefaces, endnotes). The body is ``TEI/text/body``; two of ELTeC-rus' level-0 files
(003_kazaki, 011_gimnazisty) have it directly under ``<TEI>``, which is read the same way.

What the real files hold (a count of the elements under ``<body>`` in the 24 eng, 24 fra, 24 deu
and 20 rus files of ``shared/data/eltec``, and how each is taken):

- units, each its own line: ``<p>`` (eng 51,766, fra 53,759, deu 33,877, rus 61,452), ``<l>``
  (verse lines, 3,369; deu has 366 inside a ``<p>``: each its own line), ``<head>`` (2,922),
  ``<trailer>`` (50: "THE END.", "Paris, mai 1842."; kept, like a heading), and ``<quote>`` or
  ``<label>`` where they stand as a block (directly in ``<div>``, ``<body>`` or a block
  ``<quote>``: eng 184 quotes of verse or letters, "Manchester Song."); inside a paragraph they are
  inline (eng 165 quotes: "beautiful Paris, evil-hearted Paris,", 168 labels) and stay in it;
- a unit is the text between two block boundaries, so text of the level-0 files that stands in a
  ``<div>`` outside any ``<p>`` (rus: 43 runs after a ``</p>`` in 002_asya, "ЧАСТЬ ПЕРВАЯ" in
  015_anna-karenina) is a unit of its own, and a ``<p>`` left open inside another (rus: 283) ends
  the text before it;
- inline, their text kept: ``<hi>`` (4,369), ``<emph>`` (745), ``<foreign>`` (686), ``<title>``
  (83), ``<corr>`` (52, the corrected reading), ``<ref>`` other than a note's anchor (none in a
  body today);
- taken out with their text, the text after them kept: ``<note>`` (none in a body: ELTeC moves
  notes to ``<back>``) and ``<ref target="#...">``, the anchor of such a note (72: "[1]", "(1)",
  "*");
- taken out, empty: ``<pb/>`` (16,289), ``<milestone/>`` (171, all between paragraphs),
  ``<gap/>`` (45, figures and omissions), comments and processing instructions (deu's 366 comments
  hold "milestone hi_start", fra's 29 commented-out sentences). No file has ``<lb/>``.

None of the taken-out elements splits a unit or glues words: the text before and after them is
joined as it stands, so "Neidlosig<pb/>keit" gives "Neidlosigkeit" and "any <pb/> degree" gives
"any degree" (whitespace inside a unit, no-break spaces included, becomes one space). The markup
cannot tell a word-internal break without whitespace from one between words: DEU069 has 236
``<pb/>`` with no whitespace on either side, some inside a word ("Schließ<pb/>lich"), most between
words ("Dunkel<pb/>sich", which gives "Dunkelsich"); TEI's ``break="no"`` marks neither here.

Any other element in a body is an error naming its line (``InputError``): an element this
reader does not know could be a running header or an apparatus whose text must not enter the
corpus. So are a root other than TEI's ``<TEI>``, XML that is not well-formed (the parser's line)
and a TEI file without a ``<body>`` (ELTeC-rus' 008_geroi-nashego-vremeni has its chapters
directly in ``<text>``, with no ``<body>``: the reader refuses it).

Parser: lxml's ``iterparse`` (libxml2), streamed in bounded memory (each element is cleared once
its text is out), rather than the standard library's: lxml gives every element's source line
for the errors above, and the standard library's ``iterparse`` gives none. lxml comes with
sacrebleu already; it is pinned in pyproject.toml now that we import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from lxml import etree

from xling.errors import InputError
from xling.io import atomic_write

TEI_NS = "http://www.tei-c.org/ns/1.0"
_TEI = f"{{{TEI_NS}}}"

BLOCKS = frozenset({"body", "div", "p", "l", "head", "trailer"})
# blocks where they stand directly in a container, inline inside a unit
BLOCK_IN_CONTAINER = frozenset({"quote", "label"})
CONTAINERS = frozenset({"body", "div", "quote"})
INLINE = frozenset({"hi", "emph", "foreign", "title", "corr", "ref"})
DROPPED = frozenset({"note", "pb", "milestone", "gap"})
KNOWN = BLOCKS | BLOCK_IN_CONTAINER | INLINE | DROPPED


def _local(tag: str) -> str | None:
    """The TEI element's local name; None for an element of another namespace."""
    return tag[len(_TEI):] if tag.startswith(_TEI) else None


def _is_dropped(name: str, elem) -> bool:
    return name in DROPPED or (name == "ref" and elem.get("target", "").startswith("#"))


@dataclass
class _Walk:
    """Where the parser stands: the open elements' local names, whether each is a boundary, how
    deep inside a dropped element it is, and the text of the unit being read."""

    path: Path
    names: list[str | None] = field(default_factory=list)
    boundaries: list[bool] = field(default_factory=list)
    body_depth: int = 0  # open elements from <body> down (0: outside the body)
    dropped_depth: int = 0
    bodies: int = 0
    text_line: int | None = None
    buffer: list[str] = field(default_factory=list)

    def flush(self) -> str | None:
        unit = " ".join("".join(self.buffer).split())
        self.buffer.clear()
        return unit or None

    def keep(self, text: str | None) -> None:
        if text and self.body_depth and not self.dropped_depth:
            self.buffer.append(text)

    def start(self, elem) -> str | None:
        """Open ``elem``; returns the unit it ends, if it is a boundary."""
        name = _local(elem.tag)
        boundary = False
        if self.body_depth:
            self.body_depth += 1
            if self.dropped_depth or _is_dropped(name or "", elem):
                self.dropped_depth += 1
            elif name not in KNOWN:
                raise InputError(self.path, elem.sourceline,
                                 f"a body element this reader knows ({', '.join(sorted(KNOWN))})", elem.tag)
            else:
                boundary = name in BLOCKS or (name in BLOCK_IN_CONTAINER and self.names[-1] in CONTAINERS)
        elif name == "body" and self.names in (["TEI", "text"], ["TEI"]):
            self.body_depth, self.bodies, boundary = 1, self.bodies + 1, True
        elif name == "text" and self.names == ["TEI"]:
            self.text_line = elem.sourceline
        self.names.append(name)
        self.boundaries.append(boundary)
        return self.flush() if boundary else None

    def end(self) -> str | None:
        """Close the innermost element; returns the unit it ends, if it is a boundary."""
        self.names.pop()
        boundary = self.boundaries.pop()
        if self.body_depth:
            self.body_depth -= 1
            if self.dropped_depth:
                self.dropped_depth -= 1
        return self.flush() if boundary else None


def _events(path: Path):
    """lxml's events, with XML errors as InputError at the parser's line."""
    events = etree.iterparse(str(path), events=("start", "end", "comment", "pi"),
                             resolve_entities=False, no_network=True)
    try:
        yield from events
    except etree.XMLSyntaxError as e:
        raise InputError(path, e.lineno or None, "well-formed XML", e.msg) from None


def _check_root(path: Path, elem) -> None:
    if elem.tag != f"{_TEI}TEI":
        raise InputError(path, elem.sourceline, f"a TEI document: root element <TEI> in the namespace {TEI_NS}",
                         f"<{elem.tag}>")


def _forget(elem) -> None:
    """Free what was read: the element's content (its text is out; its tail is read at the next
    event) and the siblings before it."""
    elem.clear(keep_tail=True)
    parent = elem.getparent()
    if parent is not None:
        while elem.getprevious() is not None:
            del parent[0]


def tei_units(path: str | Path) -> Iterator[str]:
    """The units of the novel's text in ``path`` (an ELTeC TEI file), in document order, each
    whitespace-normalised and non-empty. Streams: memory stays bounded by the tree's depth."""
    path = Path(path)
    walk = _Walk(path)
    # A node's text is complete once the parser reports the next event: it is kept then, under
    # the state that held where it stands (inside the node for .text, after it for .tail).
    pending = None
    for event, elem in _events(path):
        if pending is not None:
            walk.keep(pending)
        if event == "start":
            if not walk.names:
                _check_root(path, elem)
            unit = walk.start(elem)
            pending = elem.text
        elif event == "end":
            unit = walk.end()
            pending = elem.tail
            _forget(elem)
        else:  # a comment or a processing instruction: only what follows it is text
            unit, pending = None, elem.tail
        if unit is not None:
            yield unit
    if not walk.bodies:
        raise InputError(path, walk.text_line, "a <body> in <text> (the novel's text)", "no <body>")


def extract_tei(paths: Sequence[str | Path], out: str | Path) -> dict:
    """Write the units of every file of ``paths``, in that order, to ``out`` (atomically: a bad
    file leaves no output). Returns the units and words of each file and in all, for the log."""
    files = []
    with atomic_write(out) as fh:
        for path in paths:
            units = words = 0
            for unit in tei_units(path):
                fh.write(unit + "\n")
                units += 1
                words += len(unit.split())
            files.append({"file": str(path), "units": units, "words": words})
    return {"files": files, "units": sum(f["units"] for f in files), "words": sum(f["words"] for f in files)}


def tei_sentences(paths: Sequence[str | Path], out: str | Path, lang: str, splitter: str) -> dict:
    """The novels of ``paths`` as a corpus: each file's units (:func:`tei_units`) cut into one
    sentence a line by ``splitter`` (xling.preprocess.sentences) for ``lang``, written atomically.
    Returns the units, sentences and words of each file and in all, for the job's log."""
    from xling.preprocess.sentences import split_units

    files = []
    with atomic_write(out) as fh:
        for path in paths:
            units = list(tei_units(path))  # one novel: a megabyte or so
            sentences = list(split_units(units, lang, splitter))
            fh.writelines(s + "\n" for s in sentences)
            files.append({"file": str(path), "units": len(units), "sentences": len(sentences),
                          "words": sum(len(s.split()) for s in sentences)})
    return {"files": files, **{k: sum(f[k] for f in files) for k in ("units", "sentences", "words")}}
