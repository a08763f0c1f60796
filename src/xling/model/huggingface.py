"""A ``transformers`` checkpoint as the pipeline's encoder: a local model directory (BERT, m-BERT,
XLM-R, CamemBERT, ...) read with its own tokenizer, every layer's hidden states out. The same
interface as the pipeline's own models (:class:`xling.model.encoder.Encoder`), so fine-tuning and
Section 5 read either alike.

- :class:`TokenizerDictionary`: the tokenizer seen as the fairseq dictionary our code reads
  (``index``, ``bos``/``eos``/``pad``/``unk`` = the tokenizer's ``cls``/``sep``/``pad``/``unk``:
  ``[CLS] ... [SEP]`` for BERT, ``<s> ... </s>`` for XLM-R and CamemBERT).
- :class:`TransformersEncoder`: the base model (``AutoModel``), no language-specific part; a
  sentence pair gets segment ids only where the model has a second segment (BERT's; RoBERTa's
  family has one segment).

transformers is imported when a model is loaded (its import takes seconds).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import torch

# model types whose base model takes add_pooling_layer
POOLER_OPTIONAL = ("bert", "roberta", "xlm-roberta", "camembert", "albert")


class TokenizerDictionary:
    """A ``transformers`` tokenizer seen as the fairseq dictionary our code reads: ``index``
    (unknown pieces -> its unknown token), ``d[id]``, and ``bos``/``eos``/``pad``/``unk``."""

    def __init__(self, tokenizer: Any) -> None:
        missing = [t for t in ("cls_token_id", "sep_token_id", "pad_token_id", "unk_token_id")
                   if getattr(tokenizer, t, None) is None]
        if missing:
            raise ValueError(f"an encoder's tokenizer needs a start, separator, padding and unknown token; "
                             f"this one lacks {missing}")
        self.tokenizer = tokenizer

    def index(self, piece: str) -> int:
        i = self.tokenizer.convert_tokens_to_ids(piece)
        return int(self.tokenizer.unk_token_id) if i is None else int(i)

    def __getitem__(self, i: int) -> str:
        return str(self.tokenizer.convert_ids_to_tokens(int(i)))

    def __len__(self) -> int:
        return len(self.tokenizer)

    def bos(self) -> int:
        return int(self.tokenizer.cls_token_id)

    def eos(self) -> int:
        return int(self.tokenizer.sep_token_id)

    def pad(self) -> int:
        return int(self.tokenizer.pad_token_id)

    def unk(self) -> int:
        return int(self.tokenizer.unk_token_id)

    def pieces(self, text: str) -> list[str]:
        return list(self.tokenizer.tokenize(text))


class TransformersEncoder(torch.nn.Module):
    """A ``transformers`` encoder as the fine-tuning and analysis code's encoder: one model for every
    language (nothing language-specific), ``encode`` returns its 1 + L hidden states. A sentence
    pair is read as BERT reads it (segment 0 up to the first separator, 1 after) where the model has
    two segments; ``.bert`` is the base model (``xling.analysis.language_shift`` finds it there)."""

    def __init__(self, model: Any, dictionary: TokenizerDictionary, languages: Sequence[str]) -> None:
        super().__init__()
        self.bert = getattr(model, "base_model", model)  # the encoder of a *ForMaskedLM
        self.dictionary = dictionary
        self.languages = list(languages)
        config = self.bert.config
        self.dim = int(config.hidden_size)
        self.num_layers = int(config.num_hidden_layers)
        self.segments = int(getattr(config, "type_vocab_size", 1) or 1)

    def max_positions(self) -> int:
        """The longest input: RoBERTa's family numbers positions from its padding index + 1 (its
        position table has that padding row; BERT's, DistilBERT's and the others' have none)."""
        n = int(self.bert.config.max_position_embeddings)
        positions = getattr(getattr(self.bert, "embeddings", None), "position_embeddings", None)
        offset = getattr(positions, "padding_idx", None)
        return n - (int(offset) + 1) if offset is not None else n

    def _language_ids(self, tokens, lang: str):
        """XLM's ``langs`` input where the model has language embeddings (its config's lang2id),
        else None: such a model must be told each token's language, as in its pretraining."""
        config = self.bert.config
        if config.model_type != "xlm" or not getattr(config, "use_lang_emb", False) or int(config.n_langs) < 2:
            return None
        lang2id = getattr(config, "lang2id", None) or {}
        if lang not in lang2id:
            raise ValueError(f"this XLM model has language embeddings for {sorted(lang2id)}, not {lang!r}")
        return tokens.new_full(tokens.shape, int(lang2id[lang]))

    def encode(self, tokens, lang: str, padding_mask=None) -> list:
        real = tokens.ne(self.dictionary.pad()) if padding_mask is None else ~padding_mask
        kwargs = {}
        langs = self._language_ids(tokens, lang)
        if langs is not None:
            kwargs["langs"] = langs
        if self.segments > 1:
            sep = tokens.eq(self.dictionary.eos()).long()
            kwargs["token_type_ids"] = ((sep.cumsum(dim=1) - sep) > 0).long() * real.long()  # after the first [SEP]
        out = self.bert(input_ids=tokens, attention_mask=real.long(), output_hidden_states=True, **kwargs)
        return list(out.hidden_states)

    def shared_parameters(self):
        return self.bert.parameters()

    def language_specific_parameters(self, lang: str):
        return []


