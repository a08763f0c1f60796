"""Word vectors for the word-level alignment of paper Section 5.1.1 (Figure 4).

Three kinds of vectors for one language, each a word list with one row per word:

- ``embedding_word_vectors``: a monolingual MLM's token-embedding rows of the BPE entries that are
  whole words ("words containing only one subword", Figure 4a);
- ``contextual_word_vectors``: per layer, the mean over a word's occurrences in a corpus of the mean
  of its subwords' hidden states (Figure 4b);
- ``xling.analysis.vec.read_vec``: fastText ``wiki.xx.vec`` rows, the paper's baseline.

``align_words`` scores one pair of them on a MUSE dictionary as the paper does (iterative
normalisation, Procrustes on the training pairs, CSLS retrieval over the whole target vocabulary,
P@1 on the test pairs).
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable, Sequence

import numpy as np
import torch

from xling.analysis.align import iterative_normalize, precision_at_1, procrustes, translate
from xling.progress import progress

Segment = Callable[[list[str]], list[list[str]]]  # words -> their subwords (xling.bpe.SubwordTokenizer)
SEPARATOR = "@@"  # subword-nmt's mark on every piece but a word's last


# --- Figure 4a: embedding rows of whole words ---------------------------------------------------


def whole_words(symbols: Sequence[str], segment: Segment, skip: Iterable[str] = ()) -> list[tuple[str, int]]:
    """``(word, dictionary index)`` of the entries that BPE leaves in one piece, in dictionary order.

    An entry without the continuation mark may still be only the last piece of longer words
    (``ing`` in ``play@@ ing``); it is a whole word when segmenting it alone gives it back unchanged.
    ``skip``: specials and padding entries (``<s>``, ``madeupword0000``, ...)."""
    skip = set(skip)
    cands = [(i, s) for i, s in enumerate(symbols) if s not in skip and not s.endswith(SEPARATOR)]
    pieces = segment([s for _, s in cands]) if cands else []
    return [(s, i) for (i, s), p in zip(cands, pieces) if p == [s]]


def embedding_word_vectors(encoder, lang: str, segment: Segment) -> tuple[list[str], np.ndarray]:
    """Figure 4a's X (or Y): the token-embedding rows of ``lang``'s whole-word entries."""
    d = encoder.dictionary
    skip = [d[i] for i in range(d.nspecial)] + [s for s in d.symbols if s.startswith("madeupword")] + ["<mask>"]
    chosen = whole_words(d.symbols, segment, skip)
    inner = encoder.encoder
    weight = inner.embed_tokens[inner._emb_index(encoder.lang_id(lang))].weight.detach().cpu().numpy()
    return [w for w, _ in chosen], weight[[i for _, i in chosen]].astype(np.float32)


# --- Figure 4b: contextual vectors averaged over a corpus ---------------------------------------


def bpe_words(tokens: Sequence[str]) -> list[tuple[str, int, int]]:
    """Words of one BPE-segmented line as ``(word, first piece, end)``: a word is a run of pieces
    ending in the first piece without the continuation mark."""
    out, start = [], 0
    for i, tok in enumerate(tokens):
        if not tok.endswith(SEPARATOR):
            out.append(("".join(t[: -len(SEPARATOR)] for t in tokens[start:i]) + tok, start, i + 1))
            start = i + 1
    return out  # a dangling marked piece at the end of a line belongs to no word


Words = list[tuple[str, int, int]]  # (word, first piece, end) of one line's pieces
LineWords = Callable[[str], tuple[list[str], Words]]  # a line -> its pieces and its words' spans


def bpe_line(line: str) -> tuple[list[str], Words]:
    """A BPE-segmented line (as pretraining read it): its pieces and :func:`bpe_words`."""
    tokens = line.split()
    return tokens, bpe_words(tokens)


def piece_means(states: torch.Tensor, slot_of_pos: torch.Tensor, n_slots: int) -> torch.Tensor:
    """``[layers, n_slots, dim]`` float32: per slot, the mean of ``states`` (``[layers, B, T, dim]``)
    over the positions ``slot_of_pos`` (``[B, T]``) marks with it; -1 marks none. Every word
    occurrence of a batch at once: one index_add instead of a Python loop over words."""
    pos = slot_of_pos.flatten().to(states.device)
    keep = pos.ge(0)
    flat = states.flatten(1, 2)[:, keep].float()  # [layers, pieces, dim]
    sums = torch.zeros((flat.shape[0], n_slots, flat.shape[-1]), dtype=torch.float32, device=states.device)
    sums.index_add_(1, pos[keep], flat)
    pieces = torch.bincount(pos[keep], minlength=n_slots).clamp(min=1).to(torch.float32)
    return sums / pieces[None, :, None]


@torch.no_grad()
def contextual_word_vectors(
    encoder,
    lang: str,
    lines: Sequence[str],
    max_words: int,
    max_seq_len: int = 256,
    batch_size: int = 64,
    device: str = "cpu",
    line_words: LineWords = bpe_line,
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Per layer, the average contextual vector of the ``max_words`` most frequent words of
    ``lines`` (BPE-segmented text, as pretraining read it; or any text ``line_words`` cuts into the
    encoder's pieces and words, as a transformers tokenizer cuts them: ``xling.model.huggingface.line_words``).

    A word occurrence's vector is the mean of its pieces' states; a word's vector the mean of its
    occurrences'. Returns ``(words, counts, vectors)`` with ``vectors`` ``[1 + layers, words,
    dim]`` float32, words by decreasing count (ties alphabetically). Sums are float32 running sums on
    ``device`` (200k words x 9 layers x 768 is 5.5 GB); the occurrences a line cut at
    ``max_seq_len`` loses are not counted."""
    d = encoder.dictionary
    segmented = [line_words(line) for line in lines]
    counts = Counter(w for _, spans in segmented for w, _, _ in spans)
    if not counts:
        raise ValueError("contextual_word_vectors: the text has no words")
    vocab = sorted(counts, key=lambda w: (-counts[w], w))[:max_words]
    index = {w: i for i, w in enumerate(vocab)}
    sums: torch.Tensor | None = None  # [L+1, words, D], and the words' counts: made by the first batch
    counted: torch.Tensor | None = None
    encoder.train(False)
    pad, room = d.pad(), max_seq_len - 2  # <s> ... </s>
    order = sorted(range(len(segmented)), key=lambda i: len(segmented[i][0]))  # less padding
    for s in progress(range(0, len(order), batch_size), desc=f"word vectors {lang}", unit="batch"):
        rows = [(segmented[i][0][:room], segmented[i][1]) for i in order[s : s + batch_size]]
        rows = [r for r in rows if r[0]]
        if not rows:
            continue
        width = max(len(toks) for toks, _ in rows) + 2
        tokens = torch.full((len(rows), width), pad, dtype=torch.long)
        occ_of_pos = torch.full((len(rows), width), -1, dtype=torch.long)
        occ_word: list[int] = []
        for r, (toks, spans) in enumerate(rows):
            tokens[r, 0] = d.bos()
            tokens[r, 1 : len(toks) + 1] = torch.tensor([d.index(t) for t in toks])
            tokens[r, len(toks) + 1] = d.eos()
            for word, a, b in spans:
                if b <= len(toks) and word in index:  # a word the cut at max_seq_len split is not read
                    occ_of_pos[r, a + 1 : b + 1] = len(occ_word)
                    occ_word.append(index[word])
        if not occ_word:
            continue
        tokens = tokens.to(device)
        states = torch.stack(encoder.encode(tokens, lang, padding_mask=tokens.eq(pad)))  # [L+1, B, T, D]
        if sums is None or counted is None:
            sums = torch.zeros((states.shape[0], len(vocab), states.shape[-1]), dtype=torch.float32, device=device)
            counted = torch.zeros(len(vocab), dtype=torch.long, device=device)
        words = torch.tensor(occ_word, dtype=torch.long, device=device)
        sums.index_add_(1, words, piece_means(states, occ_of_pos, len(occ_word)))
        counted += torch.bincount(words, minlength=len(vocab))
    if sums is None or counted is None:
        raise ValueError("contextual_word_vectors: no word of the text fitted in max_seq_len")
    seen = counted.gt(0)
    vectors = (sums[:, seen] / counted[seen][None, :, None].to(torch.float32)).cpu().numpy()
    kept = [w for w, s in zip(vocab, seen.tolist()) if s]
    return kept, counted[seen].cpu().numpy(), vectors


