"""One raw line -> one tokenised line, per language settings (XLM's tokenize.sh).

Languages with a segmenter are segmented first, never Moses-tokenised. Chinese (jieba, stanford) is
then normalised like every language (replace unicode punctuation, normalise punctuation, remove
non-printing characters): XLM runs ``segment.sh pku | replace-unicode-punctuation.perl |
normalize-punctuation.perl -l zh | remove-non-printing-char.perl``. Thai (pythainlp) only loses its
non-printing characters, and is segmented as it comes: XLM runs ``segment_th.py |
remove-non-printing-char.perl``. The others go through the whole Moses chain of
:mod:`xling.preprocess.moses`. ``lowercase_and_remove_accent`` (optional) comes last.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Mapping

import regex

from xling.preprocess.moses import lowercase_and_remove_accent, moses_pipeline
from xling.preprocess.segment import segmenter as make_segmenter

_CONTROL = regex.compile(r"\p{C}")
# segmenters after which XLM's tokenize.sh runs remove-non-printing-char.perl alone (no Moses
# normalisation), on the segmenter's output for the raw line
_SEGMENT_ONLY = frozenset({"pythainlp"})


def remove_non_printing(text: str) -> str:
    """remove-non-printing-char.perl (``s/\\p{C}/ /g``) with runs of whitespace made one space: a
    non-printing character inside a segmenter's token splits it, as the script's space does."""
    return " ".join(_CONTROL.sub(" ", text).split())


@dataclass(frozen=True)
class TokenizeSettings:
    moses_lang: str
    segmenter: str = "none"              # none | jieba | stanford (zh) | pythainlp (th)
    lowercase: bool = False              # preprocess.lowercase_and_remove_accent
    stanford_model: str | None = None        # ctb | pku (preprocess.stanford_model), with segmenter stanford
    stanford_home: str | None = None     # directory with segment.sh (or one above it)

    @classmethod
    def from_config(cls, config: Mapping, lang: str, stanford_home: str | None = None) -> "TokenizeSettings":
        """From the whole (validated) config: ``languages.<lang>`` and ``preprocess``."""
        lc, pp = config["languages"][lang], config["preprocess"]
        return cls(
            moses_lang=lc["moses"],
            segmenter=lc["segmenter"],
            lowercase=bool(pp["lowercase_and_remove_accent"]),
            stanford_model=pp["stanford_model"],
            stanford_home=None if stanford_home is None else str(stanford_home),
        )


class LineTokenizer:
    def __init__(self, settings: TokenizeSettings):
        self.settings = settings
        self.moses = moses_pipeline(settings.moses_lang)
        self.segment_only = settings.segmenter in _SEGMENT_ONLY
        self._seg: Callable[[str], list[str]] | None = None

    @property
    def seg(self):
        """The language's segmenter, started on first use: a job that only normalises given words
        (NER, UD) needs neither Java nor the Stanford segmenter's files."""
        if self._seg is None and self.settings.segmenter != "none":
            kw = {}
            if self.settings.segmenter == "stanford":
                kw = {"home": self.settings.stanford_home, "model": self.settings.stanford_model}
            self._seg = make_segmenter(self.settings.segmenter, **kw)
        return self._seg

    def _clean_for_segmenter(self, line: str) -> str:
        """What the segmenter reads: the raw line where XLM segments before removing anything (th)."""
        return line if self.segment_only else " ".join(_CONTROL.sub("", line).split())

    def _finish(self, text: str) -> str:
        return lowercase_and_remove_accent(text) if self.settings.lowercase else text

    def _segmented(self, words: list[str]) -> str:
        if self.segment_only:
            return self._finish(remove_non_printing(" ".join(words)))
        return self._finish(self.moses.normalize(" ".join(words)))

    def __call__(self, line: str) -> str:
        if self.settings.segmenter == "none":
            return self._finish(self.moses(line))
        line = self._clean_for_segmenter(line)
        return self._segmented(self.seg(line)) if line else ""

    def given_word(self, word: str) -> list[str]:
        """An already segmented word (a treebank's, a NER set's) as pretraining text has it: the
        whole chain for space-delimited languages, only what follows the segmenter otherwise."""
        if self.settings.segmenter == "none":
            return self(word).split()
        return self._segmented([word]).split()

    def batch(self, lines: Iterable[str]) -> list[str]:
        """Same as ``[self(l) for l in lines]``; one segmenter call per batch (Stanford: one JVM)."""
        lines = list(lines)
        if self.settings.segmenter == "none":
            return [self(line) for line in lines]
        cleaned = [self._clean_for_segmenter(line) for line in lines]
        keep = [i for i, line in enumerate(cleaned) if line]
        out = [""] * len(lines)
        for i, words in zip(keep, self.seg.segment_lines([cleaned[i] for i in keep])):
            out[i] = self._segmented(words)
        return out


@lru_cache(maxsize=8)
def line_tokenizer(settings: TokenizeSettings) -> LineTokenizer:
    return LineTokenizer(settings)


def tokenize_line(line: str, lang: str, cfg: TokenizeSettings | Mapping) -> str:
    """Tokenise one line. ``cfg``: TokenizeSettings or the whole config mapping."""
    settings = cfg if isinstance(cfg, TokenizeSettings) else TokenizeSettings.from_config(cfg, lang)
    return line_tokenizer(settings)(line)
