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

from xling.analysis.backtranslate import model_dir
from xling.io import first_lines, write_result
from xling.liu.translation_job import token_set_sizes, translation_scores
from xling.model import PretrainedModel
from xling.model.huggingface import load_masked_lm

Log = Callable[[str], None]
BERT_FILES = ("config.json", "vocab.txt")  # besides the weights: what BertForMaskedLM and its tokenizer need


def mbert_model(files: Mapping[str, Path], directory: Path) -> PretrainedModel:
    """m-BERT's files (file name -> path, from the download stage) laid out in ``directory`` as a
    ``transformers`` model."""
    return PretrainedModel.transformers(model_dir(files, directory, BERT_FILES, "BERT"))


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
        model, d = load_masked_lm(mbert_model(files, Path(tmp) / "model").path, device)
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


def run_mbert_xnli(job, files: Mapping[str, Path], train: Path, dev: Mapping[str, Path], test: Mapping[str, Path],
                   texts: Mapping[str, Path], freeze: int, alphas: Sequence[float], n_sentences: int, out_json: Path,
                   meta: dict, batch_size: int = 64, device: str = "cpu", log: Log | None = None,
                   stanford_home: str | None = None, all_layers: bool = False) -> dict:
    """Table 4 on m-BERT: ``xling.liu.xnli_job.run_xnli`` with m-BERT's files (fine-tuned above its
    first ``freeze`` layers, the paper's 6), its means over the first ``n_sentences`` lines of each
    language's ``texts`` cut by its own tokenizer."""
    from xling.liu.xnli_job import run_xnli, xnli_model

    with tempfile.TemporaryDirectory(prefix="mbert-") as tmp:
        model = xnli_model(mbert_model(files, Path(tmp) / "model"), list(dev), texts, n_sentences)
        return run_xnli(job, model, train, dev, test, freeze, alphas, out_json, {**meta, "sentences": n_sentences},
                        batch_size=batch_size, device=device, log=log, stanford_home=stanford_home,
                        all_layers=all_layers)
