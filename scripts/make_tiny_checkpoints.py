"""Tiny, randomly initialised ``transformers`` checkpoints of the architectures Section 5's external
rows name (``analysis.external_models``), each with a tokenizer trained on the spot on the given
text: the pipeline's external path run end to end without a hub or a GPU. Their numbers mean
nothing (the weights are random): they show the path works, not what BERT or XLM-R learn.

    python scripts/make_tiny_checkpoints.py OUT_DIR --text en=FILE --text fr=FILE [--text de=FILE ...]

writes ``OUT_DIR/<name>/`` (config.json, model.safetensors, tokenizer files) for

- ``bert_<lang>``: a BERT with a cased WordPiece vocabulary of each language's text (the
  monolingual pair ``bert-base-cased`` + ... is ``bert_en`` + ``camembert_fr``);
- ``camembert_<lang>``: a CamemBERT with a SentencePiece (unigram) vocabulary, for each non-English
  language;
- ``mbert``: a BERT with one WordPiece vocabulary of every language's text (m-BERT's kind);
- ``xlmr``: an XLM-R with one unigram vocabulary of every language's text;
- with ``--every-kind``, the other encoders ``AutoModel`` loads, each on every language's text:
  ``distilbert`` and ``electra`` (WordPiece), ``albert`` and ``deberta_v2`` (unigram), ``xlm``
  (XLM's BPE with ``</w>``, Moses through sacremoses), so that a row of each kind can be planned
  and run.

Each directory is written whole or not at all (a temporary directory, then a rename).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from xling.errors import InputError  # noqa: E402
from xling.io import first_lines  # noqa: E402

# small enough to build and run in seconds on a CPU; positions for the analysis's 128 subwords
SIZE = dict(hidden_size=32, num_hidden_layers=4, num_attention_heads=2, intermediate_size=64)
POSITIONS = 128
WORDPIECE_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
UNIGRAM_SPECIAL = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
# ALBERT's and DeBERTa-v2's sentencepiece vocabularies use BERT's markers
BRACKET_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
XLM_SPECIAL = ["<s>", "</s>", "<pad>", "<unk>"] + [f"<special{i}>" for i in range(10)]
KINDS = ("bert", "camembert", "xlmr", "distilbert", "electra", "albert", "deberta_v2", "xlm")


def _wordpiece(lines: list[str], vocab_size: int, out: Path):
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizerFast

    trainer = BertWordPieceTokenizer(lowercase=False, strip_accents=False)
    trainer.train_from_iterator(lines, vocab_size=vocab_size, special_tokens=WORDPIECE_SPECIAL, show_progress=False)
    trainer.save_model(str(out))
    tok = BertTokenizerFast(vocab=str(out / "vocab.txt"), do_lower_case=False, strip_accents=False,
                            model_max_length=POSITIONS)
    tok.save_pretrained(str(out))
    return tok


def _unigram(lines: list[str], vocab_size: int, out: Path, cls):
    from tokenizers import SentencePieceUnigramTokenizer

    trainer = SentencePieceUnigramTokenizer()
    trainer.train_from_iterator(lines, vocab_size=vocab_size, special_tokens=UNIGRAM_SPECIAL, unk_token="<unk>",
                                show_progress=False)
    tok = cls(tokenizer_object=trainer, bos_token="<s>", eos_token="</s>", sep_token="</s>", cls_token="<s>",
              unk_token="<unk>", pad_token="<pad>", mask_token="<mask>", model_max_length=POSITIONS)
    tok.save_pretrained(str(out))
    return tok


def _wordpiece_as(lines: list[str], vocab_size: int, out: Path, cls):
    """A WordPiece vocabulary saved as ``cls`` (DistilBERT's, ELECTRA's tokenizer) reads it."""
    _wordpiece(lines, vocab_size, out)
    tok = cls(vocab=str(out / "vocab.txt"), do_lower_case=False, strip_accents=False, model_max_length=POSITIONS)
    tok.save_pretrained(str(out))
    return tok


def _bracket_unigram(lines: list[str], vocab_size: int, out: Path, cls):
    """A unigram vocabulary with BERT's markers, as ALBERT's and DeBERTa-v2's fast tokenizers."""
    from tokenizers import SentencePieceUnigramTokenizer

    trainer = SentencePieceUnigramTokenizer()
    trainer.train_from_iterator(lines, vocab_size=vocab_size, special_tokens=BRACKET_SPECIAL, unk_token="[UNK]",
                                show_progress=False)
    tok = cls(tokenizer_object=trainer, bos_token="[CLS]", eos_token="[SEP]", sep_token="[SEP]", cls_token="[CLS]",
              unk_token="[UNK]", pad_token="[PAD]", mask_token="[MASK]", model_max_length=POSITIONS)
    tok.save_pretrained(str(out))
    return tok


