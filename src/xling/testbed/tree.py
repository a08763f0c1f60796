"""Dependency trees built head-first and linearised into CoNLL-U-like tokens.

Realisers build a ``Node`` per word with its dependents already split into those before (``left``)
and after (``right``) the head, in order. Linearising therefore always gives a projective,
single-rooted tree: reordering in a language moves whole subtrees, never breaks them."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Node:
    form: str
    lemma: str
    upos: str
    rel: str = "dep"
    feats: str = "_"
    left: list["Node"] = field(default_factory=list)
    right: list["Node"] = field(default_factory=list)
    ner: str | None = None        # "B-PER", "I-PER", ...
    space: bool = True            # space after this word in running text


@dataclass
class Token:
    id: int
    form: str
    lemma: str
    upos: str
    feats: str
    head: int
    deprel: str
    space_after: bool
    ner: str = "O"


@dataclass
class Sentence:
    tokens: list[Token]
    mwts: list[tuple[int, int, str]] = field(default_factory=list)   # (first id, last id, surface)
    lang: str = ""

    def text(self, decorate=None) -> str:
        """Running text: multiword tokens shown by their surface form, spaces from SpaceAfter.

        ``decorate(token, surface)`` may wrap a word in markup (wikitext links)."""
        out, i, n = [], 0, len(self.tokens)
        starts = {a: (b, f) for a, b, f in self.mwts}
        while i < n:
            tok = self.tokens[i]
            if tok.id in starts:
                last, surface = starts[tok.id]
                out.append(surface)
                i = last          # ids are 1-based: tokens[last] is the word after the range
                if self.tokens[last - 1].space_after and i < n:
                    out.append(" ")
                continue
            out.append(decorate(tok, tok.form) if decorate else tok.form)
            if tok.space_after and i < n - 1:
                out.append(" ")
            i += 1
        return "".join(out).strip()

    def words(self) -> list[str]:
        return [t.form for t in self.tokens]

    def surface_tokens(self) -> list[str]:
        """Orthographic tokens (multiword tokens as one), as a tokeniser would see them."""
        return [surface for surface, _ in self.surface()]

    def surface(self) -> list[tuple[str, Token]]:
        """Each orthographic token (a multiword token as one) with the first word it stands for."""
        out, skip_to = [], 0
        starts = {a: (b, f) for a, b, f in self.mwts}
        for tok in self.tokens:
            if tok.id <= skip_to:
                continue
            if tok.id in starts:
                skip_to, surface = starts[tok.id]
                out.append((surface, tok))
            else:
                out.append((tok.form, tok))
        return out


def linearise(root: Node, lang: str, no_space: bool = False) -> Sentence:
    order: list[tuple[Node, Node | None]] = []

    def walk(node: Node, parent: Node | None) -> None:
        for child in node.left:
            walk(child, node)
        order.append((node, parent))
        for child in node.right:
            walk(child, node)

    walk(root, None)
    # a comma directly before another punctuation mark, or opening the sentence, is dropped
    kept: list[tuple[Node, Node | None]] = []
    for i, (node, parent) in enumerate(order):
        if node.upos == "PUNCT" and node.form in (",", "，"):
            nxt = order[i + 1][0] if i + 1 < len(order) else None
            if not kept or nxt is None or nxt.upos == "PUNCT":
                continue
        kept.append((node, parent))
    index = {id(node): k + 1 for k, (node, _) in enumerate(kept)}
    tokens = []
    for k, (node, parent) in enumerate(kept):
        head = index[id(parent)] if parent is not None else 0
        nxt = kept[k + 1][0] if k + 1 < len(kept) else None
        space = node.space and not no_space
        if nxt is not None and nxt.upos == "PUNCT" and nxt.form in ".,?!:;":
            space = False
        if nxt is None:
            space = False
        tokens.append(Token(k + 1, node.form, node.lemma, node.upos, node.feats, head, node.rel,
                            space, node.ner or "O"))
    return Sentence(tokens, [], lang)


def drop_leaves(sent: Sentence, ids: list[int]) -> None:
    """Remove dependent-less words and renumber (only before multiword tokens are added)."""
    gone = set(ids)
    assert not any(t.head in gone for t in sent.tokens) and not sent.mwts
    kept = [t for t in sent.tokens if t.id not in gone]
    new_id = {t.id: k + 1 for k, t in enumerate(kept)}
    new_id[0] = 0
    for t in kept:
        t.id, t.head = new_id[t.id], new_id[t.head]
    sent.tokens = kept


def check_tree(sent: Sentence) -> list[str]:
    """Problems with a tree (empty list = well-formed): one root, heads in range, no cycles."""
    problems = []
    n = len(sent.tokens)
    heads = {t.id: t.head for t in sent.tokens}
    roots = [t for t in sent.tokens if t.head == 0]
    if len(roots) != 1:
        problems.append(f"{len(roots)} roots")
    for t in sent.tokens:
        if not 0 <= t.head <= n or t.head == t.id:
            problems.append(f"token {t.id}: head {t.head} out of range")
        if (t.head == 0) != (t.deprel == "root"):
            problems.append(f"token {t.id}: deprel {t.deprel} with head {t.head}")
    for t in sent.tokens:
        seen, cur = set(), t.id
        while cur != 0 and cur in heads:
            if cur in seen:
                problems.append(f"cycle through {t.id}")
                break
            seen.add(cur)
            cur = heads[cur]
    return problems
