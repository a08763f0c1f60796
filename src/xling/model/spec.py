"""A pretrained model as one type: what it is made of, how it loads, how it reads raw text.

Two kinds behind one interface (:class:`xling.model.encoder.Encoder` once loaded):

- ``xling``: a checkpoint this pipeline pretrained (fairseq's ``checkpoint_best.pt``), its
  ``dict.txt`` and the ``bpe.json`` of its BPE; text is tokenised as its pretraining corpus was
  (Moses, or the segmenter of a segmented language) and cut by its BPE;
- ``transformers``: a local model directory (``config.json``, weights, tokenizer files: BERT,
  m-BERT, XLM-R, CamemBERT, ...); text is cut by the model's own tokenizer.

:class:`ModelSpec` is one model read as one language (a bilingual model is read as either).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

if TYPE_CHECKING:
    from xling.model.checkpoint import LoadedEncoder
    from xling.model.encoder import Encoder
    from xling.model.huggingface import TransformersEncoder
    from xling.model.text import WordsToSubwords
    from xling.preprocess.tokenize import TokenizeSettings

LinesToWords = Callable[[list[str]], list[list[str]]]
XLING, TRANSFORMERS = "xling", "transformers"
KINDS = (XLING, TRANSFORMERS)


@dataclass(frozen=True)
class PretrainedModel:
    """A pretrained model's files. ``path``: the checkpoint (``xling``) or the model directory
    (``transformers``); ``dictionary`` and ``bpe``: an ``xling`` model's ``dict.txt`` and
    ``bpe.json``; ``random_init_seed``: the same architecture, untrained, initialised with this seed
    (Figure 7's random encoder)."""

    kind: str
    path: Path
    dictionary: Path | None = None
    bpe: Path | None = None
    random_init_seed: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"a pretrained model's kind is one of {KINDS}, got {self.kind!r}")
        if self.kind == XLING and self.dictionary is None:
            raise ValueError(f"{self.path}: an xling checkpoint needs its dict.txt")

    @classmethod
    def xling(cls, checkpoint: str | Path, dictionary: str | Path, bpe: str | Path | None = None,
              random_init_seed: int | None = None) -> "PretrainedModel":
        return cls(XLING, Path(checkpoint), Path(dictionary), None if bpe is None else Path(bpe), random_init_seed)

    @classmethod
    def transformers(cls, directory: str | Path, random_init_seed: int | None = None) -> "PretrainedModel":
        return cls(TRANSFORMERS, Path(directory), random_init_seed=random_init_seed)

    def untrained(self, seed: int) -> "PretrainedModel":
        """The same architecture freshly initialised with ``seed``."""
        return replace(self, random_init_seed=int(seed))

    def load(self, device: str = "cpu", languages: Sequence[str] = ()) -> "Encoder":
        """The encoder on ``device`` in eval mode. ``languages``: what a ``transformers`` model is
        read as (it has nothing language-specific); an ``xling`` model's are its checkpoint's."""
        if self.kind == XLING:
            return self.checkpoint_encoder(device)
        return self.transformers_encoder(device, languages)

    def checkpoint_encoder(self, device: str = "cpu") -> "LoadedEncoder":
        """An ``xling`` model's encoder, with what only the pipeline's models have (the fairseq
        encoder inside: its tables, its MLM head, per-language parts)."""
        from xling.model.checkpoint import load_encoder

        if self.kind != XLING or self.dictionary is None:
            raise ValueError(f"{self.path}: a {self.kind} model, not one of the pipeline's checkpoints")
        return load_encoder(self.path, self.dictionary, self.random_init_seed).to(device)

    def transformers_encoder(self, device: str = "cpu", languages: Sequence[str] = ()) -> "TransformersEncoder":
        """A ``transformers`` model's encoder, with its tokenizer as the dictionary."""
        from xling.model.huggingface import load_transformers_encoder

        if self.kind != TRANSFORMERS:
            raise ValueError(f"{self.path}: a {self.kind} model, not a transformers directory")
        return load_transformers_encoder(self.path, languages, device, self.random_init_seed)

    def text(self, lang: str, settings: "TokenizeSettings | None" = None) -> tuple[LinesToWords, "WordsToSubwords"]:
        """How the model reads raw text in ``lang``: (raw sentences -> words, words -> each word's
        pieces). ``settings``: the tokenisation of an ``xling`` model's pretraining corpus in
        ``lang`` (a ``transformers`` model's tokenizer needs none: words are whitespace tokens,
        cut by the tokenizer)."""
        if self.kind == XLING:
            from xling.model.text import line_and_word_tokenizers

            if settings is None:
                raise ValueError(f"{self.path}: reading {lang} text needs its tokenisation settings")
            return line_and_word_tokenizers(settings)[0], self.subwords(lang)
        return (lambda texts: [t.split() for t in texts]), self.subwords(lang)

    def subwords(self, lang: str) -> "WordsToSubwords":
        """Words (as the model's corpus tokenised them) -> each word's pieces: an ``xling``
        model's BPE of ``lang``, a ``transformers`` model's tokenizer."""
        if self.kind == XLING:
            from xling.bpe import SubwordTokenizer

            if self.bpe is None:
                raise ValueError(f"{self.path}: reading {lang} words needs its bpe.json")
            return SubwordTokenizer(self.bpe, lang).words_to_subwords
        from xling.model.huggingface import word_splitter

        return word_splitter(_tokenizer(self.path))

    def digest(self) -> str:
        """sha256 of the weights: the checkpoint file, or a ``transformers`` directory's weights
        file (which model a report's row is)."""
        from xling.config.external import WEIGHTS_FILES
        from xling.download.fetch import sha256_file

        path = self.path
        if self.kind == TRANSFORMERS:
            found = [self.path / w for w in WEIGHTS_FILES if (self.path / w).is_file()]
            path = found[0] if found else self.path / WEIGHTS_FILES[0]
        return sha256_file(path)

    def drift(self) -> float | None:
        """How far training moved the model from its initial weights (``||w - w0|| / ||w0||``);
        None for a random encoder, or where the initial weights are unknown (a ``transformers``
        checkpoint, a checkpoint that does not record its seed)."""
        if self.random_init_seed is not None or self.kind != XLING:
            return None
        from xling.model.checkpoint import distance_from_initial_weights

        return distance_from_initial_weights(self.path, self.dictionary)


@functools.cache
def _tokenizer(directory: Path):
    from xling.model.huggingface import load_tokenizer

    return load_tokenizer(directory)


@dataclass(frozen=True)
class ModelSpec:
    """One pretrained model read as ``lang`` (its language-specific parts, its language id);
    ``text_lang``: the language of the text and of its tokenisation, when not ``lang`` (the
    bilingual en-en' model reads en' under its second id, with English BPE)."""

    model: PretrainedModel
    lang: str
    text_lang: str | None = None

    @property
    def reads(self) -> str:
        return self.text_lang or self.lang

    @property
    def checkpoint(self) -> Path:
        return self.model.path

    @property
    def random_init_seed(self) -> int | None:
        return self.model.random_init_seed