# --- alignment on a MUSE dictionary -------------------------------------------------------------


def vocabulary(words: Sequence[str], keep: set[str] | None = None) -> tuple[list[str], list[int]]:
    """Words lowercased as MUSE reads embeddings (its dictionaries are lowercase), with the row
    index of each: a word whose lowercased form came earlier (more frequent) is dropped, and with
    ``keep``, so is every word not in it. Returns ``(words, rows)``."""
    seen, out, rows = set(), [], []
    for i, w in enumerate(words):
        low = w.lower()
        if low not in seen and (keep is None or low in keep):
            seen.add(low)
            out.append(low)
            rows.append(i)
    return out, rows


def dictionary_pairs(pairs: Iterable[tuple[str, str]], src_words: Sequence[str],
                     tgt_words: Sequence[str]) -> list[tuple[int, int]]:
    """Index pairs of the dictionary entries whose two words both have a vector, in entry order."""
    si = {w: i for i, w in enumerate(src_words)}
    ti = {w: i for i, w in enumerate(tgt_words)}
    return [(si[s], ti[t]) for s, t in pairs if s in si and t in ti]


def align_words(X: np.ndarray, Y: np.ndarray, train: Sequence[tuple[int, int]], test: Sequence[tuple[int, int]],
                norm_steps: int = 5, k: int = 10) -> dict:
    """P@1 of mapping source rows ``X`` onto target rows ``Y``: both iteratively normalised,
    W = Procrustes on the ``train`` index pairs, every test source translated to its CSLS-best row
    of all of ``Y`` (hubness measured against all of ``X`` mapped, as MUSE does); a source is right
    when that row is any of its test translations."""
    if not train:
        raise ValueError("align_words: no training pair has both words in the vocabularies")
    if not test:
        raise ValueError("align_words: no test pair has both words in the vocabularies")
    Xn, Yn = iterative_normalize(X, norm_steps), iterative_normalize(Y, norm_steps)
    si, ti = (np.array(c) for c in zip(*train))
    W = procrustes(Xn[si], Yn[ti])
    gold: dict[int, set[int]] = {}
    for s, t in test:
        gold.setdefault(s, set()).add(t)
    sources = sorted(gold)
    mapped = Xn @ W
    pred = translate(mapped[sources], Yn, method="csls", k=min(k, len(Yn), len(Xn)), sources=mapped)
    return {"p_at_1": precision_at_1(pred, [gold[s] for s in sources]), "train_pairs": len(train),
            "test_sources": len(sources), "vocab": [len(X), len(Y)]}


def align_both_ways(src: tuple[list[str], np.ndarray], tgt: tuple[list[str], np.ndarray],
                    train: Sequence[tuple[str, str]], test: Sequence[tuple[str, str]],
                    norm_steps: int = 5, k: int = 10) -> dict:
    """``align_words`` in MUSE's direction (source -> target, e.g. en -> fr) and the reverse, the
    dictionary's pairs swapped. ``src``/``tgt``: (words, [words, dim] vectors)."""
    out = {}
    for name, (a, b), flip in (("forward", (src, tgt), False), ("reverse", (tgt, src), True)):
        tr = [(t, s) for s, t in train] if flip else list(train)
        te = [(t, s) for s, t in test] if flip else list(test)
        out[name] = align_words(a[1], b[1], dictionary_pairs(tr, a[0], b[0]), dictionary_pairs(te, a[0], b[0]),
                                norm_steps, k)
    return out
