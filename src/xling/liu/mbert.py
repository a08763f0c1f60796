"""Liu et al.'s m-BERT itself (``bert-base-multilingual-cased`` through ``transformers``, from the
download stage's files): its word retrieval row ("Google BERT" of Figures 1 and 3, through
``xling.liu.retrieval_job``), token translation (4.2, Table 2) and XNLI with the mean difference
shift (4.3, Table 4).

The same scores as for the study's own MLMs (``xling.liu.translation_job.translation_scores``), with
m-BERT's WordPiece tokenizer in place of our BPE:

- Means: every position of the first ``sentences`` lines of each language's sample (the same
  tokenised Wikipedia lines the study's MLMs train on), read as ``[CLS] pieces [SEP]``.
- V_lang (the convert rate's token set of a language): the WordPiece tokens of the language's
  evaluated parallel rows, as the paper's Table 3 counts them (|V_en| = 9,140 on XNLI's sentences);
  with ``token_sets="training"`` those of the sample lines the means read instead.
- Parallel rows: the raw XNLI-15way sentences, tokenised by m-BERT's own tokenizer (its basic
  tokenizer splits punctuation and CJK characters itself).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Callable, Mapping, Sequence

import torch

from xling.analysis.backtranslate import model_dir
from xling.analysis.run import first_lines, write_result
from xling.liu.translation_job import token_set_sizes, translation_scores

Log = Callable[[str], None]
BERT_FILES = ("config.json", "vocab.txt")  # besides the weights: what BertForMaskedLM and its tokenizer need


class WordPieceDictionary:
    """A BERT tokenizer seen as the fairseq dictionary our code reads: ``index`` (unknown pieces ->
    ``[UNK]``), ``d[id]``, and ``bos``/``eos``/``pad``/``unk`` = ``[CLS]``/``[SEP]``/``[PAD]``/``[UNK]``."""

    def __init__(self, tokenizer) -> None:
        missing = [t for t in ("cls_token_id", "sep_token_id", "pad_token_id", "unk_token_id")
                   if getattr(tokenizer, t, None) is None]
        if missing:
            raise ValueError(f"a BERT tokenizer needs [CLS], [SEP], [PAD] and [UNK]; this one lacks {missing}")
        self.tokenizer = tokenizer

    def index(self, piece: str) -> int:
        i = self.tokenizer.convert_tokens_to_ids(piece)
        return self.tokenizer.unk_token_id if i is None else int(i)

    def __getitem__(self, i: int) -> str:
        return self.tokenizer.convert_ids_to_tokens(int(i))

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
        return self.tokenizer.tokenize(text)


def load_tokenizer(directory: Path) -> WordPieceDictionary:
    from transformers import AutoTokenizer

    return WordPieceDictionary(AutoTokenizer.from_pretrained(str(directory)))


def load_mbert(directory: Path, device: str = "cpu"):
    """(``BertForMaskedLM`` in eval mode, ``WordPieceDictionary``) of a model directory."""
    from transformers import BertForMaskedLM

    model = BertForMaskedLM.from_pretrained(str(directory))
    return model.to(device).eval(), load_tokenizer(directory)  # type: ignore[arg-type]  # transformers types .to unbound


def run_mbert_translation(files: Mapping[str, Path], texts: Mapping[str, Path], parallel: Mapping[str, Sequence[str]],
                          directions: Sequence[tuple[str, str]], layers: Sequence[int] | None, alphas: Sequence[float],
                          n_sentences: int, out_json: Path, meta: dict, max_seq_len: int = 256, batch_size: int = 64,
                          device: str = "cpu", log: Log | None = None, token_sets: str = "evaluated") -> dict:
    """``files``: file name -> path of the model's files (``config.json``, weights, ``vocab.txt``,
    ``tokenizer_config.json``); ``texts``: language -> tokenised training lines (the means);
    ``parallel``: language -> the same rows of raw parallel sentences. Writes one score per
    (direction, layer, alpha) as ``xling.liu.translation_job`` does; ``layers`` None: every layer 1..L.
    ``token_sets``: V_lang from the ``evaluated`` rows (Table 3) or the ``training`` lines."""
    if token_sets not in ("evaluated", "training"):
        raise ValueError(f"token_sets must be 'evaluated' or 'training', got {token_sets!r}")
    log = log or (lambda _m: None)
    with tempfile.TemporaryDirectory(prefix="mbert-") as tmp:
        model, d = load_mbert(model_dir(files, Path(tmp) / "model", BERT_FILES, "BERT"), device)
    num_layers = int(model.config.num_hidden_layers)
    layers = list(range(1, num_layers + 1)) if layers is None else list(layers)
    max_seq_len = min(max_seq_len, int(model.config.max_position_embeddings))
    langs = sorted({lang for pair in directions for lang in pair})
    lines = {lang: [d.pieces(line) for line in first_lines(Path(texts[lang]), n_sentences)] for lang in langs}
    pieces = {lang: [d.pieces(s) for s in parallel[lang]] for lang in langs}
    read = pieces if token_sets == "evaluated" else lines
    vocab = {lang: {p for line in read[lang] for p in line} for lang in langs}
    rows = {len(v) for v in pieces.values()}
    if len(rows) != 1:
        raise ValueError(f"m-BERT token translation: the parallel languages have different row counts {sorted(rows)}")
    scores = translation_scores(model, d, num_layers, lines, vocab, pieces, directions, layers, alphas, max_seq_len,
                                batch_size, device, log, source="m-BERT")
    return write_result(out_json, {**meta, "layers": num_layers, "rows": rows.pop(), "sentences": n_sentences,
                                   "token_sets": token_sets, **token_set_sizes(vocab, directions), "scores": scores})


# ---------------------------------------------------------------------------------------------
# XNLI with the shift (4.3, Table 4) on m-BERT itself


class BertEncoder(torch.nn.Module):
    """m-BERT as the fine-tuning code's encoder (``xling.finetune.encoder.Encoder``): one model for
    every language (nothing language-specific), ``encode`` returns its 1 + L hidden states. Sentence
    pairs are read as BERT reads them: segment 0 up to the first ``[SEP]``, segment 1 after it.
    ``language_shift`` finds the BERT model as ``.bert``."""

    def __init__(self, model, dictionary: WordPieceDictionary, languages: Sequence[str]) -> None:
        super().__init__()
        self.bert = getattr(model, "bert", model)  # the BertModel of a BertForMaskedLM
        self.dictionary = dictionary
        self.languages = list(languages)
        self.dim = int(self.bert.config.hidden_size)
        self.num_layers = int(self.bert.config.num_hidden_layers)

    def max_positions(self) -> int:
        return int(self.bert.config.max_position_embeddings)

    def encode(self, tokens: torch.Tensor, lang: str, padding_mask: torch.Tensor | None = None) -> list[torch.Tensor]:
        real = tokens.ne(self.dictionary.pad()) if padding_mask is None else ~padding_mask
        sep = tokens.eq(self.dictionary.eos()).long()
        segment = ((sep.cumsum(dim=1) - sep) > 0).long() * real.long()  # after the first [SEP]
        out = self.bert(input_ids=tokens, attention_mask=real.long(), token_type_ids=segment, output_hidden_states=True)
        return list(out.hidden_states)

    def shared_parameters(self):
        return self.bert.parameters()

    def language_specific_parameters(self, lang: str):
        return []


def wordpiece_line_words(dictionary: WordPieceDictionary) -> Callable[[str], tuple[list[str], list]]:
    """A tokenised line -> its WordPieces and the span of each whitespace word among them (the
    ``line_words`` of ``xling.analysis.words.contextual_word_vectors``): a word is itself, as our
    MLMs' words are the corpus's tokens, read as m-BERT cuts it. A word the tokenizer drops
    (control characters only) has no span."""

    def line_words(line: str) -> tuple[list[str], list[tuple[str, int, int]]]:
        pieces: list[str] = []
        spans = []
        for word in line.split():
            cut = dictionary.pieces(word)
            if cut:
                spans.append((word, len(pieces), len(pieces) + len(cut)))
                pieces += cut
        return pieces, spans

    return line_words


def load_encoder(files: Mapping[str, Path], languages: Sequence[str], device: str = "cpu") -> BertEncoder:
    """m-BERT's files (file name -> path) as a :class:`BertEncoder` in eval mode on ``device``."""
    with tempfile.TemporaryDirectory(prefix="mbert-") as tmp:
        model, d = load_mbert(model_dir(files, Path(tmp) / "model", BERT_FILES, "BERT"), device)
    return BertEncoder(model, d, languages).eval()


