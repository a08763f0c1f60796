"""Export a pretrained model to a standard ``transformers`` checkpoint in a directory that
``from_pretrained`` loads: the model and a fast tokenizer over the pretraining dictionary.

Which models: those whose every part is shared by the languages (Default, Wiki-CC, No anchors,
Default anchors, Extra anchors and the monolingual models). The Sep rows (embeddings or layers per
language) have no architecture in ``transformers``: ``xling.model.checkpoint`` loads them.

Which architecture: XLM's for a model with XLM's head (``model.mlm_head: xlm``, the paper
config's): ``XLMWithLMHeadModel``, which is XLM's code (token + position + language embeddings,
LayerNorm, post-LN layers, the softmax tied to the embeddings); it needs XLM's FFN of 4 x dim.
BERT's for a model with BERT's head (dense, activation, LayerNorm before the tied softmax):
``BertForMaskedLM``, whose token-type embedding holds the language embeddings (a single row of
zeros for a model without them).

The language: a model with language embeddings reads every token with its language's id (the
order of ``languages`` in ``xling_export.json``, also its ``language_ids``): passed as ``langs``
to the XLM model, as ``token_type_ids`` to the BERT model (:func:`language_inputs` makes either).
Without it, XLM's model adds no language embedding and BERT's the first language's (id 0): both
differ from the pretrained model's states.

Tokenisation. A model with one BPE for all its languages (every exportable row but No anchors and
Default anchors, and the monolingual models) gets a tokenizer of raw text: ``transformers``' XLM
tokenizer (Moses, then BPE from ``vocab.json``, the dictionary in XLM's ``</w>`` convention, and
``merges.txt``, the BPE codes), which adds ``<s> ... </s>`` (pairs: ``<s> a </s> b </s>``) as
fine-tuning does. ``AutoTokenizer.from_pretrained(path, trust_remote_code=True)`` loads the
export's own subclass (:mod:`xling.export.tokenization_xling`, copied beside the model), which
applies each language's Moses rules (``tokenizer(texts, lang="fr")``) and takes a segmented
language's (Chinese) text as its segmenter returned it; without ``trust_remote_code`` the same
files load as ``XLMTokenizer``, which applies English's rules to every language. A model with a
BPE per language keeps a tokenizer of pre-tokenised text (pieces separated by spaces, ``@@`` on
non-final pieces; the dictionary as a word-level vocabulary) with :class:`Pretokenizer` before it:
one BPE model cannot segment each language with its own codes. ``xling_export.json``'s
``tokenizer`` says which, and what each language's text must be.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import torch

from xling.bpe.manifest import SEPARATOR, read_manifest
from xling.config import data_language
from xling.errors import InputError
from xling.io import atomic_dir

if TYPE_CHECKING:
    from transformers import PreTrainedModel

EXPORT_INFO = "xling_export.json"
BPE_DIR = "bpe"
SPECIAL_TOKENS = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
                  "mask_token": "<mask>", "cls_token": "<s>", "sep_token": "</s>"}


BERT, XLM = "BertForMaskedLM", "XLMWithLMHeadModel"
# the keyword of each architecture's forward that takes the language ids
LANGUAGE_INPUT = {BERT: "token_type_ids", XLM: "langs"}


def export_format(encoder) -> str:
    """The ``transformers`` architecture of ``encoder``: XLM's for XLM's head, else BERT's."""
    return XLM if encoder.mlm_head == "xlm" else BERT


def exportable(encoder) -> str | None:
    """None when ``encoder`` (an encoder of xling.pretrain.encoder) maps onto its ``transformers``
    architecture (:func:`export_format`), else why not."""
    if encoder.separate_embeddings:
        return "its embeddings are separate per language"
    if encoder.separate_layers:
        return f"its layers 1-{encoder.separate_layers} are separate per language"
    if encoder.vocab_mask is not None:
        return "its output softmax is restricted per language"
    ffn = encoder.shared_layers[0].linear1.out_features
    if export_format(encoder) == XLM and ffn != 4 * encoder.dim:
        return f"XLM's architecture has an FFN of 4 x {encoder.dim}, this model {ffn}"
    return None