def _xlm_bpe(lines: list[str], vocab_size: int, out: Path):
    """XLM's tokenizer files: vocab.json and merges.txt of a BPE whose word-final pieces end in
    ``</w>``, learnt on the text as XLMTokenizer cuts it (Moses, no lowercasing)."""
    import json

    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import XLMTokenizer

    bpe = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    bpe.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    bpe.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=XLM_SPECIAL,
                                                       end_of_word_suffix="</w>", show_progress=False))
    model = json.loads(bpe.to_str())["model"]
    (out / "vocab.json").write_text(json.dumps(model["vocab"], ensure_ascii=False), encoding="utf-8")
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    (out / "merges.txt").write_text("\n".join(merges) + "\n", encoding="utf-8")
    tok = XLMTokenizer(vocab_file=str(out / "vocab.json"), merges_file=str(out / "merges.txt"),
                       do_lowercase_and_remove_accent=False, model_max_length=POSITIONS)
    tok.save_pretrained(str(out))
    return tok


def _model(kind: str, lines: list[str], vocab_size: int, work: Path):
    """(the tokenizer, the randomly initialised masked LM) of ``kind``, its tokenizer written into ``work``."""
    import transformers as tf

    if kind == "bert":
        tok = _wordpiece(lines, vocab_size, work)
        return tok, tf.BertForMaskedLM(tf.BertConfig(vocab_size=len(tok), max_position_embeddings=POSITIONS,
                                                     pad_token_id=tok.pad_token_id, **SIZE))
    if kind in ("camembert", "xlmr"):
        camembert = (tf.CamembertTokenizerFast, tf.CamembertConfig, tf.CamembertForMaskedLM)
        xlmr = (tf.XLMRobertaTokenizerFast, tf.XLMRobertaConfig, tf.XLMRobertaForMaskedLM)
        cls, config, lm = camembert if kind == "camembert" else xlmr
        tok = _unigram(lines, vocab_size, work, cls)
        # RoBERTa's family numbers positions from the padding index + 1
        return tok, lm(config(vocab_size=len(tok), max_position_embeddings=POSITIONS + tok.pad_token_id + 1,
                              pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                              eos_token_id=tok.eos_token_id, type_vocab_size=1, **SIZE))
    if kind == "distilbert":  # its config names depth and width n_layers and dim
        tok = _wordpiece_as(lines, vocab_size, work, tf.DistilBertTokenizerFast)
        return tok, tf.DistilBertForMaskedLM(tf.DistilBertConfig(
            vocab_size=len(tok), max_position_embeddings=POSITIONS, pad_token_id=tok.pad_token_id,
            n_layers=SIZE["num_hidden_layers"], dim=SIZE["hidden_size"], n_heads=SIZE["num_attention_heads"],
            hidden_dim=SIZE["intermediate_size"]))
    if kind == "electra":  # an ELECTRA generator's shape: embeddings narrower than the layers
        tok = _wordpiece_as(lines, vocab_size, work, tf.ElectraTokenizerFast)
        return tok, tf.ElectraForMaskedLM(tf.ElectraConfig(vocab_size=len(tok), max_position_embeddings=POSITIONS,
                                                           pad_token_id=tok.pad_token_id, embedding_size=16, **SIZE))
    if kind == "albert":
        tok = _bracket_unigram(lines, vocab_size, work, tf.AlbertTokenizerFast)
        return tok, tf.AlbertForMaskedLM(tf.AlbertConfig(vocab_size=len(tok), max_position_embeddings=POSITIONS,
                                                         pad_token_id=tok.pad_token_id, embedding_size=16, **SIZE))
    if kind == "deberta_v2":
        tok = _bracket_unigram(lines, vocab_size, work, tf.DebertaV2TokenizerFast)
        return tok, tf.DebertaV2ForMaskedLM(tf.DebertaV2Config(vocab_size=len(tok), max_position_embeddings=POSITIONS,
                                                               pad_token_id=tok.pad_token_id, type_vocab_size=0,
                                                               **SIZE))
    if kind == "xlm":  # its config names depth and width n_layers and emb_dim
        tok = _xlm_bpe(lines, vocab_size, work)
        return tok, tf.XLMWithLMHeadModel(tf.XLMConfig(
            vocab_size=len(tok), max_position_embeddings=POSITIONS, pad_index=tok.pad_token_id,
            n_layers=SIZE["num_hidden_layers"], emb_dim=SIZE["hidden_size"], n_heads=SIZE["num_attention_heads"]))
    raise ValueError(f"unknown kind {kind!r} (expected one of {', '.join(KINDS)})")


