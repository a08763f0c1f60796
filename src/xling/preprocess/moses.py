"""XLM's tools/tokenize.sh through sacremoses, with exact fast paths.

XLM runs, per line: replace-unicode-punctuation | normalize-punctuation -l L |
remove-non-printing-char | tokenizer.perl -no-escape -l L. The equivalent sacremoses CLI chain is
``sacremoses -l L -j 1 -q normalize -p -c tokenize -x``. :class:`MosesPipeline` gives the same
output (tests compare it with that CLI) but is faster:

* normalisation: a line with none of the characters any normalisation rule reacts to skips the
  ~75 regex passes (it only gets control characters removed and is stripped); otherwise each
  rule runs only when the characters every match of it contains are in the text;
* tokenisation: everything before the non-breaking-prefix step of the Moses tokenizer acts on
  characters and their direct neighbours, so it is computed per whitespace-separated chunk
  (cached: words repeat) and the line-level steps run on the joined tokens. Lines where the
  decomposition could differ (quotes on both sides of one space: "x' 'y") take the plain
  sacremoses path;
* the non-breaking-prefix step uses precomputed sets (sacremoses rebuilds a set of every
  alphabetic Unicode character per test).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import regex

# Characters that some rule of MosesPunctNormalizer (replace_unicode_punct, the penn/unicode/
# French-quote/pseudo-space/quote-comma/number rules) needs to be present to change a line.
# ("," is not one: every comma rule also needs one of them.) tests/test_preprocess_moses.py
# compares with sacremoses on lines drawn from every character the rules mention.
_NORMALIZE_TRIGGERS = frozenset(
    "\r()%:;`'\"„“”–—´‘’‚…«»\u00a0º"
    "，。、∶：？《》）！（；」「０１２３４５６７８９．～━〈〉【】％"
)
_ESCAPED = frozenset("&|<>'\"[]")  # characters MosesTokenizer.escape_xml rewrites
_CONTROL = regex.compile(r"\p{C}")
_CHUNK_CACHE_MAX = 1_000_000  # entries per position class; cleared when full (bounded memory)


_ESCAPE_LITERALS = {"r": "\r", "n": "\n", "t": "\t"}


def _required_chars(pattern: str) -> str | None:
    """Characters every match of ``pattern`` contains (literals outside classes, not made
    optional by * or ?), or None when it has none or a construct this reader does not know:
    the normaliser's patterns are plain literals, groups, classes and \\d/\\s."""
    if pattern == " +":
        return "  "  # ' +' -> ' ' only changes a run of two or more spaces
    need, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            e = pattern[i + 1]
            i += 2
            if e in "dswDSW":
                if i < len(pattern) and pattern[i] in "*?+":
                    i += 1
                continue
            if e.isalnum() and e not in _ESCAPE_LITERALS:
                return None
            lit = _ESCAPE_LITERALS.get(e, e)
        elif c == "[":
            i = pattern.index("]", i + 2) + 1  # a class: no single required character
            if i < len(pattern) and pattern[i] in "*?":
                i += 1
            continue
        elif c in "()+":
            i += 1
            continue
        elif c in "|{}^$.*?":
            return None
        else:
            lit = c
            i += 1
        if i < len(pattern) and pattern[i] in "*?":
            i += 1  # optional: not required
            continue
        if not (lit.isascii() and lit.isalnum()) and lit != " ":
            need.append(lit)
    return "".join(dict.fromkeys(need)) or None


def lowercase_and_remove_accent(text: str) -> str:
    """XLM's tools/lowercase_and_remove_accent.py: lowercase, NFD, drop combining marks (Mn)."""
    text = unicodedata.normalize("NFD", text.lower())
    return "".join(c for c in text if unicodedata.category(c) != "Mn").lower()


