"""Liu et al.'s unsupervised token translation (4.2, Table 2, Figures 7-8) for one of the study's
MLMs: the mean of each language per layer over its training text, then, for every direction s -> t,
layer l and weight alpha, the parallel test sentences of s read with alpha x D(s -> t) added at
layer l and decoded by the MLM head at every position, scored against the t sentences.

- Means: every position of the first ``sentences`` lines of a language's BPE training text,
  ``<s>``/``</s>`` included ("all the context-dependent representation", 4.1.1).
- Outputs: the argmax piece at each position of the input sentence (not ``<s>``/``</s>``).
- Convert rate: over all output pieces; pieces of both token sets are left out. V_lang, the paper's
  "token set of the language", is that of the evaluated text: the pieces of the language's
  parallel rows (Table 3 counts |V_en| = 9,140 on XNLI's sentences, a few thousand types, not a
  vocabulary of 10^5). ``liu2020.translation.token_sets: training`` reads the pieces of the
  training text instead (``dict.<lang>.txt`` of binarisation), where most outputs are shared.
- BLEU-1: corpus BLEU on pieces against the t sentence's pieces.
- ``alpha = 0`` (no shift) is scored too: the model copying its input, the baseline of both scores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping, Sequence

import torch

from xling.analysis.language_shift import language_means, mean_difference, translate_tokens
from xling.io import first_lines, write_result
from xling.metrics.translation import bleu1, convert_rate, vocabulary_of

Log = Callable[[str], None]


def read_piece_set(path: Path) -> set[str]:
    """The pieces listed in a fairseq-style dictionary (``piece count`` per line)."""
    with open(path, encoding="utf-8") as fh:
        return {line.split(" ", 1)[0] for line in fh if line.strip()}


def pad_batches(ids: Sequence[list[int]], pad: int, batch_size: int):
    """``(rows, input_ids, attention_mask)`` batches of id sequences, in order."""
    for s in range(0, len(ids), batch_size):
        chunk = ids[s : s + batch_size]
        width = max(len(x) for x in chunk)
        tokens = torch.full((len(chunk), width), pad, dtype=torch.long)
        mask = torch.zeros((len(chunk), width), dtype=torch.long)
        for r, seq in enumerate(chunk):
            tokens[r, : len(seq)] = torch.tensor(seq)
            mask[r, : len(seq)] = 1
        yield range(s, s + len(chunk)), tokens, mask


def line_ids(dictionary, pieces: list[str], max_seq_len: int) -> list[int]:
    """``<s> pieces </s>`` as ids, cut to ``max_seq_len``."""
    body = [dictionary.index(p) for p in pieces][: max_seq_len - 2]
    return [dictionary.bos(), *body, dictionary.eos()]


def piece_means(model, dictionary, lines: Sequence[list[str]], lang: str, max_seq_len: int, batch_size: int,
                device: str, log: Log | None = None) -> torch.Tensor:
    """The mean of ``lang`` per layer ([L + 1, D]) over every position of ``lines`` (each a list of
    the model's pieces), read as ``<s> pieces </s>`` (BERT: ``[CLS] pieces [SEP]``)."""
    ids = [line_ids(dictionary, pieces, max_seq_len) for pieces in lines]
    batches = ((t.to(device), m.to(device)) for _, t, m in pad_batches(ids, dictionary.pad(), batch_size))
    means = language_means(model, batches, lang=lang)
    if log:
        log(f"mean of {lang} over {len(lines)} sentences")
    return means


def translate_all(model, dictionary, ids: Sequence[list[int]], src: str, tgt: str, layer: int, alpha: float,
                  shift: torch.Tensor, batch_size: int, device: str) -> list[list[str]]:
    """The argmax pieces of every sentence (its own positions only) under the shift."""
    d = dictionary
    out: list[list[str]] = [[] for _ in ids]
    for rows, tokens, mask in pad_batches(ids, d.pad(), batch_size):
        pred = translate_tokens(model, tokens.to(device), mask.to(device), layer, alpha, shift, lang=src,
                                out_lang=tgt).cpu()
        for r, i in enumerate(rows):
            out[i] = [d[int(t)] for t in pred[r, 1 : len(ids[i]) - 1]]
    return out


def parallel_pieces(way15_root: Path, langs: Sequence[str], rows: int, settings: dict, bpe_manifest: Path
                    ) -> dict[str, list[list[str]]]:
    """The first ``rows`` XNLI-15way rows of ``langs``, tokenised as the corpus was and segmented
    with the model's BPE: language -> one list of pieces per row."""
    from xling.analysis.run import fifteen_way

    raw = fifteen_way(way15_root, list(langs), rows)
    return {lang: bpe_pieces(raw[lang], settings[lang], bpe_manifest, lang) for lang in langs}


def bpe_pieces(sentences: Sequence[str], settings, bpe_manifest: Path, lang: str) -> list[list[str]]:
    """Raw sentences tokenised as ``lang``'s corpus was (``settings``: its TokenizeSettings) and cut
    into the model's BPE pieces: one list of pieces per sentence."""
    from xling.bpe import SubwordTokenizer
    from xling.model.text import line_and_word_tokenizers

    lines, _ = line_and_word_tokenizers(settings)
    to_pieces = SubwordTokenizer(Path(bpe_manifest), lang).words_to_subwords
    return [[p for word in to_pieces(words) for p in word] for words in lines(list(sentences))]


def token_sets(parallel: dict[str, list[list[str]]], vocabs: dict[str, Path] | None = None) -> dict[str, set[str]]:
    """V_lang of every language of ``parallel``: the pieces of its parallel rows (the evaluated
    text, as Table 3 counts them), or with ``vocabs`` (language -> ``dict.<lang>.txt``) the pieces
    of its training text."""
    if vocabs is None:
        return {lang: vocabulary_of(rows) for lang, rows in parallel.items()}
    return {lang: read_piece_set(vocabs[lang]) for lang in parallel}


def token_set_sizes(vocab: dict[str, set[str]], directions: Sequence[tuple[str, str]]) -> dict:
    """Table 3's numbers of the sets a result used: |V_lang| per language and |V_s ∩ V_t| per
    direction."""
    return {"vocab_sizes": {lang: len(v) for lang, v in sorted(vocab.items())},
            "vocab_overlap": {f"{s}-{t}": len(vocab[s] & vocab[t]) for s, t in directions}}


def run_liu_translation(checkpoint: Path, dictionary: Path, texts: dict[str, Path],
                        parallel: dict[str, list[list[str]]], directions: Sequence[tuple[str, str]],
                        layers: Sequence[int], alphas: Sequence[float], n_sentences: int, out_json: Path, meta: dict,
                        vocabs: dict[str, Path] | None = None, max_seq_len: int = 256, batch_size: int = 64,
                        device: str = "cpu", log: Log | None = None) -> dict:
    """``texts``: language -> BPE training text (its means); ``parallel``: language -> the same
    rows of parallel sentences as BPE pieces; ``vocabs``: language -> ``dict.<lang>.txt``, only
    when V_lang is the training text's (None: the parallel rows'). Writes one score per
    (direction, layer, alpha), ``alpha = 0`` once per direction, and the token sets' sizes."""
    from xling.model import PretrainedModel

    log = log or (lambda _m: None)
    encoder = PretrainedModel.xling(checkpoint, dictionary).checkpoint_encoder(device)
    max_seq_len = min(max_seq_len, encoder.encoder.max_positions())
    langs = sorted({l for pair in directions for l in pair})
    lines = {lang: [line.split() for line in first_lines(Path(texts[lang]), n_sentences)] for lang in langs}
    vocab = token_sets({lang: parallel[lang] for lang in langs}, vocabs)
    scores = translation_scores(encoder, encoder.dictionary, encoder.num_layers, lines, vocab, parallel, directions,
                                layers, alphas, max_seq_len, batch_size, device, log, source=str(checkpoint))
    return write_result(out_json, {**meta, "layers": encoder.num_layers, "rows": len(next(iter(parallel.values()))),
                                   "sentences": n_sentences, "token_sets": "training" if vocabs else "evaluated",
                                   **token_set_sizes(vocab, directions), "scores": scores})


def translation_scores(model, dictionary, num_layers: int, lines: Mapping[str, Sequence[list[str]]],
                       vocab: Mapping[str, set[str]], parallel: Mapping[str, list[list[str]]],
                       directions: Sequence[tuple[str, str]], layers: Sequence[int], alphas: Sequence[float],
                       max_seq_len: int, batch_size: int, device: str, log: Log,
                       source: str = "the model") -> list[dict]:
    """The scores of any MLM (ours, or m-BERT through ``xling.liu.mbert``): ``lines`` (language ->
    sentences as the model's pieces) give the means, ``vocab`` each language's token set (the
    convert rate's V_lang, :func:`token_sets`), ``parallel`` the same rows in every language. ``dictionary`` maps pieces
    and ids as a fairseq dictionary does (``index``, ``[]``, ``bos``, ``eos``, ``pad``)."""
    d = dictionary
    bad = [l for l in layers if not 1 <= l <= num_layers]
    if bad:
        raise ValueError(f"token translation: layers {bad} outside 1..{num_layers} of {source}")
    langs = sorted({l for pair in directions for l in pair})
    means = {lang: piece_means(model, d, lines[lang], lang, max_seq_len, batch_size, device, log) for lang in langs}
    results = []
    for src, tgt in directions:
        shift = mean_difference(means[src], means[tgt])
        ids = [line_ids(d, pieces, max_seq_len) for pieces in parallel[src]]
        refs = [" ".join(p) for p in parallel[tgt]]

        def score(layer: int, alpha: float) -> dict:
            hyps = translate_all(model, d, ids, src, tgt, layer, alpha, shift, batch_size, device)
            try:
                rate = convert_rate(hyps, vocab[src], vocab[tgt])
            except ValueError:  # every output piece in both vocabularies: no language to tell
                rate = None
            return {"src": src, "tgt": tgt, "layer": layer, "alpha": alpha, "convert_rate": rate,
                    "bleu1": bleu1([" ".join(h) for h in hyps], refs)}

        unshifted = score(layers[-1], 0.0)
        shifted = [score(layer, float(alpha)) for layer in layers for alpha in alphas]
        results += [unshifted, *shifted]
        best = max(shifted, key=lambda r: r["bleu1"]) if shifted else unshifted
        log(f"{src}->{tgt}: best BLEU-1 {best['bleu1']:.2f} (layer {best['layer']}, alpha {best['alpha']:g}); "
            f"no shift: BLEU-1 {unshifted['bleu1']:.2f}")
    return results