def wordpiece_splitter(dictionary: WordPieceDictionary) -> Callable[[list[str]], list[list[str]]]:
    """Words -> their WordPiece tokens each (the fine-tuning code's ``words_to_subwords``)."""
    return lambda words: [dictionary.pieces(w) for w in words]


def run_mbert_xnli(job, files: Mapping[str, Path], train: Path, dev: Mapping[str, Path], test: Mapping[str, Path],
                   texts: Mapping[str, Path], freeze: int, alphas: Sequence[float], n_sentences: int, out_json: Path,
                   meta: dict, batch_size: int = 64, device: str = "cpu", log: Log | None = None,
                   stanford_home: str | None = None, all_layers: bool = False) -> dict:
    """Table 4 on m-BERT: ``xling.liu.xnli_job.run_xnli`` with m-BERT's files (fine-tuned above its
    first ``freeze`` layers, the paper's 6), its means over the first ``n_sentences`` lines of each
    language's ``texts`` cut by its own tokenizer."""
    from xling.liu.xnli_job import XnliModel, run_xnli

    with tempfile.TemporaryDirectory(prefix="mbert-") as tmp:
        directory = model_dir(files, Path(tmp) / "model", BERT_FILES, "BERT")
        d, languages = load_tokenizer(directory), list(dev)
        model = XnliModel(
            load=lambda: BertEncoder(load_mbert(directory)[0], d, languages),
            words_to_subwords=lambda _lang: wordpiece_splitter(d),
            text_lines=lambda lang: [d.pieces(line) for line in first_lines(Path(texts[lang]), n_sentences)])
        return run_xnli(job, model, train, dev, test, freeze, alphas, out_json, {**meta, "sentences": n_sentences},
                        batch_size=batch_size, device=device, log=log, stanford_home=stanford_home,
                        all_layers=all_layers)