def language_inputs(info: Mapping[str, Any], lang: str, input_ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """The keyword argument that gives an exported model (its ``xling_export.json`` record
    ``info``) the language of ``input_ids``: every token ``lang``'s id; empty for a model
    without language embeddings."""
    name = info.get("language_input")
    if name is None:
        return {}
    ids = info["language_ids"]
    if lang not in ids:
        raise KeyError(f"language {lang!r} not in the model's languages {list(ids)}")
    return {name: torch.full_like(input_ids, int(ids[lang]))}


def bert_config(encoder, dictionary):
    """The ``BertConfig`` of ``encoder`` (an encoder of xling.pretrain.encoder; its torch layers hold the sizes)."""
    from transformers import BertConfig

    layer = encoder.shared_layers[0]
    act = encoder.lm_activation
    return BertConfig(
        vocab_size=len(dictionary),
        hidden_size=encoder.dim,
        num_hidden_layers=encoder.num_layers,
        num_attention_heads=layer.self_attn.num_heads,
        intermediate_size=layer.linear1.out_features,
        hidden_act=act,  # "gelu" is the exact (erf) GELU in both torch and transformers
        hidden_dropout_prob=layer.dropout.p,
        attention_probs_dropout_prob=layer.self_attn.dropout,
        max_position_embeddings=encoder.max_positions_,
        # the language embeddings, one type per language (token_type_ids = language id)
        type_vocab_size=encoder.n_languages if encoder.embed_languages is not None else 1,
        layer_norm_eps=layer.norm1.eps,
        pad_token_id=dictionary.pad(),
        bos_token_id=dictionary.bos(),
        eos_token_id=dictionary.eos(),
        tie_word_embeddings=True,
        architectures=["BertForMaskedLM"],
    )


def bert_body_state_dict(encoder, rows: int | None = None) -> dict[str, torch.Tensor]:
    """``encoder``'s embeddings and layers under ``BertModel``'s names: the first ``rows`` rows of
    the token table (None: the dictionary's; a benchmark keeps the padded rows), the language
    embeddings as the token types (a single row of zeros for a model without them)."""
    rows = encoder.vocab_size if rows is None else rows
    sd = {
        "embeddings.word_embeddings.weight": encoder.embed_tokens[0].weight[:rows],
        "embeddings.position_embeddings.weight": encoder.embed_positions[0].weight,
        "embeddings.token_type_embeddings.weight": (
            encoder.embed_languages.weight if encoder.embed_languages is not None else torch.zeros(1, encoder.dim)),
        "embeddings.LayerNorm.weight": encoder.emb_layer_norm[0].weight,
        "embeddings.LayerNorm.bias": encoder.emb_layer_norm[0].bias,
    }
    for i, layer in enumerate(encoder.shared_layers):
        p = f"encoder.layer.{i}."
        # torch packs query, key and value in one projection, in that order
        for name, w, b in zip(("query", "key", "value"), layer.self_attn.in_proj_weight.chunk(3),
                              layer.self_attn.in_proj_bias.chunk(3)):
            sd[f"{p}attention.self.{name}.weight"], sd[f"{p}attention.self.{name}.bias"] = w, b
        for ours, theirs in (("self_attn.out_proj", "attention.output.dense"), ("norm1", "attention.output.LayerNorm"),
                             ("linear1", "intermediate.dense"), ("linear2", "output.dense"),
                             ("norm2", "output.LayerNorm")):
            module = layer.get_submodule(ours)
            sd[f"{p}{theirs}.weight"], sd[f"{p}{theirs}.bias"] = module.weight, module.bias
    return {k: v.detach().clone().float() for k, v in sd.items()}


def bert_state_dict(encoder) -> dict[str, torch.Tensor]:
    """``encoder``'s weights under ``BertForMaskedLM``'s names (the tied decoder weight and bias
    are the word embeddings and ``cls.predictions.bias``): the dictionary's rows only, without the
    rows that pad the tables to a multiple of ``--vocab-multiple``."""
    sd = {f"bert.{k}": v for k, v in bert_body_state_dict(encoder).items()}
    head = {
        "cls.predictions.bias": encoder.lm_bias[: encoder.vocab_size],
        "cls.predictions.transform.dense.weight": encoder.lm_dense.weight,
        "cls.predictions.transform.dense.bias": encoder.lm_dense.bias,
        "cls.predictions.transform.LayerNorm.weight": encoder.lm_layer_norm.weight,
        "cls.predictions.transform.LayerNorm.bias": encoder.lm_layer_norm.bias,
    }
    return {**sd, **{k: v.detach().clone().float() for k, v in head.items()}}


def xlm_config(encoder, dictionary, languages: list[str]):
    """The ``XLMConfig`` of ``encoder`` (XLM's head; its torch layers hold the sizes)."""
    from transformers import XLMConfig

    layer = encoder.shared_layers[0]
    # lang2id and id2lang: XLM's fields that XLMConfig keeps as extra keys (its typed signature lacks them)
    return XLMConfig(  # type: ignore[call-arg]
        vocab_size=len(dictionary),
        emb_dim=encoder.dim,
        n_layers=encoder.num_layers,
        n_heads=layer.self_attn.num_heads,
        dropout=layer.dropout1.p,
        attention_dropout=layer.self_attn.dropout,
        gelu_activation=encoder.lm_activation == "gelu",  # XLM's gelu is the exact (erf) one
        sinusoidal_embeddings=False,
        causal=False,
        asm=False,
        n_langs=len(languages),
        use_lang_emb=encoder.embed_languages is not None,
        lang2id={lang: i for i, lang in enumerate(languages)},
        id2lang=dict(enumerate(languages)),
        max_position_embeddings=encoder.max_positions_,
        layer_norm_eps=layer.norm1.eps,
        bos_token_id=dictionary.bos(),
        eos_token_id=dictionary.eos(),
        pad_token_id=dictionary.pad(),
        unk_index=dictionary.unk(),
        mask_index=dictionary.index("<mask>"),
        mask_token_id=dictionary.index("<mask>"),
        is_encoder=True,
        tie_word_embeddings=True,
        architectures=[XLM],
    )


def xlm_state_dict(encoder) -> dict[str, torch.Tensor]:
    """``encoder``'s weights under ``XLMWithLMHeadModel``'s names (the tied softmax's weight is
    the word embeddings, its bias ``pred_layer.proj.bias``): the dictionary's rows only, as
    :func:`bert_state_dict`."""
    t, vocab = "transformer.", encoder.vocab_size
    sd = {
        f"{t}embeddings.weight": encoder.embed_tokens[0].weight[:vocab],
        f"{t}position_embeddings.weight": encoder.embed_positions[0].weight,
        f"{t}layer_norm_emb.weight": encoder.emb_layer_norm[0].weight,
        f"{t}layer_norm_emb.bias": encoder.emb_layer_norm[0].bias,
        "pred_layer.proj.bias": encoder.lm_bias[:vocab],
    }
    if encoder.embed_languages is not None:
        sd[f"{t}lang_embeddings.weight"] = encoder.embed_languages.weight
    for i, layer in enumerate(encoder.shared_layers):
        # torch packs XLM's q_lin, k_lin and v_lin in one projection, in that order
        for name, w, b in zip(("q_lin", "k_lin", "v_lin"), layer.self_attn.in_proj_weight.chunk(3),
                              layer.self_attn.in_proj_bias.chunk(3)):
            sd[f"{t}attentions.{i}.{name}.weight"], sd[f"{t}attentions.{i}.{name}.bias"] = w, b
        for ours, theirs in (("self_attn.out_proj", f"attentions.{i}.out_lin"), ("norm1", f"layer_norm1.{i}"),
                             ("linear1", f"ffns.{i}.lin1"), ("linear2", f"ffns.{i}.lin2"),
                             ("norm2", f"layer_norm2.{i}")):
            module = layer.get_submodule(ours)
            sd[f"{t}{theirs}.weight"], sd[f"{t}{theirs}.bias"] = module.weight, module.bias
    return {k: v.detach().clone().float() for k, v in sd.items()}


def hf_model(encoder, dictionary, languages: list[str]):
    """The ``transformers`` model of :func:`export_format` with ``encoder``'s weights, in eval
    mode. Every parameter is set from ours (checked), so nothing keeps its random initialisation."""
    model: PreTrainedModel
    if export_format(encoder) == XLM:
        from transformers import XLMWithLMHeadModel

        model, sd = XLMWithLMHeadModel(xlm_config(encoder, dictionary, languages)), xlm_state_dict(encoder)
    else:
        from transformers import BertForMaskedLM

        model, sd = BertForMaskedLM(bert_config(encoder, dictionary)), bert_state_dict(encoder)
    missing, unexpected = model.load_state_dict(sd, strict=False)
    tied = set(getattr(model, "_tied_weights_keys", None) or ())
    left = [k for k in missing if k not in tied]
    if left or unexpected:
        raise RuntimeError(f"{type(model).__name__} mapping out of date with transformers: unset {left}, "
                           f"unknown {unexpected}")
    return model.eval()


def fast_tokenizer(dictionary, max_length: int):
    """A ``PreTrainedTokenizerFast`` over pre-tokenised text (a model with a BPE per language): the
    pretraining dictionary as a word-level vocabulary (unknown pieces -> ``<unk>``, as fairseq
    does), ``<s> ... </s>`` around each sequence."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {sym: i for i, sym in enumerate(dictionary.symbols)}
    if len(vocab) != len(dictionary.symbols):
        raise ValueError("the dictionary holds a symbol twice; ids would be ambiguous")
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    bos, eos = dictionary.bos(), dictionary.eos()
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> $B </s>", special_tokens=[("<s>", bos), ("</s>", eos)])
    # no token_type_ids: XLM's model would add them as word embeddings, BERT's reads the language
    # from them (language_inputs)
    return PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=max_length,
                                   model_input_names=["input_ids", "attention_mask"], **SPECIAL_TOKENS)


# the dictionary's special symbols, which keep their spelling in XLM's vocabulary
SPECIAL_SYMBOLS = frozenset(SPECIAL_TOKENS.values())
TOKENIZER_MODULE = Path(__file__).with_name("tokenization_xling.py")


def xlm_piece(symbol: str) -> str:
    """A dictionary symbol in XLM's BPE convention: subword-nmt marks the pieces a word continues
    after (``ab@@``), XLM's merges the word's last piece (``cd</w>``)."""
    if symbol in SPECIAL_SYMBOLS:
        return symbol
    return symbol.removesuffix(SEPARATOR) if symbol.endswith(SEPARATOR) else f"{symbol}</w>"


def xlm_vocab(dictionary) -> dict[str, int]:
    vocab: dict[str, int] = {}
    for i, sym in enumerate(dictionary.symbols):
        piece = xlm_piece(sym)
        if piece in vocab:
            raise ValueError(f"dictionary symbols {dictionary.symbols[vocab[piece]]!r} and {sym!r} are one piece "
                             f"{piece!r} in XLM's convention; ids would be ambiguous")
        vocab[piece] = i
    return vocab


def xlm_merges(codes: Path) -> list[str]:
    """subword-nmt's codes as XLM's merges: without the version line, each pair once at its first
    rank (subword-nmt keeps the first of a repeated pair, XLM's tokenizer the last)."""
    lines = Path(codes).read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].split() != ["#version:", "0.2"]:
        # version 0.1 (no such line) ends a word with a separate </w>, which XLM's BPE does not
        raise InputError(codes, 1, "'#version: 0.2' (subword-nmt codes whose last character carries </w>)",
                         lines[0] if lines else "an empty file")
    return list(dict.fromkeys(" ".join(line.split()) for line in lines[1:] if line.strip()))


def raw_text_tokenizer(dictionary, codes: Path, languages: list[str], tokenize: Mapping[str, Mapping[str, Any]],
                       max_length: int, dest: Path) -> dict[str, Any]:
    """Write the files of the raw-text tokenizer (vocab.json, merges.txt, its config naming
    XLMTokenizer and, for ``trust_remote_code``, XlingTokenizer) into ``dest``. Returns the
    export record's ``tokenizer`` entry: what each language's text must be."""
    from transformers import XLMTokenizer

    settings = {lang: tokenize[data_language(lang)] for lang in languages}
    lowercase = {bool(s["lowercase"]) for s in settings.values()}
    if len(lowercase) != 1:
        raise ValueError("lowercase_and_remove_accent differs between the model's languages")
    segmented = {lang: s["segmenter"] for lang, s in settings.items() if s["segmenter"] != "none"}
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "vocab.json").write_text(json.dumps(xlm_vocab(dictionary), ensure_ascii=False, indent=0) + "\n",
                                     encoding="utf-8")
    (dest / "merges.txt").write_text("".join(f"{m}\n" for m in xlm_merges(codes)), encoding="utf-8")
    tok = XLMTokenizer(
        dest / "vocab.json", dest / "merges.txt", do_lowercase_and_remove_accent=lowercase.pop(),
        additional_special_tokens=[], model_max_length=max_length,
        # no token_type_ids: XLM's model would add them as word embeddings, BERT's reads the
        # language from them (language_inputs)
        model_input_names=["input_ids", "attention_mask"], **SPECIAL_TOKENS,
        # XlingTokenizer's (XLMTokenizer keeps them unused)
        moses_languages={lang: s["moses_lang"] for lang, s in settings.items()},
        language=languages[0], segmented=segmented)
    if len(tok) != len(dictionary):
        raise RuntimeError(f"the tokenizer has {len(tok)} tokens, the dictionary {len(dictionary)}")
    tok.save_pretrained(dest)
    config_path = dest / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["auto_map"] = {"AutoTokenizer": [f"{TOKENIZER_MODULE.stem}.XlingTokenizer", None]}
    config_path.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    shutil.copyfile(TOKENIZER_MODULE, dest / TOKENIZER_MODULE.name)

    def text_of(lang: str) -> str:
        if lang in segmented:
            return (f"text segmented with {segmented[lang]} as in pretraining (words separated by spaces), "
                    f"with trust_remote_code=True and lang={lang!r}")
        if settings[lang]["moses_lang"] == "en":
            return "raw text (also without trust_remote_code: XLMTokenizer applies English's Moses rules)"
        return (f"raw text, with trust_remote_code=True and lang={lang!r} (without it, XLMTokenizer applies "
                "English's Moses rules)")

    return {"input": "raw text", "why": None, "class": "XlingTokenizer (trust_remote_code=True), else XLMTokenizer",
            "languages": {lang: text_of(lang) for lang in languages}}


