"""The tokenizer of an xling export: raw text -> the ids pretraining gave it, in each language.

Copied into every export directory whose model has one BPE for all its languages, and named by the
``auto_map`` of its ``tokenizer_config.json``: ``AutoTokenizer.from_pretrained(path,
trust_remote_code=True)`` loads this class, ``tokenizer(texts, lang="fr")`` tokenises French. It
imports nothing of xling, only ``transformers`` and ``sacremoses``.

It is ``transformers``' own ``XLMTokenizer`` (XLM's Moses chain, then BPE from ``vocab.json`` and
``merges.txt``, where a word's last piece ends in ``</w>``) with two differences, both to give the
ids of pretraining, whose text went through XLM's ``tools/tokenize.sh``:

* the Moses rules of the text's language. ``XLMTokenizer`` has a ``lang`` argument, but
  ``transformers`` passes no argument to it, so every text gets English's rules (French
  elisions such as ``n'est`` are cut as English cuts ``'s``). Loaded without
  ``trust_remote_code``, the same files give that ``XLMTokenizer``: pretraining's ids for English.
* punctuation normalised as ``normalize-punctuation.perl`` sees a line, newline included (a rule
  such as ``(\\.+)"(\\s*[^<])`` then also moves a closing quote at the end of a line), after
  sacremoses' unicode replacements. Nothing language-specific beyond Moses (no Romanian
  diacritics).

A language segmented before BPE in pretraining (Chinese with jieba or the Stanford segmenter,
Thai with pythainlp) is not segmented here: give its text as the segmenter returned it, words
separated by spaces; the tokenizer normalises it as pretraining did after the segmenter and
applies the BPE.
"""

from __future__ import annotations

import unicodedata

from transformers import XLMTokenizer
from transformers.models.xlm.tokenization_xlm import lowercase_and_remove_accent


class XlingTokenizer(XLMTokenizer):
    """``moses_languages``: each language of the model -> the Moses language of its text;
    ``language``: the one a call without ``lang=`` tokenises (the model's first); ``segmented``:
    language -> the segmenter pretraining ran on it (its text comes segmented)."""

    def __init__(self, vocab_file, merges_file, moses_languages=None, language=None, segmented=None, **kwargs):
        self.moses_languages = dict(moses_languages or {"en": "en"})
        self.language = language or next(iter(self.moses_languages))
        self.segmented = dict(segmented or {})
        self._call_language = None
        self._normalizers = {}
        super().__init__(vocab_file, merges_file, moses_languages=self.moses_languages, language=self.language,
                         segmented=self.segmented, **kwargs)
        self._moses(self.language)  # an unknown default fails at loading

    def _moses(self, lang: str) -> str:
        if lang not in self.moses_languages:
            raise ValueError(f"language {lang!r} is not one of the model's: {', '.join(self.moses_languages)}")
        return self.moses_languages[lang]

    # takes a language, as XLMTokenizer's own _tokenize does: transformers' base classes' do not
    def tokenize(self, text, lang=None, **kwargs):  # type: ignore[override]  # the added lang
        """``text``'s pieces, with the Moses rules of ``lang`` (a language of the model; default
        ``self.language``). ``tokenizer(text, lang=...)`` passes ``lang`` here."""
        self._call_language = lang or self.language
        self._moses(self._call_language)
        try:
            return super().tokenize(text, **kwargs)
        finally:
            self._call_language = None

    def moses_pipeline(self, text, lang):
        from sacremoses import MosesPunctNormalizer

        if lang not in self._normalizers:
            self._normalizers[lang] = MosesPunctNormalizer(lang, pre_replace_unicode_punct=True,
                                                           post_remove_control_chars=True)
        return self._normalizers[lang].normalize(text + "\n")

    def _tokenize(self, text, lang=None, bypass_tokenizer=False):  # type: ignore[override]  # as XLMTokenizer's
        language = self._call_language or lang or self.language
        moses = self._moses(language)
        if bypass_tokenizer:
            words = text.split()
        else:
            if self.segmented.get(language) == "pythainlp":
                # XLM's tokenize.sh after pythainlp: remove-non-printing-char.perl alone (a
                # non-printing character splits a word, as the script's space does)
                words = "".join(" " if unicodedata.category(c).startswith("C") else c for c in text).split()
            elif language in self.segmented:
                # after the other segmenters: Moses normalisation, no Moses tokenizer
                words = self.moses_pipeline(" ".join(text.split()), moses).split()
            else:
                words = self.moses_tokenize(self.moses_pipeline(text, moses), moses)
            if self.do_lowercase_and_remove_accent:
                words = lowercase_and_remove_accent(words)
        return [piece for word in words if word for piece in self.bpe(word).split(" ")]
