"""Weighted bilingual dictionaries: the `src<TAB>tgt<TAB>weight` TSV files, the MUSE format, and
the phrase index code-switching looks words up in."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Callable, Mapping

from xling.errors import InputError
from xling.io import atomic_write

Pairs = dict[tuple[str, str], float]
# what is read: a PanLex dictionary's weights are counts
PairsIn = Mapping[tuple[str, str], float]


def read_muse(path: Path) -> Pairs:
    """MUSE ground-truth dictionaries: `src tgt` per line, whitespace separated; every listed
    translation gets weight 1 (a repeated line adds up)."""
    pairs: Pairs = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 2:
                raise InputError(path, n, "two whitespace-separated fields 'source target'", line.rstrip("\n"))
            pairs[(fields[0], fields[1])] = pairs.get((fields[0], fields[1]), 0) + 1
    return pairs


BatchTokenizer = Callable[[list[str]], list[str]]


def tokenize_pairs(pairs: PairsIn, src_tok: BatchTokenizer | None, tgt_tok: BatchTokenizer | None) -> Pairs:
    """Tokenise both sides like the corpus (so "l'homme" matches the corpus' "l' homme", and
    Chinese entries are segmented as the corpus is); a tokeniser maps a list of texts to their
    tokenised forms in one call (one segmenter run). Pairs that become the same add up."""

    def table(texts: set[str], tok: BatchTokenizer | None) -> dict[str, str]:
        texts_ = sorted(texts)
        done = tok(texts_) if tok else texts_
        if len(done) != len(texts_):
            raise RuntimeError(f"tokeniser returned {len(done)} lines for {len(texts_)}")
        return {t: " ".join(d.split()) for t, d in zip(texts_, done)}

    src = table({a for a, _ in pairs}, src_tok)
    tgt = table({b for _, b in pairs}, tgt_tok)
    out: Pairs = {}
    for (a, b), w in pairs.items():
        a2, b2 = src[a], tgt[b]
        if a2 and b2:
            out[(a2, b2)] = out.get((a2, b2), 0) + w
    return out


def _fmt(w: float) -> str:
    return str(int(w)) if float(w).is_integer() else repr(float(w))


def write_dict(pairs: PairsIn, path: Path, reverse: bool = False) -> int:
    """Write `src\\ttgt\\tweight` lines sorted by source, then weight (high first), then target;
    `reverse` swaps the sides (the other direction of the same dictionary)."""
    rows = [((b, a) if reverse else (a, b), w) for (a, b), w in pairs.items()]
    rows.sort(key=lambda r: (r[0][0], -r[1], r[0][1]))
    with atomic_write(path) as fh:
        for (a, b), w in rows:
            fh.write(f"{a}\t{b}\t{_fmt(w)}\n")
    return len(rows)


def read_dict(path: Path) -> Pairs:
    pairs: Pairs = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 3 or not fields[0].strip() or not fields[1].strip():
                raise InputError(path, n, "'source<TAB>target<TAB>weight'", line.rstrip("\n"))
            try:
                w = float(fields[2])
            except ValueError:
                raise InputError(path, n, "a numeric weight in the third field", fields[2])
            pairs[(fields[0], fields[1])] = pairs.get((fields[0], fields[1]), 0) + w
    return pairs


class PhraseDictionary:
    """Source phrases (tuples of words) -> their translations (tuples of words) and weights.

    Only positive weights are kept: a translation with weight 0 could never be sampled.
    With `lowercase_fallback`, a phrase whose first word is capitalised and not in the
    dictionary as written is looked up with that word lowercased (sentence-initial words)."""

    def __init__(self, pairs: Pairs, max_phrase_words: int = 4, lowercase_fallback: bool = False):
        table: dict[tuple[str, ...], dict[tuple[str, ...], float]] = defaultdict(dict)
        for (a, b), w in pairs.items():
            src, tgt = tuple(a.split()), tuple(b.split())
            if w > 0 and src and tgt and len(src) <= max_phrase_words:
                table[src][tgt] = table[src].get(tgt, 0) + w
        # sorted once so that sampling does not depend on the input's order
        self.entries = {
            src: (tuple(sorted(t)), tuple(t[x] for x in sorted(t))) for src, t in table.items()
        }
        self.max_len = max((len(s) for s in self.entries), default=0)
        self.lowercase_fallback = lowercase_fallback

    def __len__(self) -> int:
        return len(self.entries)

    def longest_match(self, words: list[str], start: int, end: int) -> tuple[int, tuple[str, ...] | None]:
        """(k, entry) for the longest source phrase matching words[start:start+k], start+k <= end;
        (0, None) when none."""
        first = words[start] if start < end else ""
        lower = first.lower() if self.lowercase_fallback and first != first.lower() else None
        for k in range(min(self.max_len, end - start), 0, -1):
            key = tuple(words[start:start + k])
            if key in self.entries:
                return k, key
            if lower is not None:
                key = (lower,) + key[1:]
                if key in self.entries:
                    return k, key
        return 0, None

    def translations(self, entry: tuple[str, ...]):
        return self.entries[entry]
