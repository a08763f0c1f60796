"""The Section 5 jobs: Figure 4 (word translation after aligning two monolingual models' word
vectors, beside fastText's), Figure 6 (Tatoeba retrieval after aligning two monolingual models with
Procrustes on XNLI-15way rows) and Figure 7 (linear CKA of parallel sentence representations),
each for one language pair, written as a JSON result (contract: xling.report.analysis_figures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np

from xling.analysis.align import iterative_normalize, procrustes, sentence_retrieval_hits, sentence_retrieval_p1
from xling.analysis.cka import bootstrap_cka, bootstrap_indices, centred_interval, length_residuals, linear_cka
from xling.analysis.represent import mean_pooled_layers
from xling.errors import InputError
from xling.io import atomic_path, atomic_write, first_lines, write_result
from xling.model import ModelSpec, PretrainedModel
from xling.model.encoder import Encoder, max_positions
from xling.preprocess.tokenize import TokenizeSettings
from xling.taskdata.parallel_text import read_sentences, read_tatoeba, read_xnli_15way

Log = Callable[[str], None]


class Encoders:
    """Encodes sentences under ``ModelSpec``s for one job, loading each model once (a job reads
    several texts with one model, and a bilingual model with both its languages). ``settings``:
    the tokenisation of each language's text for the pipeline's models (a ``transformers``
    model's tokenizer needs none)."""

    def __init__(self, settings: dict[str, TokenizeSettings], max_seq_len: int, batch_size: int,
                 device: str = "cpu"):
        self.settings, self.max_seq_len, self.batch_size, self.device = settings, max_seq_len, batch_size, device
        self._loaded: dict[PretrainedModel, Encoder] = {}

    def _encoder(self, spec: ModelSpec) -> Encoder:
        if spec.model not in self._loaded:
            self._loaded[spec.model] = spec.model.load(self.device, [spec.lang])
        return self._loaded[spec.model]

    def __call__(self, spec: ModelSpec, sentences: list[str], return_lengths: bool = False):
        """``[1 + layers, n, dim]`` mean-pooled representations of ``sentences`` under ``spec``
        (and with ``return_lengths``, the subword count of each sentence)."""
        lines, words_to_subwords = spec.model.text(spec.reads, self.settings.get(spec.reads))
        encoder = self._encoder(spec)
        # a sentence longer than the model embeds is cut there
        max_seq_len = min(self.max_seq_len, max_positions(encoder) or self.max_seq_len)
        return mean_pooled_layers(encoder, spec.lang, sentences, lines, words_to_subwords, max_seq_len,
                                  self.batch_size, self.device, return_lengths=return_lengths)


# --- inputs ------------------------------------------------------------------------------------

def find_file(root: Path, name: str) -> Path:
    """The one file called ``name`` under an extracted archive ``root`` (layouts differ by release)."""
    root = Path(root)
    if root.is_file():
        return root
    hits = sorted(root.rglob(name))
    if len(hits) != 1:
        raise InputError(root / name, None, f"exactly one {name} under {root}", f"{len(hits)} found")
    return hits[0]


def fifteen_way(root: Path, langs: list[str], n: int) -> dict[str, list[str]]:
    """The first ``n`` rows of XNLI-15way for ``langs``; fewer rows than ``n`` is an error (the
    configured supervision size would silently shrink)."""
    path = find_file(root, "xnli.15way.orig.tsv")
    cols = read_xnli_15way(path, langs)
    have = len(next(iter(cols.values())))
    if have < n:
        raise InputError(path, None, f"at least {n} sentence rows (analysis.*_sentences)", f"{have} rows")
    return {lang: sents[:n] for lang, sents in cols.items()}


def read_lines(path: Path, n: int) -> list[str]:
    """The first ``n`` sentences of a line-aligned file (en' paraphrases of the 15-way rows)."""
    sents = read_sentences(path)
    if len(sents) < n:
        raise InputError(path, None, f"at least {n} lines", f"{len(sents)} lines")
    return sents[:n]


# --- Figure 6 ----------------------------------------------------------------------------------

def align_and_retrieve(train_src: np.ndarray, train_tgt: np.ndarray, test_src: np.ndarray,
                       test_tgt: np.ndarray, norm_steps: int) -> tuple[np.ndarray, np.ndarray]:
    """One layer: learn the orthogonal map src -> tgt on the training rows (both sides iteratively
    normalised), then each test sentence's retrieval hit with and without it."""
    W = procrustes(iterative_normalize(train_src, norm_steps), iterative_normalize(train_tgt, norm_steps))
    xs, ys = iterative_normalize(test_src, norm_steps), iterative_normalize(test_tgt, norm_steps)
    return sentence_retrieval_hits(xs @ W, ys), sentence_retrieval_hits(xs, ys)


def shifted_retrieval(train_src: np.ndarray, train_tgt: np.ndarray, test_src: np.ndarray,
                      test_tgt: np.ndarray) -> tuple[float, float]:
    """One layer of one space (a multilingual model read as two languages), with no map: P@1 of
    the raw representations, and after Liu et al.'s mean-difference shift (``test_src`` moved by
    the difference of the two languages' means over the training rows)."""
    shift = train_tgt.mean(axis=0) - train_src.mean(axis=0)
    return sentence_retrieval_p1(test_src, test_tgt), sentence_retrieval_p1(test_src + shift, test_tgt)


def _p1(hits: np.ndarray) -> float:
    return 100.0 * float(np.mean(hits))


def paired_table(trained: list[np.ndarray], random: list[np.ndarray]) -> dict:
    """The trained and the random encoder's retrieval compared sentence by sentence, each at its own
    best layer (the first of equal ones): which layers, and how many test sentences both, only one or
    neither retrieve (the counts of a paired interval, xling.metrics.intervals.paired_newcombe_interval)."""
    i = max(range(len(trained)), key=lambda l: int(trained[l].sum()))
    j = max(range(len(random)), key=lambda l: int(random[l].sum()))
    a, b = trained[i], random[j]
    return {"trained_layer": i, "random_layer": j, "both": int(np.sum(a & b)), "trained_only": int(np.sum(a & ~b)),
            "random_only": int(np.sum(~a & b)), "neither": int(np.sum(~a & ~b))}


def run_retrieval(src: ModelSpec, tgt: ModelSpec, way15_root: Path, tatoeba: tuple[Path, Path],
                  settings: dict[str, TokenizeSettings], n_align: int, norm_steps: int, out_json: Path,
                  max_seq_len: int = 128, batch_size: int = 64, device: str = "cpu",
                  log: Log | None = None, one_space: bool = False, meta: dict | None = None,
                  random_seed: int | None = None) -> dict:
    """Figure 6 for one pair: the target language (``tgt``'s model) is mapped onto the source
    (``src``, English) and its Tatoeba sentences retrieve their English translations. ``tatoeba``:
    (target file, English file). ``random_seed``: the baseline beside it, the same models untrained:
    each side's architecture initialised with that seed (one model read as both languages stays one
    untrained model), through the same map and retrieval (``random``; ``paired``: the two compared
    sentence by sentence at their best layers). ``one_space``: both sides are one model's (a
    multilingual model), so retrieval without a map is also scored on the raw representations and
    after the mean-difference shift (``p_at_1_raw``, ``p_at_1_shifted``); ``meta``: more fields.

    ``source``/``target`` name the languages as the pair, the rule and Figure 7 do (source =
    English); ``map`` says which is mapped onto which."""
    log = log or (lambda _m: None)
    rows = fifteen_way(way15_root, [src.lang, tgt.lang], n_align)
    test_x, test_en = read_tatoeba(*tatoeba)
    log(f"encoding {n_align} 15-way rows and {len(test_x)} Tatoeba pairs")
    enc = Encoders(settings, max_seq_len, batch_size, device)

    def retrieve(source: ModelSpec, target: ModelSpec) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
        """English read by ``source``, the target by ``target``: (the 15-way and test representations
        of both, per layer the test sentences' hits with the map, without it)."""
        a_en, t_en = enc(source, rows[src.lang]), enc(source, test_en)
        a_x, t_x = enc(target, rows[tgt.lang]), enc(target, test_x)
        if a_en.shape[0] != a_x.shape[0]:
            raise ValueError(f"the two models have different depths: {a_en.shape[0] - 1} vs {a_x.shape[0] - 1} "
                             "layers")
        hits = [align_and_retrieve(a_x[l], a_en[l], t_x[l], t_en[l], norm_steps) for l in range(a_en.shape[0])]
        return [a_en, t_en, a_x, t_x], [h for h, _ in hits], [h for _, h in hits]

    (a_en, t_en, a_x, t_x), aligned, raw = retrieve(src, tgt)
    for l, (p, q) in enumerate(zip(aligned, raw)):
        log(f"L{l}: P@1 {_p1(p):.1f} (unaligned {_p1(q):.1f})")
    out = {
        "pair": f"{src.lang}-{tgt.lang}", "source": src.lang, "target": tgt.lang, "map": "target onto source",
        "layers": list(range(a_en.shape[0])), "p_at_1": [_p1(h) for h in aligned],
        "p_at_1_unaligned": [_p1(h) for h in raw], "n_train": n_align, "n_test": len(test_x),
        "checkpoints": {"source": str(src.checkpoint), "target": str(tgt.checkpoint)}, **(meta or {}),
    }
    if random_seed is not None:
        untrained = {m: m.untrained(random_seed) for m in (src.model, tgt.model)}  # one model stays one
        _, r_aligned, r_raw = retrieve(ModelSpec(untrained[src.model], src.lang, src.text_lang),
                                       ModelSpec(untrained[tgt.model], tgt.lang, tgt.text_lang))
        log("random encoder: " + " ".join(f"L{l}={_p1(h):.1f}" for l, h in enumerate(r_aligned)))
        out["random"] = {"seed": int(random_seed), "p_at_1": [_p1(h) for h in r_aligned],
                         "p_at_1_unaligned": [_p1(h) for h in r_raw]}
        out["paired"] = paired_table(aligned, r_aligned)
    if one_space:
        plain, shifted = zip(*(shifted_retrieval(a_x[l], a_en[l], t_x[l], t_en[l]) for l in range(a_en.shape[0])))
        out.update(p_at_1_raw=[float(v) for v in plain], p_at_1_shifted=[float(v) for v in shifted])
        log("no map: " + " ".join(f"L{l}={p:.1f}/{q:.1f}" for l, (p, q) in enumerate(zip(plain, shifted)))
            + " (raw/shifted)")
    return write_result(out_json, out)


# --- Figure 7 ----------------------------------------------------------------------------------

def cka_per_layer(a: np.ndarray, b: np.ndarray) -> list[float]:
    if a.shape[:2] != b.shape[:2]:
        raise ValueError(f"representations differ in layers or rows: {a.shape} vs {b.shape}")
    return [float(linear_cka(a[l], b[l])) for l in range(a.shape[0])]


def _cka_intervals(estimates: dict[str, list[float] | None], draws: dict[str, np.ndarray]) -> dict:
    """Bootstrap intervals around the estimates (:func:`xling.analysis.cka.centred_interval`) per
    kind and layer, and of the paired differences Figure 7 compares (a kind with draws has estimates)."""
    drawn = {k: e for k, e in estimates.items() if k in draws and e is not None}
    pairs = [(x, y) for x, y in (("bilingual", "monolingual"), ("monolingual", "random"), ("bilingual", "random"))
             if x in drawn and y in drawn]
    return {
        "cka_interval": {k: ([centred_interval(e, d) for e, d in zip(drawn[k], draws[k])] if k in drawn else None)
                         for k in estimates},
        "difference_interval": {
            f"{x}-{y}": [centred_interval(ex - ey, dx - dy)
                         for ex, ey, dx, dy in zip(drawn[x], drawn[y], draws[x], draws[y])]
            for x, y in pairs},
    }


def run_cka(pair: str, sentences: tuple[list[str], list[str]],
            models: dict[str, tuple[ModelSpec, ModelSpec] | None], settings: dict[str, TokenizeSettings],
            out_json: Path, max_seq_len: int = 128, batch_size: int = 64, device: str = "cpu",
            log: Log | None = None, bootstrap: int = 0, bootstrap_seed: int = 0, meta: dict | None = None) -> dict:
    """Figure 7 for one pair: for each kind (monolingual, bilingual, random) a (source-side,
    target-side) model pair reads the parallel ``sentences`` (source, target); None: the kind does
    not exist for this pair (no bilingual model trained for it). ``bootstrap`` > 0: that many
    resamples of the sentences give 95% percentile intervals per kind and layer and of the paired
    differences bilingual - monolingual and monolingual - random.

    Beside the paper's CKA, ``length_controlled`` holds the same with each side's pooled states
    freed of their sentence length (xling.analysis.cka.length_residuals), and ``drift`` each
    trained model's relative distance from its initial weights (how far training took it)."""
    log = log or (lambda _m: None)
    enc = Encoders(settings, max_seq_len, batch_size, device)
    cache: dict[tuple[ModelSpec, int], tuple[np.ndarray, np.ndarray]] = {}

    def reps(spec: ModelSpec, side: int) -> tuple[np.ndarray, np.ndarray]:
        if (spec, side) not in cache:  # English under the English model serves several kinds
            log(f"encoding side {side} with {spec.checkpoint} ({spec.lang}"
                + (", random init)" if spec.random_init_seed is not None else ")"))
            cache[(spec, side)] = enc(spec, sentences[side], return_lengths=True)
        return cache[(spec, side)]

    cka: dict[str, list[float] | None] = {}
    controlled: dict[str, list[float] | None] = {}
    drift: dict[str, list[float | None] | None] = {}
    draws: dict[str, np.ndarray] = {}  # kind -> [layers, resamples]
    controlled_draws: dict[str, np.ndarray] = {}
    layers: list[int] = []
    idx = bootstrap_indices(len(sentences[0]), bootstrap, bootstrap_seed) if bootstrap else None
    for kind, specs in models.items():
        if specs is None:
            cka[kind] = controlled[kind] = drift[kind] = None
            continue
        (a, len_a), (b, len_b) = reps(specs[0], 0), reps(specs[1], 1)
        res_a = np.stack([length_residuals(x, len_a) for x in a])
        res_b = np.stack([length_residuals(x, len_b) for x in b])
        kind_cka, kind_controlled = cka_per_layer(a, b), cka_per_layer(res_a, res_b)
        cka[kind], controlled[kind] = kind_cka, kind_controlled
        drift[kind] = [s.model.drift() for s in specs]
        layers = list(range(a.shape[0]))
        log(f"{kind}: " + " ".join(f"L{l}={v:.2f}" for l, v in enumerate(kind_cka))
            + " | length-controlled: " + " ".join(f"L{l}={v:.2f}" for l, v in enumerate(kind_controlled)))
        if idx is not None:
            draws[kind] = np.stack([bootstrap_cka(a[l], b[l], idx, device) for l in layers])
            controlled_draws[kind] = np.stack([bootstrap_cka(res_a[l], res_b[l], idx, device) for l in layers])
    out: dict[str, Any] = {"pair": pair, "layers": layers, "cka": cka, "n": len(sentences[0]), "drift": drift,
                           "length_controlled": {"cka": controlled}, **(meta or {})}
    if idx is not None:
        out["bootstrap"] = {"resamples": int(bootstrap), "seed": int(bootstrap_seed), "level": 0.95,
                            "interval": "percentile, centred on the estimate"}
        out.update(_cka_intervals(cka, draws))
        out["length_controlled"].update(_cka_intervals(controlled, controlled_draws))
    return write_result(out_json, out)


# --- Figure 4 ----------------------------------------------------------------------------------

def _save_npy(path: Path, array: np.ndarray) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.save(fh, array)


def _save_words(path: Path, words: list[str], counts=None) -> None:
    with atomic_write(path) as fh:
        for i, w in enumerate(words):
            fh.write(w + ("" if counts is None else f"\t{int(counts[i])}") + "\n")


def read_word_list(path: Path) -> list[str]:
    """The words of a word_vectors output list (``word`` or ``word<TAB>count`` per line)."""
    return [line.split("\t")[0] for line in Path(path).read_text(encoding="utf-8").splitlines()]


def run_word_vectors(spec: ModelSpec, bpe_text: Path, n_sentences: int, max_words: int, out: dict[str, Path],
                     max_seq_len: int = 256, batch_size: int = 64, device: str = "cpu",
                     log: Log | None = None) -> dict:
    """Figure 4's vectors of one monolingual model: its whole-word embedding rows (``out``:
    embedding, embedding_words) and its per-layer contextual word vectors over the first
    ``n_sentences`` of its training text (contextual, contextual_words)."""
    from xling.analysis.words import contextual_word_vectors, embedding_word_vectors

    log = log or (lambda _m: None)
    encoder = spec.model.load(device, [spec.lang])
    words, emb = embedding_word_vectors(encoder, spec.lang, spec.model.subwords(spec.reads))
    log(f"{len(words)} whole-word entries of {len(encoder.dictionary)}")
    lines = first_lines(bpe_text, n_sentences)
    log(f"averaging contextual vectors over {len(lines)} sentences of {bpe_text}")
    ctx_words, counts, ctx = contextual_word_vectors(encoder, spec.lang, lines, max_words, max_seq_len, batch_size,
                                                     device)
    _save_npy(out["embedding"], emb)
    _save_words(out["embedding_words"], words)
    _save_npy(out["contextual"], ctx)
    _save_words(out["contextual_words"], ctx_words, counts)
    return {"whole_words": len(words), "sentences": len(lines), "contextual_words": len(ctx_words),
            "layers": int(ctx.shape[0])}


def run_word_alignment(pair: str, vectors: dict[str, dict[str, Path]], fasttext: dict[str, Path],
                       muse: tuple[Path, Path], fasttext_rows: int, norm_steps: int, k: int, out_json: Path,
                       log: Log | None = None) -> dict:
    """Figure 4a and 4b for one pair ``src-tgt``: P@1 of word translation after aligning the two
    monolingual models' word vectors (whole-word embeddings; contextual, per layer) and fastText's,
    each pair of spaces on the same vocabulary. ``vectors``: language -> run_word_vectors' outputs;
    ``muse``: (train, test) dictionaries in the src -> tgt direction."""
    from xling.analysis.vec import read_vec
    from xling.analysis.words import align_both_ways, vocabulary
    from xling.codeswitch.dictionary import read_muse

    log = log or (lambda _m: None)
    src, tgt = pair.split("-")
    train, test = (list(read_muse(m)) for m in muse)
    ft = {}
    for lang in (src, tgt):
        ft_words, mat = read_vec(fasttext[lang], fasttext_rows)
        ft_words, ft_rows = vocabulary(ft_words)
        ft[lang] = dict(zip(ft_words, mat[ft_rows]))

    def spaces(kind: str) -> tuple[dict, dict, dict]:
        """Per language: the model's words that fastText also has, their rows of ``kind``, and
        fastText's (words, vectors) on exactly those words."""
        words, rows, base = {}, {}, {}
        for lang in (src, tgt):
            words[lang], rows[lang] = vocabulary(read_word_list(vectors[lang][f"{kind}_words"]), set(ft[lang]))
            base[lang] = (words[lang], np.stack([ft[lang][w] for w in words[lang]]))
        return words, rows, base

    def mlm(kind: str, words: dict, rows: dict, layer: int | None = None) -> dict:
        sides = []
        for lang in (src, tgt):
            arr = np.load(vectors[lang][kind], mmap_mode="r")  # one layer at a time is read
            arr = arr if layer is None else arr[layer]
            sides.append((words[lang], np.asarray(arr[rows[lang]], dtype=np.float32)))
        return align_both_ways(sides[0], sides[1], train, test, norm_steps, k)

    words, rows, base = spaces("embedding")
    emb = {"mlm": mlm("embedding", words, rows), "fasttext": align_both_ways(base[src], base[tgt], train, test,
                                                                             norm_steps, k)}
    log(f"embeddings: P@1 {src}->{tgt} {emb['mlm']['forward']['p_at_1']:.1f} "
        f"(fastText {emb['fasttext']['forward']['p_at_1']:.1f}) on {len(words[src])} x {len(words[tgt])} words")
    words, rows, base = spaces("contextual")
    n_layers = np.load(vectors[src]["contextual"], mmap_mode="r").shape[0]
    per_layer = []
    for layer in range(n_layers):
        per_layer.append(mlm("contextual", words, rows, layer))
        log(f"L{layer}: P@1 {src}->{tgt} {per_layer[-1]['forward']['p_at_1']:.1f}")
    ctx = {"layers": list(range(n_layers)), "mlm": per_layer,
           "fasttext": align_both_ways(base[src], base[tgt], train, test, norm_steps, k)}
    return write_result(out_json, {
        "pair": pair, "forward": f"{src}->{tgt}", "reverse": f"{tgt}->{src}",
        "embedding": emb, "contextual": ctx,
        "fasttext_rows": fasttext_rows, "norm_steps": norm_steps, "csls_k": k,
    })
