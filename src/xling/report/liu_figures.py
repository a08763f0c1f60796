"""Liu et al. 2020's word-retrieval figures (Figures 1, 3 and 5): MRR from the source language to
each other language, per model (MLM at each context window, word2vec, GloVe) and data size, and
m-BERT as released (the paper's "Google BERT", size None: the same bars in every size's panel).

An MLM is scored at every layer; the figure and the ``mrr`` column take, per model, the layer whose
MRR averaged over the languages is highest (the paper does not say which layer it used), and the CSV
also gives the last layer's."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from xling.analysis.word_retrieval import chance_mrr
from xling.report.csvout import write_rows_csv
from xling.report.plotting import pyplot, save_and_close

FIELDS = ["size", "model", "language", "mrr", "layer", "mrr_last_layer", "pairs", "identical_pairs", "chance"]


def retrieval_rows(results: Sequence[dict]) -> list[dict]:
    """One row per (size, model, language) of the ``liu_retrieval`` results (each with ``model``
    and ``size`` in it; ``size`` None: a model not trained here, m-BERT)."""
    rows = []
    for r in results:
        for key in ("model", "size", "languages"):
            if key not in r:
                raise ValueError(f"Liu retrieval result without {key!r}: {sorted(r)}")
        langs = list(r["languages"])
        per_layer = np.array([r["languages"][lang]["mrr"] for lang in langs])  # [languages, layers]
        best = int(per_layer.mean(axis=0).argmax())
        for i, lang in enumerate(langs):
            rows.append({"size": None if r["size"] is None else int(r["size"]), "model": r["model"], "language": lang,
                         "mrr": float(per_layer[i, best]), "layer": best if per_layer.shape[1] > 1 else None,
                         "mrr_last_layer": float(per_layer[i, -1]), "pairs": r["languages"][lang]["pairs"],
                         "identical_pairs": r["languages"][lang].get("identical_pairs"),
                         "chance": chance_mrr(r["languages"][lang]["candidates"])})
    return rows


def write_retrieval_csv(rows: Sequence[dict], path: Path) -> None:
    write_rows_csv(rows, FIELDS, path)


def panel_values(rows: Sequence[dict]) -> dict[tuple, float]:
    """(panel's size, model, language) -> the MRR drawn: one panel per data size, a model of no
    size (m-BERT as released) in every one of them (alone: one panel of size None)."""
    sizes = sorted({r["size"] for r in rows if r["size"] is not None}) or [None]
    value = {(r["size"], r["model"], r["language"]): r["mrr"] for r in rows if r["size"] is not None}
    value.update({(size, r["model"], r["language"]): r["mrr"] for size in sizes for r in rows if r["size"] is None})
    return dict(sorted(value.items(), key=lambda kv: sizes.index(kv[0][0])))


def retrieval_figure(rows: Sequence[dict], labels: dict[str, str], out_png: Path, out_pdf: Path,
                     title: str | None = None) -> None:
    """One panel per data size (the paper's Figures 1 and 3; the window effect of Figure 5 is the
    two MLM bars): grouped bars of MRR per language, one bar per model, a model of no size (m-BERT)
    in every panel, chance (a random ranking of the language's candidates) dotted."""
    if not rows:
        raise ValueError("Liu retrieval figure: expected at least one result, got none")
    plt = pyplot()
    value = panel_values(rows)
    sizes = list(dict.fromkeys(size for size, _, _ in value))
    models = list(dict.fromkeys(r["model"] for r in rows))
    langs = list(dict.fromkeys(r["language"] for r in rows))
    width_in = max(5.0, 0.3 * len(langs) * len(models) + 2)
    fig, axes = plt.subplots(len(sizes), 1, figsize=(width_in, 2.8 * len(sizes)), squeeze=False, sharey=True)
    width = 0.8 / len(models)
    cmap = plt.get_cmap("tab10")
    for ax, size in zip(axes[:, 0], sizes):
        for j, model in enumerate(models):
            xs = [i + (j - (len(models) - 1) / 2) * width for i in range(len(langs))]
            ys = [value.get((size, model, lang), np.nan) for lang in langs]
            ax.bar(xs, ys, width=width, color=cmap(j % cmap.N), label=labels.get(model, model))
        # the panel's own models' chance; m-BERT's where it is alone
        chance = {r["language"]: r["chance"] for r in rows if r["size"] is None}
        chance.update({r["language"]: r["chance"] for r in rows if r["size"] == size and size is not None})
        for i, lang in enumerate(langs):
            if lang in chance:
                ax.hlines(chance[lang], i - 0.45, i + 0.45, colors="black", linestyles=":", linewidth=1,
                          label="chance" if i == 0 else None)
        ax.set_xticks(range(len(langs)), langs)
        ax.set_title("as released" if size is None else f"{size:,} sentences per language", fontsize=9)
        ax.set_ylabel("MRR")
        ax.grid(axis="y", alpha=0.3)
    axes[0, 0].legend(fontsize=7, loc="best")
    if title:
        fig.suptitle(title, fontsize=9)
    save_and_close(plt, fig, out_png, out_pdf)
