"""Liu et al.'s word retrieval (3.1.1) for one model and data size: MRR from the source language's
words to each other language's on the MUSE dictionaries, in the model's own space (no mapping).

Word vectors come from the same text for every model: the first sentences of each language's BPE
training text (for m-BERT, the same sentences before BPE).

- MLM: a word's contextual vectors averaged over its occurrences there ("we simply average
  embeddings in all contexts"), an occurrence being the mean of its pieces' states, per layer
  (``xling.analysis.words.contextual_word_vectors``).
- m-BERT (the paper's "Google BERT" of Figures 1 and 3): the same, with each word of the tokenised
  line cut into m-BERT's WordPieces and the line read as ``[CLS] pieces [SEP]`` (``xling.liu.mbert``).
- word2vec / GloVe (trained on BPE pieces, as the paper's were on WordPiece): a word's vector is the
  mean of its pieces' vectors; a word with a piece left out of the static vocabulary has none.

Words are lowercased as MUSE's dictionaries are, the most frequent cased form standing for the word
(``xling.analysis.words.vocabulary``), as in Figure 4."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from xling.analysis.vec import read_vec
from xling.analysis.word_retrieval import dictionary_retrieval
from xling.analysis.words import bpe_words, vocabulary
from xling.codeswitch.dictionary import read_muse
from xling.io import first_lines, write_result

Log = Callable[[str], None]


def static_word_vectors(lines: Sequence[str], piece_words: Sequence[str], piece_vectors: np.ndarray,
                        max_words: int) -> tuple[list[str], np.ndarray]:
    """Of the ``max_words`` most frequent words of BPE ``lines`` (ties alphabetically), those whose
    pieces all have a static vector, each the mean of its pieces'. Returns ``(words, [1, words, dim])``
    so that static and contextual spaces have the same layer axis."""
    index = {w: i for i, w in enumerate(piece_words)}
    counts: Counter[str] = Counter()
    pieces: dict[str, list[str]] = {}
    for line in lines:
        tokens = line.split()
        for word, a, b in bpe_words(tokens):
            counts[word] += 1
            pieces.setdefault(word, tokens[a:b])  # subword-nmt segments a word the same everywhere
    words, rows = [], []
    for word in sorted(counts, key=lambda w: (-counts[w], w))[:max_words]:
        ids = [index.get(p) for p in pieces[word]]
        known = [i for i in ids if i is not None]
        if len(known) == len(ids):
            words.append(word)
            rows.append(piece_vectors[known].mean(axis=0))
    if not words:
        raise ValueError("static_word_vectors: no word of the text has vectors for all its pieces")
    return words, np.stack(rows)[None].astype(np.float32)


def _lowercased(words: Sequence[str], vectors: np.ndarray, keep: set[str]) -> tuple[list[str], np.ndarray]:
    low, rows = vocabulary(words, keep)
    return low, vectors[:, rows]


def run_liu_retrieval(model: dict, texts: dict[str, Path], dictionaries: dict[str, Path], src: str, n_sentences: int,
                      max_words: int, out_json: Path, meta: dict, max_seq_len: int = 256, batch_size: int = 64,
                      device: str = "cpu", log: Log | None = None) -> dict:
    """``model``: ``{"kind": "mlm", "checkpoint", "dictionary"}``, ``{"kind": "static", "vectors"}``
    or ``{"kind": "mbert", "files"}`` (file name -> path of m-BERT's files); ``texts``: language ->
    BPE training text (the source language's included; m-BERT: the tokenised text); ``dictionaries``:
    target language -> MUSE dictionary ``src -> target``. Writes MRR per target language and layer
    (one "layer" for a static model)."""
    log = log or (lambda _m: None)
    pairs = {lang: list(read_muse(path)) for lang, path in dictionaries.items()}
    if model["kind"] == "static":
        piece_words, piece_vectors = read_vec(Path(model["vectors"]))

        def vectors(lang: str, lines: list[str]) -> tuple[list[str], np.ndarray]:
            return static_word_vectors(lines, piece_words, piece_vectors, max_words)
    elif model["kind"] == "mlm":
        from xling.analysis.words import contextual_word_vectors
        from xling.model import PretrainedModel

        encoder = PretrainedModel.xling(model["checkpoint"], model["dictionary"]).checkpoint_encoder(device)
        # a sentence longer than the model's positions is cut there, as fine-tuning cuts it
        max_seq_len = min(max_seq_len, encoder.encoder.max_positions())

        def vectors(lang: str, lines: list[str]) -> tuple[list[str], np.ndarray]:
            words, _counts, vecs = contextual_word_vectors(encoder, lang, lines, max_words, max_seq_len, batch_size,
                                                           device)
            return words, vecs
    elif model["kind"] == "mbert":
        from xling.analysis.words import contextual_word_vectors
        from xling.liu.mbert import mbert_model
        from xling.model.huggingface import line_words as tokenizer_line_words

        with tempfile.TemporaryDirectory(prefix="mbert-") as tmp:
            files = {k: Path(v) for k, v in model["files"].items()}
            bert = mbert_model(files, Path(tmp) / "model").transformers_encoder(device, [src, *dictionaries])
        max_seq_len = min(max_seq_len, bert.max_positions())
        line_words = tokenizer_line_words(bert.dictionary)

        def vectors(lang: str, lines: list[str]) -> tuple[list[str], np.ndarray]:
            words, _counts, vecs = contextual_word_vectors(bert, lang, lines, max_words, max_seq_len, batch_size,
                                                           device, line_words=line_words)
            return words, vecs
    else:
        raise ValueError(f"unknown model kind {model['kind']!r} (expected mlm, static or mbert)")

    def space(lang: str, keep: set[str]) -> tuple[list[str], np.ndarray]:
        lines = first_lines(Path(texts[lang]), n_sentences)
        words, vecs = vectors(lang, lines)
        # only the dictionary's words are kept: a paper-size MLM space is layers x 50k x 768
        out = _lowercased(words, vecs, keep)
        log(f"{lang}: {len(out[0])} of {len(words)} words from {len(lines)} sentences are dictionary words")
        return out

    src_words, src_vecs = space(src, {s for p in pairs.values() for s, _ in p})
    per_lang = {}
    for lang, lang_pairs in pairs.items():
        tgt_words, tgt_vecs = space(lang, {t for _, t in lang_pairs})
        scores = [dictionary_retrieval(lang_pairs, (src_words, src_vecs[i]), (tgt_words, tgt_vecs[i]))
                  for i in range(src_vecs.shape[0])]
        per_lang[lang] = {"mrr": [s["mrr"] for s in scores],
                          **{k: scores[0][k] for k in ("pairs", "candidates", "missing_pairs", "identical_pairs")}}
        log(f"{src}->{lang}: MRR per layer {' '.join(f'{m:.3f}' for m in per_lang[lang]['mrr'])} "
            f"({per_lang[lang]['pairs']} pairs)")
    return write_result(out_json, {**meta, "kind": model["kind"], "source": src, "layers": int(src_vecs.shape[0]),
                                   "sentences": n_sentences, "languages": per_lang})
