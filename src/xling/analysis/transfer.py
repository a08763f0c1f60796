"""Figure 5 (paper 5.1.2) and Appendix Figure 8: zero-shot NER and parsing through contextual
alignment of two monolingual models, against the bilingual model.

- Word pairs: one-to-one fast_align links on parallel sentences (``xling.analysis.fastalign``).
- ``fit_maps``: per layer i, both sides' linked words (a word = the mean of its subwords' states)
  are iteratively normalised and W_i (target layer i -> English layer i) is Procrustes on them.
- ``StackedEncoder``: a pretrained encoder cut after layer i and frozen (then, for the aligned
  models, normalised and mapped by W_i), under new Transformer layers that fine-tuning trains;
  it is an ``xling.finetune.Encoder``, so the Table 1 recipe trains it unchanged.
- ``run_transfer``: train the new layers and the task head on English for every grid cell, then
  run the target's test sentences through the target's own bottom (and W_i) and the same top.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, cast

import numpy as np
import torch
from torch import nn

from xling.analysis.align import apply_iterative_normalization, fit_iterative_normalization, procrustes
from xling.analysis.words import piece_means
from xling.io import atomic_path, atomic_write, write_result
from xling.model.encoder import Vocabulary
from xling.model.text import WordEncoder, WordsToSubwords

if TYPE_CHECKING:
    from xling.finetune.job import FinetuneJob
    from xling.model.checkpoint import LoadedEncoder

Log = Callable[[str], None]


# --- the maps W_i ---------------------------------------------------------------------------------


@torch.no_grad()
def linked_word_states(encoder, lang: str, sentences: Sequence[Sequence[str]], words: Sequence[Sequence[int]],
                       words_to_subwords: WordsToSubwords, max_seq_len: int = 256, batch_size: int = 32,
                       device: str = "cpu") -> np.ndarray:
    """``[1 + layers, n, dim]`` float32: for every requested word (``words[s]`` = word indices of
    sentence ``s``, in order), the mean of its subwords' states at every layer. A word cut by
    ``max_seq_len`` raises: the links must only name words that fit."""
    enc = WordEncoder(encoder.dictionary, words_to_subwords, max_seq_len)
    encoded = [enc.encode_words(list(s)) for s in sentences]
    pad = encoder.dictionary.pad()
    encoder.train(False)
    order = [(s, k) for s, ks in enumerate(words) for k in ks]
    slot = {key: n for n, key in enumerate(order)}
    result = None
    for start in range(0, len(sentences), batch_size):
        idx = [s for s in range(start, min(start + batch_size, len(sentences))) if words[s]]
        if not idx:
            continue
        width = max(len(encoded[s].ids) for s in idx)
        tokens = torch.full((len(idx), width), pad, dtype=torch.long)
        for r, s in enumerate(idx):
            tokens[r, : len(encoded[s].ids)] = torch.tensor(encoded[s].ids)
        slot_of_pos = torch.full((len(idx), width), -1, dtype=torch.long)
        slots: list[int] = []
        for r, s in enumerate(idx):
            e = encoded[s]
            ends = e.first[1:] + [len(e.ids) - 1]
            for k in words[s]:
                if k >= len(e.first):
                    raise ValueError(f"sentence {s}: word {k} does not fit in max_seq_len {max_seq_len}")
                slot_of_pos[r, e.first[k] : ends[k]] = len(slots)
                slots.append(slot[(s, k)])
        tokens = tokens.to(device)
        states = torch.stack(encoder.encode(tokens, lang, padding_mask=tokens.eq(pad)))  # [L+1, B, T, D]
        if result is None:
            result = np.empty((states.shape[0], len(order), states.shape[-1]), dtype=np.float32)
        result[:, slots] = piece_means(states, slot_of_pos, len(slots)).cpu().numpy()
    if result is None:
        raise ValueError("linked_word_states: no linked word to encode")
    return result


def fit_maps(tgt: np.ndarray, src: np.ndarray, norm_steps: int) -> dict[str, np.ndarray]:
    """Per layer, the normalisations of both sides and W (target -> source, ``x @ W``) learnt on
    the linked words' vectors (``[layers, links, dim]`` each, row n of both = one link)."""
    if tgt.shape != src.shape:
        raise ValueError(f"fit_maps: the two sides' vectors differ in shape: {tgt.shape} vs {src.shape}")
    layers, means_t, means_s, maps = tgt.shape[0], [], [], []
    for i in range(layers):
        mt, ms = fit_iterative_normalization(tgt[i], norm_steps), fit_iterative_normalization(src[i], norm_steps)
        maps.append(procrustes(apply_iterative_normalization(tgt[i], mt), apply_iterative_normalization(src[i], ms)))
        means_t.append(mt)
        means_s.append(ms)
    return {"W": np.stack(maps), "means_target": np.stack(means_t), "means_source": np.stack(means_s)}