def build(kind: str, lines: list[str], out: Path, seed: int, vocab_size: int, force: bool = False) -> bool:
    """One checkpoint of ``kind`` (one of KINDS) at ``out``, written whole or not at all; one
    already there is kept unless ``force`` (its jobs would rerun on new weights). Returns whether it
    was written."""
    if out.is_dir() and (out / "config.json").exists() and not force:
        return False
    import torch

    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.") as tmp:
        work = Path(tmp) / out.name
        work.mkdir()
        torch.manual_seed(seed)
        _, model = _model(kind, lines, vocab_size, work)
        model.save_pretrained(str(work))
        if out.exists():
            shutil.rmtree(out)
        work.rename(out)
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out", type=Path, help="directory the checkpoints are written under")
    ap.add_argument("--text", action="append", required=True, metavar="LANG=FILE",
                    help="a language's text, one sentence per line (the source language's first)")
    ap.add_argument("--lines", type=int, default=2000, help="first lines of each text the tokenizers learn from")
    ap.add_argument("--vocab-size", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--force", action="store_true", help="write the checkpoints again where they exist")
    ap.add_argument("--every-kind", action="store_true",
                    help="also DistilBERT, ELECTRA, ALBERT, DeBERTa-v2 and XLM checkpoints on every language's text")
    args = ap.parse_args(argv)
    texts = {}
    for item in args.text:
        lang, sep, path = item.partition("=")
        if not sep or not lang or not path:
            ap.error(f"--text {item!r}: expected LANG=FILE")
        texts[lang] = Path(path)
    if len(texts) < 2:
        ap.error("two languages at least: the source language's text and one other")
    try:
        lines = {lang: first_lines(path, args.lines) for lang, path in texts.items()}
    except (InputError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    langs = list(texts)
    every = [line for lang in langs for line in lines[lang]]
    plan = [("bert", lines[lang], f"bert_{lang}") for lang in langs]
    plan += [("camembert", lines[lang], f"camembert_{lang}") for lang in langs[1:]]
    plan += [("bert", every, "mbert"), ("xlmr", every, "xlmr")]
    if args.every_kind:
        plan += [(kind, every, kind) for kind in ("distilbert", "electra", "albert", "deberta_v2", "xlm")]
    # a seed of its own per model: two models of one architecture are not the same weights
    written = [name for i, (kind, text, name) in enumerate(plan)
               if build(kind, text, args.out / name, args.seed + i, args.vocab_size, args.force)]
    kept = [name for _, _, name in plan if name not in written]
    print(f"under {args.out}: wrote {', '.join(written) or 'none'}" + (f"; kept {', '.join(kept)}" if kept else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
