"""From task text to encoder input ids: Moses tokenisation (as pretraining), the setting's BPE, and
the positions of each word's first subword."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from xling.model.encoder import Vocabulary
from xling.preprocess.tokenize import LineTokenizer, TokenizeSettings

WordsToSubwords = Callable[[list[str]], list[list[str]]]


def line_and_word_tokenizers(settings: TokenizeSettings):
    """Tokenisers with the pretraining corpus's settings (xling.preprocess, XLM's tokenize.sh).

    Returns ``(lines, word)``: ``lines(list[str]) -> list[list[str]]`` for raw sentences (XNLI; one
    segmenter call per batch), ``word(str) -> list[str]`` for an already given word (NER, UD): Moses
    for space-delimited languages; a segmented language's words are not segmented again, only
    normalised as the corpus was after its segmenter."""
    line_tok = LineTokenizer(settings)

    def lines(texts: list[str]) -> list[list[str]]:
        return [t.split() for t in line_tok.batch(texts)]

    return lines, line_tok.given_word


@dataclass
class Encoded:
    ids: list[int]  # <s> subwords </s>
    first: list[int]  # position of each kept word's first subword
    truncated: bool


class WordEncoder:
    """Maps words to dictionary ids through a ``words_to_subwords`` function (xling.bpe)."""

    def __init__(
        self,
        dictionary: Vocabulary,
        words_to_subwords: WordsToSubwords,
        max_seq_len: int,
        split_word: Callable[[str], list[str]] | None = None,
    ):
        """``split_word``: re-tokenises one given word as the pretraining corpus was (Moses), so a
        treebank word maps to the same pieces it had in pretraining; its pieces stay one word."""
        if max_seq_len < 3:
            raise ValueError("max_seq_len must leave room for <s>, one subword and </s>")
        self.dictionary = dictionary
        self.words_to_subwords = words_to_subwords
        self.max_seq_len = max_seq_len
        self.split_word = split_word
        self._cache: dict[str, list[str]] = {}

    def _split(self, word: str) -> list[str]:
        if self.split_word is None:
            return [word]
        if word not in self._cache:
            self._cache[word] = self.split_word(word) or [word]
        return self._cache[word]

    def subword_ids(self, words: Sequence[str]) -> list[list[int]]:
        groups = [self._split(w) for w in words]
        flat = [p for g in groups for p in g]
        sub = self.words_to_subwords(flat) if flat else []
        if len(sub) != len(flat):
            raise ValueError(f"words_to_subwords returned {len(sub)} entries for {len(flat)} words")
        pieces, k = [], 0
        for g in groups:
            pieces.append([s for ws in sub[k : k + len(g)] for s in ws])
            k += len(g)
        # A word the BPE maps to nothing (e.g. only spaces) still needs a position: <unk>.
        return [[self.dictionary.index(p) for p in ws] or [self.dictionary.unk()] for ws in pieces]

    def encode_words(self, words: Sequence[str]) -> Encoded:
        """One sequence for a word-level task; words that do not fit are dropped (``first`` shorter)."""
        d = self.dictionary
        ids, first = [d.bos()], []
        budget = self.max_seq_len - 1  # keep room for </s>
        truncated = False
        for sub in self.subword_ids(words):
            if len(ids) >= budget:
                truncated = True
                break
            first.append(len(ids))
            ids.extend(sub[: budget - len(ids)])
        ids.append(d.eos())
        return Encoded(ids, first, truncated)

    def encode_pair(self, first_words: Sequence[str], second_words: Sequence[str]) -> Encoded:
        """<s> A </s> B </s> for sentence-pair classification, cut at max_seq_len."""
        d = self.dictionary
        a = [i for s in self.subword_ids(first_words) for i in s]
        b = [i for s in self.subword_ids(second_words) for i in s]
        ids = [d.bos(), *a, d.eos(), *b, d.eos()]
        truncated = len(ids) > self.max_seq_len
        if truncated:
            ids = ids[: self.max_seq_len - 1] + [d.eos()]
        return Encoded(ids, [], truncated)