def _copy_bpe(manifest: Path, dest: Path) -> None:
    """The BPE manifest and the codes files it names, into ``dest`` (what Pretokenizer reads)."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(manifest, dest / manifest.name)
    for codes in sorted(set(read_manifest(manifest)["codes"].values())):
        shutil.copyfile(manifest.parent / codes, dest / codes)


def export_model(checkpoint: Path, dictionary: Path, bpe_manifest: Path, out_dir: Path,
                 tokenize: Mapping[str, Mapping[str, Any]], info: Mapping[str, Any] | None = None) -> dict:
    """Write ``out_dir`` (all or nothing): the BERT model (safetensors), its tokenizer, the BPE
    files and ``xling_export.json`` (source checkpoint, languages, each language's tokeniser
    settings ``tokenize``, and ``info``). Returns the export record."""
    from xling.model import PretrainedModel

    loaded = PretrainedModel.xling(checkpoint, dictionary, bpe_manifest).checkpoint_encoder()
    why = exportable(loaded.encoder)
    if why:
        raise InputError(checkpoint, None, "a model whose parts are all shared by its languages "
                         "(transformers has no architecture for per-language parts; load it with "
                         "xling.model.checkpoint.load_encoder)", why)
    missing = [lang for lang in loaded.languages if data_language(lang) not in tokenize]
    if missing:
        raise ValueError(f"no tokeniser settings for {missing}: give one entry per language the model reads")
    model = hf_model(loaded.encoder, loaded.dictionary, loaded.languages)
    bpe = read_manifest(bpe_manifest)
    fmt = export_format(loaded.encoder)
    record = {
        "format": fmt,
        # how the model is told the language (language_inputs); null: it has no language embeddings
        "language_input": LANGUAGE_INPUT[fmt] if loaded.encoder.embed_languages is not None else None,
        "language_ids": {lang: i for i, lang in enumerate(loaded.languages)},
        "checkpoint": str(checkpoint),
        "dictionary": str(dictionary),
        "languages": loaded.languages,
        "vocab_size": len(loaded.dictionary),
        "layers": loaded.num_layers,
        "dim": loaded.dim,
        "bpe": f"{BPE_DIR}/{Path(bpe_manifest).name}",
        "tokenize": {lang: dict(fields) for lang, fields in tokenize.items()},
        **dict(info or {}),
    }
    with atomic_dir(out_dir) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        # what the tokenizer reads, in each language
        if bpe["mode"] == "joint":
            codes = Path(bpe_manifest).parent / bpe["codes"][data_language(loaded.languages[0])]
            record["tokenizer"] = raw_text_tokenizer(loaded.dictionary, codes, loaded.languages, tokenize,
                                                     loaded.encoder.max_positions_, tmp)
        else:
            fast_tokenizer(loaded.dictionary, loaded.encoder.max_positions_).save_pretrained(tmp)
            record["tokenizer"] = {
                "input": "pre-tokenised text",
                "why": f"its BPE is per language ({bpe['mode']}): one tokenizer cannot segment each language "
                       "with its own codes",
                "class": "PreTrainedTokenizerFast (word-level)",
                "languages": {lang: "pre-tokenised text: xling.export.Pretokenizer(path, lang)(sentences)"
                              for lang in loaded.languages}}
        _copy_bpe(Path(bpe_manifest), tmp / BPE_DIR)
        (tmp / EXPORT_INFO).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


class Pretokenizer:
    """Raw sentences of one language -> the pre-tokenised text of pretraining (Moses or the
    segmenter, then the model's BPE; pieces separated by spaces, ``@@`` on non-final ones), with
    xling's own tokenisers: what the tokenizer of a model with a BPE per language reads."""

    def __init__(self, export_dir: Path, lang: str, stanford_home: Path | None = None):
        from xling.bpe import SubwordTokenizer
        from xling.model.text import line_and_word_tokenizers
        from xling.preprocess.tokenize import TokenizeSettings

        export_dir = Path(export_dir)
        info_path = export_dir / EXPORT_INFO
        try:
            info = json.loads(info_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(info_path, None, "the record of an xling export") from None
        text_lang = data_language(lang)
        if text_lang not in info["tokenize"]:
            raise InputError(info_path, None, f"tokeniser settings for {text_lang!r}", ", ".join(info["tokenize"]))
        settings = TokenizeSettings(**info["tokenize"][text_lang],
                                    stanford_home=None if stanford_home is None else str(stanford_home))
        self._lines, _ = line_and_word_tokenizers(settings)
        self._bpe = SubwordTokenizer(export_dir / info["bpe"], text_lang)

    def __call__(self, sentences: list[str]) -> list[str]:
        return [" ".join(p for pieces in self._bpe.words_to_subwords(words) for p in pieces)
                for words in self._lines(list(sentences))]