class MosesPipeline:
    """replace-unicode-punct + normalize-punct + remove-non-printing + tokenize -no-escape."""

    def __init__(self, lang: str, normalize: bool = True, escape: bool = False):
        # imported here: sacremoses compiles its patterns on import, a tenth of a dry run, which
        # needs only the tokenizer's settings (xling.preprocess.tokenize)
        from sacremoses import MosesPunctNormalizer, MosesTokenizer

        self.lang = lang
        self.do_normalize = normalize
        self.escape = escape  # XLM tokenises with -no-escape; True reproduces the sacremoses CLI
        self.normalizer = MosesPunctNormalizer(
            lang, pre_replace_unicode_punct=True, post_remove_control_chars=True
        )
        n = self.normalizer
        self._norm_rules = [
            (re.compile(p), r, _required_chars(p))
            for p, r in list(n.REPLACE_UNICODE_PUNCTUATION) + list(n.substitutions)
        ]
        self.tok = MosesTokenizer(lang=lang)
        t = self.tok
        self._alpha = frozenset(t.IsAlpha)
        self._lower = frozenset(t.IsLower)
        self._nbp = frozenset(t.NONBREAKING_PREFIXES)
        self._numeric_only = frozenset(t.NUMERIC_ONLY_PREFIXES)
        if lang == "en":
            self._apostrophe = list(t.ENGLISH_SPECIFIC_APOSTROPHE)
        elif lang in ("fr", "it"):
            self._apostrophe = list(t.FR_IT_SPECIFIC_APOSTROPHE)
        else:
            self._apostrophe = [t.NON_SPECIFIC_APOSTROPHE]
        self._commas = [t.COMMA_SEPARATE_1, t.COMMA_SEPARATE_2, t.COMMA_SEPARATE_3]
        # one cache per chunk position: first / middle / last / only chunk of the line
        self._cache: tuple[dict, dict, dict, dict] = ({}, {}, {}, {})

    # -- normalisation ------------------------------------------------------------------------
    def normalize(self, line: str) -> str:
        """``line`` without its newline; normalised as normalize-punctuation.perl (and the
        sacremoses CLI) see it, newline included: rules like (\\.+)"(\\s*[^<]) match on it."""
        if "  " not in line and _NORMALIZE_TRIGGERS.isdisjoint(line):
            return _CONTROL.sub("", line).strip()
        # MosesPunctNormalizer.normalize, skipping each rule whose required characters are
        # absent from the text at that point (a regex pass that cannot match changes nothing)
        text = line + "\n"
        for regexp, sub, need in self._norm_rules:
            if need is None or (need in text if len(need) == 1 or need == "  "
                                else all(c in text for c in need)):
                text = regexp.sub(sub, text)
        return _CONTROL.sub("", text).strip()

    # -- tokenisation -------------------------------------------------------------------------
    def _char_steps(self, text: str) -> str:
        """Moses tokenizer steps before the non-breaking-prefix step (all character-local)."""
        t = self.tok
        regexp, sub = t.PAD_NOT_ISALNUM
        text = regexp.sub(sub, text)
        text = t.replace_multidots(text)
        for regexp, sub in self._commas:
            text = regexp.sub(sub, text)
        for regexp, sub in self._apostrophe:
            text = regexp.sub(sub, text)
        return text

    def _chunk_tokens(self, chunk: str, pos: int) -> tuple[str, ...]:
        cache = self._cache[pos]
        hit = cache.get(chunk)
        if hit is None:
            if chunk.isascii() and chunk.isalnum():
                hit = (chunk,)  # plain ASCII word: no rule before the prefix step applies
            else:
                # pad with the neighbouring space the chunk has inside the line: rules look at it
                padded = ("" if pos in (0, 3) else " ") + chunk + ("" if pos in (2, 3) else " ")
                hit = tuple(self._char_steps(padded).split())
            if len(cache) >= _CHUNK_CACHE_MAX:
                cache.clear()
            cache[chunk] = hit
        return hit

    def _nonbreaking(self, tokens: list[str]) -> list[str]:
        """sacremoses' handles_nonbreaking_prefixes with set lookups (same decisions)."""
        n = len(tokens)
        out = tokens
        for i, token in enumerate(tokens):
            if len(token) < 2 or token[-1] != ".":
                continue
            prefix = token[:-1]
            if (
                ("." in prefix and not self._alpha.isdisjoint(prefix))
                or (prefix in self._nbp and prefix not in self._numeric_only)
                or (i != n - 1 and tokens[i + 1][0] in self._lower)
            ):
                continue
            if prefix in self._numeric_only and i + 1 < n and tokens[i + 1][0] in "0123456789":
                continue
            if out is tokens:
                out = list(tokens)
            out[i] = prefix + " ."
        return out

    def tokenize(self, text: str) -> str:
        """== MosesTokenizer(lang).tokenize(text, return_str=True, escape=self.escape)."""
        text = self._tokenize_noescape(text)
        if self.escape and not _ESCAPED.isdisjoint(text):
            text = self.tok.escape_xml(text)
        return text

    def _tokenize_noescape(self, text: str) -> str:
        t = self.tok
        for regexp, sub in (t.DEDUPLICATE_SPACE, t.ASCII_JUNK):
            text = regexp.sub(sub, text)
        text = text.strip()
        if not text:
            return ""
        chunks = text.split(" ")
        # "x' 'y": both quotes' 3-character apostrophe rules want the one space between the
        # chunks, and the regex scan gives it to the left one only; take the plain path there
        if "' '" in text:
            return t.tokenize(text, return_str=True, escape=False)
        last = len(chunks) - 1
        tokens: list[str] = []
        for i, chunk in enumerate(chunks):
            pos = 3 if last == 0 else (0 if i == 0 else (2 if i == last else 1))
            tokens.extend(self._chunk_tokens(chunk, pos))
        # tokens are non-empty and space-free, so sacremoses' dedup + strip here is a no-op
        text = " ".join(self._nonbreaking(tokens))
        if text.endswith("'"):
            regexp, sub = t.TRAILING_DOT_APOSTROPHE
            text = regexp.sub(sub, text)
        if "MULTI" in text:
            text = t.restore_multidots(text)
        return text

    def __call__(self, line: str) -> str:
        if self.do_normalize:
            line = self.normalize(line)
        return self.tokenize(line)


@lru_cache(maxsize=16)
def moses_pipeline(lang: str, normalize: bool = True, escape: bool = False) -> MosesPipeline:
    return MosesPipeline(lang, normalize, escape)
