"""Figure 4 (paper 5.1.1): word translation between monolingual models, beside fastText.

Input: one dict per pair as ``xling.analysis.run.run_word_alignment`` writes it::

    {"pair", "forward": "en->fr", "reverse": "fr->en",
     "embedding": {"mlm": SCORES, "fasttext": SCORES},
     "contextual": {"layers": [0, ..], "mlm": [SCORES per layer], "fasttext": SCORES}}

with SCORES = ``{"forward": ALIGN, "reverse": ALIGN}`` and ALIGN = ``{"p_at_1", "train_pairs",
"test_sources", "vocab": [n_src, n_tgt]}``. The figures plot the forward direction (MUSE's, English
to the other language); the CSV and tables hold both.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from xling.io import atomic_write
from xling.report.analysis_figures import (
    _fmt,
    _md_table,
    _ordered,
    finish_p1_by_layer,
    layer_label,
    line_axes,
    pair_label,
)
from xling.report.csvout import write_rows_csv
from xling.report.plotting import pyplot, save_and_close

DIRECTIONS = ("forward", "reverse")
CSV_FIELDS = ["figure", "pair", "vectors", "layer", "direction", "p_at_1", "train_pairs", "test_sources",
              "vocab_source", "vocab_target"]


def _align(r: dict, where: str, v) -> dict:
    what = f"Figure 4 result for pair {r.get('pair')!r}, {where}"
    if not isinstance(v, dict) or set(DIRECTIONS) - set(v):
        raise ValueError(f"{what}: expected scores for both directions {DIRECTIONS}, got {v!r:.80}")
    for d in DIRECTIONS:
        s = v[d]
        p = s.get("p_at_1") if isinstance(s, dict) else None
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or not 0 <= p <= 100:
            raise ValueError(f"{what} ({d}): p_at_1 must be a percentage, got {p!r}")
    return v


def check_figure4(results: list[dict]) -> list[dict]:
    """Validated results in the paper's pair order; a malformed one raises naming the pair and key."""
    for r in results:
        if not isinstance(r, dict) or not isinstance(r.get("pair"), str):
            raise ValueError(f"Figure 4: expected a dict with a 'pair' per result, got {r!r:.80}")
        for key in ("embedding", "contextual"):
            if not isinstance(r.get(key), dict):
                raise ValueError(f"Figure 4 result for pair {r['pair']!r}: missing {key!r}")
        for m in ("mlm", "fasttext"):
            _align(r, f"embedding.{m}", r["embedding"].get(m))
        ctx = r["contextual"]
        _align(r, "contextual.fasttext", ctx.get("fasttext"))
        layers, per_layer = ctx.get("layers"), ctx.get("mlm")
        if not isinstance(layers, list) or not isinstance(per_layer, list) or len(layers) != len(per_layer) \
                or not layers:
            raise ValueError(f"Figure 4 result for pair {r['pair']!r}: contextual.layers and contextual.mlm "
                             f"must be lists of the same non-zero length")
        for layer, s in zip(layers, per_layer):
            _align(r, f"contextual.mlm[L{layer}]", s)
    return _ordered(results)


def _direction_label(r: dict, d: str) -> str:
    return r.get(d, d).replace("->", "→")


def figure4a(results: list[dict], out_png: Path, out_pdf: Path, title: str | None = None) -> None:
    """P@1 per pair, the MLM's whole-word embeddings beside fastText's (forward direction)."""
    results = check_figure4(results)
    if not results:
        raise ValueError("Figure 4a: expected at least one pair's result, got none")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(1.3 * len(results) + 2.2, 3.4))
    width = 0.38
    for k, (method, label, color) in enumerate((("mlm", "MLM embeddings", "tab:blue"),
                                                 ("fasttext", "fastText", "tab:grey"))):
        xs = [i + (k - 0.5) * width for i in range(len(results))]
        ys = [r["embedding"][method]["forward"]["p_at_1"] for r in results]
        ax.bar(xs, ys, width, label=label, color=color)
        for x, y in zip(xs, ys):
            ax.text(x, y + 1, f"{y:.1f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(results)), [_direction_label(r, "forward") for r in results])
    ax.set_ylabel("P@1 (%)")
    ax.set_ylim(0, 105)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, frameon=False, loc="upper right")
    if title:
        ax.set_title(title, fontsize=10)
    save_and_close(plt, fig, out_png, out_pdf)


def figure4b(results: list[dict], out_png: Path, out_pdf: Path, title: str | None = None) -> None:
    """P@1 of contextual word vectors against layer, one line per pair, fastText on the same words
    as a dashed line of the pair's colour."""
    results = check_figure4(results)
    plt, fig, ax, colors = line_axes(results, "Figure 4b")
    for r, color in zip(results, colors):
        ctx = r["contextual"]
        ax.plot(ctx["layers"], [s["forward"]["p_at_1"] for s in ctx["mlm"]], marker="o", markersize=4, color=color,
                label=_direction_label(r, "forward"))
        ax.axhline(ctx["fasttext"]["forward"]["p_at_1"], color=color, linestyle="--", linewidth=1)
    finish_p1_by_layer(plt, fig, ax, sorted({x for r in results for x in r["contextual"]["layers"]}),
                       "Layer (L0 = embeddings); dashed: fastText on the same words", out_png, out_pdf, title)