# --- the encoder of the task models ---------------------------------------------------------------


class IterNorm(nn.Module):
    """``apply_iterative_normalization`` on the last axis, with fitted means (steps x dim)."""

    means: torch.Tensor  # a buffer

    def __init__(self, means: np.ndarray):
        super().__init__()
        self.register_buffer("means", torch.as_tensor(np.asarray(means), dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for mu in self.means:
            x = nn.functional.normalize(x, dim=-1) - mu
        return nn.functional.normalize(x, dim=-1)


class Bottom(nn.Module):
    """Layers 0..``layer`` of a pretrained encoder for one language, frozen (and kept in eval mode:
    no dropout), then optionally normalised and mapped by W."""

    W: torch.Tensor | None  # a buffer where given

    def __init__(self, encoder, lang: str, layer: int, means: np.ndarray | None = None, W: np.ndarray | None = None):
        super().__init__()
        if not 0 <= layer <= encoder.num_layers:
            raise ValueError(f"layer {layer} is not in 0..{encoder.num_layers}")
        self.encoder, self.lang, self.layer = encoder, lang, layer
        for p in self.encoder.parameters():
            p.requires_grad_(False)
        self.norm = IterNorm(means) if means is not None else None
        if W is not None:
            self.register_buffer("W", torch.as_tensor(np.asarray(W), dtype=torch.float32))
        else:
            self.W = None

    def train(self, mode: bool = True):
        super().train(mode)
        self.encoder.train(False)  # frozen means frozen: no dropout either
        return self

    def forward(self, tokens: torch.Tensor, padding_mask: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            x = self.encoder.encode(tokens, self.lang, padding_mask=padding_mask)[self.layer]
            if self.norm is not None:
                x = self.norm(x)
            if self.W is not None:
                x = x @ self.W
        return x


class StackedEncoder(nn.Module):
    """``bottom`` under ``top`` (new Transformer layers) as an ``xling.finetune.Encoder``: only the
    top layers are shared (trainable) parameters."""

    def __init__(self, bottom: Bottom, top: nn.ModuleList, dictionary: Vocabulary):
        super().__init__()
        self.bottom, self.top, self.dictionary = bottom, top, dictionary
        self.languages = [bottom.lang]
        self.dim = cast(nn.TransformerEncoderLayer, top[0]).linear1.in_features

    def encode(self, tokens, lang, padding_mask=None) -> list[torch.Tensor]:
        if lang != self.bottom.lang:
            raise KeyError(f"this stack reads {self.bottom.lang!r}, not {lang!r}")
        x = self.bottom(tokens, padding_mask)
        states = [x]
        mask = padding_mask if padding_mask is not None and padding_mask.any() else None
        for layer in self.top:
            x = layer(x, src_key_padding_mask=mask)
            states.append(x)
        return states

    def shared_parameters(self):
        return list(self.top.parameters())

    def language_specific_parameters(self, lang):
        return []


def new_layers(dim: int, heads: int, ffn: int, n: int = 4, dropout: float = 0.1) -> nn.ModuleList:
    """The task model's own Transformer layers (paper 5.1.2: 4 layers, GELU, dropout 0.1)."""
    return nn.ModuleList(nn.TransformerEncoderLayer(dim, heads, ffn, dropout, activation="gelu", batch_first=True)
                         for _ in range(n))


# --- one job ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    """One language's bottom: its loaded encoder, the language it reads, its subword segmentation,
    and (aligned models) its normalisation means and map for the job's layer."""

    encoder: LoadedEncoder
    lang: str
    words_to_subwords: WordsToSubwords
    means: np.ndarray | None = None
    W: np.ndarray | None = None


def run_transfer(job: FinetuneJob, grid: Sequence[Mapping[str, Any]], layer: int, english: Side,
                 targets: dict[str, tuple[Side, Path]], files, top_k: int, top: dict, device: str = "cpu",
                 stanford_home: str | None = None, log: Log | None = None) -> dict:
    """Train the new layers and head on English for each ``grid`` cell (its mapping, as the rule's
    params give it; ``job``: the job whose ``hp`` is replaced per cell), keep the best epoch by
    English dev, then test each target (``targets``: lang -> (its side, its test file)). The result
    per target is the mean over the ``top_k`` cells best on English dev (Table 1's selection)."""
    from xling.finetune.examples import TaskData, load_split
    from xling.finetune.job import Hyperparameters
    from xling.finetune.loop import ModuleCell, evaluate, set_seed, train_cells
    from xling.finetune.tasks import TASKS

    log = log or (lambda _m: None)
    t0 = time.time()
    # The data is encoded once for every cell: it depends on the labels fitted on the training set,
    # not on the cell's hyperparameters.
    hps = [Hyperparameters.of(cell) for cell in grid]
    fitted = TASKS[job.task](hps[0])
    d_en = english.encoder.dictionary
    items, trunc = {}, {}
    for name in ("train", "en_dev"):
        items[name], trunc[name] = load_split(job, fitted, name, getattr(files, name), english.lang, d_en,
                                              english.words_to_subwords, stanford_home)
    tgt_items = {lang: load_split(job, fitted, "tgt_test", path, side.lang, side.encoder.dictionary,
                                  side.words_to_subwords, stanford_home)[0] for lang, (side, path) in targets.items()}
    cells = []
    for cell, hp in zip(grid, hps):
        cell_job = dataclasses.replace(job, hp=hp)
        set_seed(job.seed)
        task = copy.copy(fitted)
        task.hp = hp
        top_layers = new_layers(top["dim"], top["heads"], top["ffn"], top["layers"], top["dropout"]).to(device)
        stack = StackedEncoder(Bottom(english.encoder, english.lang, layer, english.means, english.W), top_layers,
                               d_en).to(device)
        head = task.make_head(stack.dim).to(device)
        run = train_cells([cell_job], task, ModuleCell(task, stack, head, stack.shared_parameters(), device),
                          TaskData(items, trunc), log)[0]
        en_dev = evaluate(task, stack, head, items["en_dev"], english.lang, device)[task.metric]
        scores = {}
        for lang, (side, _) in targets.items():
            view = StackedEncoder(Bottom(side.encoder, side.lang, layer, side.means, side.W), top_layers,
                                  side.encoder.dictionary).to(device)
            scores[lang] = evaluate(task, view, head, tgt_items[lang], side.lang, device)[task.metric]
        log(f"cell {dict(cell)}: en dev {en_dev:.2f}; " + ", ".join(f"{k} {v:.2f}" for k, v in scores.items()))
        cells.append({"hp": dict(cell), "en_dev": en_dev, "tgt_test": scores, "best_epoch": run["best_epoch"]})
    best = sorted(cells, key=lambda c: -c["en_dev"])[:top_k]
    return {
        "task": job.task, "metric": TASKS[job.task].metric, "layer": layer, "top_k": top_k,
        "tgt_test": {lang: float(np.mean([c["tgt_test"][lang] for c in best])) for lang in targets},
        "en_dev": float(np.mean([c["en_dev"] for c in best])), "cells": cells,
        "timing_s": round(time.time() - t0, 3),
    }


# --- the jobs before training: links and maps ---------------------------------------------------


def write_links(path: Path, src: list[list[str]], tgt: list[list[str]], links: list[list[tuple[int, int]]]) -> None:
    """``src tokens<TAB>tgt tokens<TAB>links`` per parallel row (links ``i-j``, one-to-one)."""
    with atomic_write(path) as fh:
        for s, t, l in zip(src, tgt, links):
            fh.write(" ".join(s) + "\t" + " ".join(t) + "\t" + " ".join(f"{i}-{j}" for i, j in l) + "\n")


def read_links(path: Path) -> tuple[list[list[str]], list[list[str]], list[list[tuple[int, int]]]]:
    from xling.analysis.fastalign import parse_links
    from xling.errors import InputError

    src, tgt, links = [], [], []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 3:
                raise InputError(path, n, "three tab-separated fields: source tokens, target tokens, links",
                                 line[:80].rstrip("\n"))
            s, t, l = fields[0].split(), fields[1].split(), parse_links(fields[2], (Path(path), n))
            if any(i >= len(s) or j >= len(t) for i, j in l):
                raise InputError(path, n, f"links within {len(s)} source and {len(t)} target tokens", fields[2][:80])
            src.append(s)
            tgt.append(t)
            links.append(l)
    return src, tgt, links


def run_links(pair: str, way15_root: Path, rows: int, settings: dict, tools: dict[str, Path], out: Path,
              aligner: str = "fast_align", log: Log | None = None) -> dict:
    """One-to-one links (``aligner`` both ways, grow-diag-final-and) of the first ``rows``
    XNLI-15way rows of ``pair`` (src-tgt), both sides tokenised as their pretraining corpora were
    (``settings``: lang -> TokenizeSettings)."""
    from xling.analysis.fastalign import align, one_to_one
    from xling.analysis.run import fifteen_way
    from xling.model.text import line_and_word_tokenizers

    log = log or (lambda _m: None)
    src, tgt = pair.split("-")
    sents = fifteen_way(way15_root, [src, tgt], rows)
    tok = {lang: line_and_word_tokenizers(settings[lang])[0](sents[lang]) for lang in (src, tgt)}
    links = [one_to_one(l) for l in align(tok[src], tok[tgt], tools, aligner=aligner)]
    write_links(out, tok[src], tok[tgt], links)
    n = sum(map(len, links))
    log(f"{pair}: {n} one-to-one {aligner} links in {len(links)} sentence pairs")
    return {"rows": len(links), "links": n, "aligner": aligner}


def _fitting(links, src_tok, tgt_tok, fits_src, fits_tgt):
    """Word indices per row (source side, target side) of the links whose two words fit."""
    a, b = [], []
    for s, t, l in zip(src_tok, tgt_tok, links):
        ns, nt = fits_src(s), fits_tgt(t)
        kept = [(i, j) for i, j in l if i < ns and j < nt]
        a.append([i for i, _ in kept])
        b.append([j for _, j in kept])
    return a, b


def words_that_fit(encoder, words_to_subwords: WordsToSubwords, max_seq_len: int) -> Callable[[list[str]], int]:
    enc = WordEncoder(encoder.dictionary, words_to_subwords, max_seq_len)
    return lambda words: len(enc.encode_words(words).first)


def run_maps(links_path: Path, sides: dict[str, tuple[object, str, WordsToSubwords]], norm_steps: int, out: Path,
             max_seq_len: int = 256, batch_size: int = 32, device: str = "cpu", log: Log | None = None) -> dict:
    """W_i for every layer from the links of one pair: ``sides`` = {"source": (encoder, lang,
    words_to_subwords), "target": (...)} (two monolingual models, or one bilingual model read as
    either language). Written as an npz: W, means_source, means_target (per layer), links."""
    log = log or (lambda _m: None)
    src_tok, tgt_tok, links = read_links(links_path)
    (se, sl, sw), (te, tl, tw) = sides["source"], sides["target"]
    ws, wt = _fitting(links, src_tok, tgt_tok, words_that_fit(se, sw, max_seq_len), words_that_fit(te, tw, max_seq_len))
    xs = linked_word_states(se, sl, src_tok, ws, sw, max_seq_len, batch_size, device)
    xt = linked_word_states(te, tl, tgt_tok, wt, tw, max_seq_len, batch_size, device)
    maps = fit_maps(xt, xs, norm_steps)
    with atomic_path(out) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, W=maps["W"], means_target=maps["means_target"], means_source=maps["means_source"],
                 links=np.int64(xs.shape[1]))
    log(f"maps for {xs.shape[0]} layers from {xs.shape[1]} links")
    return {"links": int(xs.shape[1]), "layers": int(xs.shape[0])}


# --- one Figure 5 job: the three models of one (task, pair, layer) --------------------------------

MODELS = ("mlm_align", "bimlm", "bimlm_w")  # Figure 5's two lines, and Appendix Figure 8's


def run_figure5(job, grid: list[dict], layer: int, specs: dict, maps: dict[str, Path], files, tgt_test: Path,
                top_k: int, top: dict, out_json: Path, device: str = "cpu", stanford_home: str | None = None,
                log: Log | None = None) -> dict:
    """``specs``: "source"/"target" = the two monolingual models' ModelSpecs, "bilingual" = the
    bilingual model's (read as ``job.src_lang``/``job.tgt_lang``); ``maps``: "mono"/"bilingual" =
    run_maps' npz files. Trains and tests MLM align (the English model's bottom, the target's
    bottom mapped by W_i), biMLM (the bilingual bottom, no map) and biMLM + W (Figure 8)."""
    log = log or (lambda _m: None)
    src, tgt = job.src_lang, job.tgt_lang

    def loaded(spec):
        return spec.model.load(device)

    def segment(spec, lang):
        return spec.model.subwords(lang)

    en_mono, x_mono, bi = loaded(specs["source"]), loaded(specs["target"]), loaded(specs["bilingual"])
    m, b = (np.load(maps[k]) for k in ("mono", "bilingual"))
    seg_en, seg_x = segment(specs["source"], src), segment(specs["target"], tgt)
    seg_bi_en, seg_bi_x = segment(specs["bilingual"], src), segment(specs["bilingual"], tgt)
    sides = {
        "mlm_align": (Side(en_mono, src, seg_en, m["means_source"][layer]),
                      Side(x_mono, tgt, seg_x, m["means_target"][layer], m["W"][layer])),
        "bimlm": (Side(bi, src, seg_bi_en), Side(bi, tgt, seg_bi_x)),
        "bimlm_w": (Side(bi, src, seg_bi_en, b["means_source"][layer]),
                    Side(bi, tgt, seg_bi_x, b["means_target"][layer], b["W"][layer])),
    }
    results = {}
    for name in MODELS:
        english, target = sides[name]
        log(f"{name}: layer {layer}")
        results[name] = run_transfer(job, grid, layer, english, {tgt: (target, tgt_test)}, files, top_k, top,
                                     device, stanford_home, log)
    return write_result(out_json, {"pair": f"{src}-{tgt}", "task": job.task, "layer": layer,
                                 "metric": results[MODELS[0]]["metric"],
                                 "tgt_test": {k: r["tgt_test"][tgt] for k, r in results.items()},
                                 "en_dev": {k: r["en_dev"] for k, r in results.items()}, "models": results})