def load_tokenizer(directory: Path) -> TokenizerDictionary:
    from transformers import AutoTokenizer

    return TokenizerDictionary(AutoTokenizer.from_pretrained(str(directory)))


def load_masked_lm(directory: Path, device: str = "cpu"):
    """(the model with its MLM head in eval mode, its :class:`TokenizerDictionary`)."""
    from transformers import AutoModelForMaskedLM

    return AutoModelForMaskedLM.from_pretrained(str(directory)).to(device).eval(), load_tokenizer(directory)


def load_transformers_encoder(directory: Path, languages: Sequence[str], device: str = "cpu",
                              random_init_seed: int | None = None) -> TransformersEncoder:
    """The base model of ``directory`` as a :class:`TransformersEncoder` in eval mode on ``device``;
    ``random_init_seed``: the same architecture freshly initialised with that seed (its config's
    initialisation), the trained weights unread (Figure 7's random encoder)."""
    from transformers import AutoConfig, AutoModel

    config = AutoConfig.from_pretrained(str(directory))
    # the pooler is never read (every layer's states are), and a checkpoint saved with an MLM head
    # has none: left out where the model has the option (BERT's and RoBERTa's families)
    kwargs = {"add_pooling_layer": False} if config.model_type in POOLER_OPTIONAL else {}
    if random_init_seed is None:
        model = AutoModel.from_pretrained(str(directory), **kwargs)
    else:
        torch.manual_seed(random_init_seed)
        model = AutoModel.from_config(config, **kwargs)
    return TransformersEncoder(model, load_tokenizer(directory), languages).to(device).eval()


def word_splitter(dictionary: TokenizerDictionary) -> Callable[[list[str]], list[list[str]]]:
    """Words -> each one's pieces (the ``words_to_subwords`` of :class:`xling.model.text.WordEncoder`)."""
    return lambda words: [dictionary.pieces(w) for w in words]


def line_words(dictionary: TokenizerDictionary) -> Callable[[str], tuple[list[str], list]]:
    """A line -> its pieces and the span of each whitespace word among them (the ``line_words`` of
    ``xling.analysis.words.contextual_word_vectors``): a word is a whitespace token of the line, read
    as the tokenizer cuts it. A word the tokenizer drops (control characters only) has no span."""

    def read(line: str) -> tuple[list[str], list[tuple[str, int, int]]]:
        pieces: list[str] = []
        spans = []
        for word in line.split():
            cut = dictionary.pieces(word)
            if cut:
                spans.append((word, len(pieces), len(pieces) + len(cut)))
                pieces += cut
        return pieces, spans

    return read