def _scores_row(r: dict, vectors: str, layer, s: dict, d: str) -> dict:
    """One direction's scores of one kind of vectors (at a layer for 4b's contextual vectors)."""
    vocab = s.get("vocab") or [None, None]
    return {"pair": r["pair"], "vectors": vectors, "layer": layer, "direction": r.get(d, d),
            "p_at_1": float(s["p_at_1"]), "train_pairs": s.get("train_pairs"), "test_sources": s.get("test_sources"),
            "vocab_source": vocab[0], "vocab_target": vocab[1]}


def figure4_rows(results: list[dict]) -> list[dict]:
    """One CSV row per (figure, pair, vectors, layer, direction): both directions, as the tables."""
    rows = []

    def add(figure: str, r: dict, vectors: str, layer, scores: dict) -> None:
        for d in DIRECTIONS:
            row = _scores_row(r, vectors, layer, scores[d], d)
            rows.append({"figure": figure, **row, "p_at_1": round(row["p_at_1"], 4)})

    for r in check_figure4(results):
        add("4a", r, "mlm_embedding", "", r["embedding"]["mlm"])
        add("4a", r, "fasttext", "", r["embedding"]["fasttext"])
        for layer, s in zip(r["contextual"]["layers"], r["contextual"]["mlm"]):
            add("4b", r, "mlm_contextual", layer, s)
        add("4b", r, "fasttext", "", r["contextual"]["fasttext"])
    return rows


def write_figure4_csv(results: list[dict], path: Path) -> None:
    with atomic_write(path) as fh:
        w = csv.DictWriter(fh, fieldnames=CSV_FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(figure4_rows(results))


FIGURE4A_FIELDS = ["pair", "direction", "vectors", "p_at_1", "train_pairs", "test_sources", "vocab_source",
                   "vocab_target"]
FIGURE4B_FIELDS = ["pair", "direction", "vectors", "layer", "p_at_1", "train_pairs", "test_sources",
                   "vocab_source", "vocab_target"]


def figure4a_rows(results: list[dict]) -> list[dict]:
    """Figure 4a's bars: per pair (the plotted direction, MUSE's), the MLM's embeddings and fastText."""
    return [_scores_row(r, vectors, None, r["embedding"][method]["forward"], "forward")
            for r in check_figure4(results) for method, vectors in (("mlm", "mlm_embedding"), ("fasttext", "fasttext"))]


def figure4b_rows(results: list[dict]) -> list[dict]:
    """Figure 4b's points: per pair, the contextual vectors' P@1 at each layer, then fastText on the
    same words (its dashed line: no layer)."""
    rows = []
    for r in check_figure4(results):
        ctx = r["contextual"]
        rows += [_scores_row(r, "mlm_contextual", layer, s["forward"], "forward")
                 for layer, s in zip(ctx["layers"], ctx["mlm"])]
        rows.append(_scores_row(r, "fasttext", None, ctx["fasttext"]["forward"], "forward"))
    return rows


def write_figure4a_csv(results: list[dict], path: Path) -> None:
    write_rows_csv(figure4a_rows(results), FIGURE4A_FIELDS, path)


def write_figure4b_csv(results: list[dict], path: Path) -> None:
    write_rows_csv(figure4b_rows(results), FIGURE4B_FIELDS, path)


def figure4_markdown(results: list[dict]) -> str:
    results = check_figure4(results)
    head = ["Pair", "MLM", "fastText", "MLM (reverse)", "fastText (reverse)", "Words", "Test words"]
    rows = []
    for r in results:
        e = r["embedding"]
        f = e["mlm"]["forward"]
        vocab = f.get("vocab") or ["?", "?"]
        rows.append([f"{_direction_label(r, 'forward')}"] + [_fmt(e[m][d]["p_at_1"], 1) for d in DIRECTIONS
                                                             for m in ("mlm", "fasttext")]
                    + [f"{vocab[0]} × {vocab[1]}", str(f.get("test_sources", "?"))])
    lines = ["Word translation P@1 (%) with the monolingual models' whole-word embeddings and fastText's on the "
             "same words (Figure 4a; MUSE, Procrustes, CSLS).", ""] + _md_table(head, rows) + [""]
    layers = sorted({x for r in results for x in r["contextual"]["layers"]})
    by_layer = [dict(zip(r["contextual"]["layers"], r["contextual"]["mlm"])) for r in results]
    head = ["Layer"] + [_direction_label(r, "forward") for r in results]
    rows = [[layer_label(x)] + [_fmt(d[x]["forward"]["p_at_1"], 1) if x in d else "–" for d in by_layer]
            for x in layers]
    rows.append(["fastText"] + [_fmt(r["contextual"]["fasttext"]["forward"]["p_at_1"], 1) for r in results])
    sizes = [r["contextual"]["fasttext"]["forward"].get("vocab") or ["?", "?"] for r in results]
    words = "; ".join(f"{pair_label(r['pair'])}: {a} × {b}" for r, (a, b) in zip(results, sizes))
    lines += ["Word translation P@1 (%) with contextual word vectors per layer, and fastText on the same words "
              "(Figure 4b).", ""] + _md_table(head, rows) + ["", f"Words: {words}."]
    return "\n".join(lines) + "\n"
