"""Figure 5 (paper 5.1.2) and Appendix Figure 8: zero-shot NER F1 / parsing LAS against the layer
i whose frozen representations the task model reads.

Input: one dict per (task, pair, layer) as ``xling.analysis.transfer.run_figure5`` writes it::

    {"task", "pair", "layer", "metric", "tgt_test": {"mlm_align", "bimlm", "bimlm_w"}, "en_dev": {...}}

Figure 5 draws MLM align (two monolingual models aligned by W_i) against biMLM (the bilingual
model, no map); Figure 8 biMLM against biMLM + W.
"""

from __future__ import annotations

import math
from pathlib import Path

from xling.report.analysis_figures import PAIR_ORDER, _fmt, _md_table, label_layers, layer_label
from xling.report.csvout import write_rows_csv
from xling.report.plotting import pyplot, save_and_close

MODELS = {"mlm_align": "MLM align", "bimlm": "biMLM", "bimlm_w": "biMLM + W"}
TASK_TITLES = {"ner": "NER (F1)", "parsing": "Parsing (LAS)"}
CSV_FIELDS = ["task", "pair", "layer", "model", "metric", "tgt_test", "en_dev"]
FIGURE5_MODELS = ("mlm_align", "bimlm")  # as the figures draw them: solid, dashed
FIGURE8_MODELS = ("bimlm_w", "bimlm")


def check_transfer(results: list[dict]) -> list[dict]:
    """Validated results sorted by task, the paper's pair order, layer; a duplicate or a malformed
    one raises naming its task, pair and layer."""
    seen = set()
    for r in results:
        where = f"Figure 5 result {r.get('task')!r}/{r.get('pair')!r}/L{r.get('layer')!r}"
        for key in ("task", "pair", "layer", "tgt_test", "en_dev"):
            if key not in r:
                raise ValueError(f"{where}: missing key {key!r}")
        for m in MODELS:
            for part in ("tgt_test", "en_dev"):
                v = r[part].get(m) if isinstance(r[part], dict) else None
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 <= v <= 100:
                    raise ValueError(f"{where}: {part}.{m} must be a score in [0, 100], got {v!r}")
        ident = (r["task"], r["pair"], r["layer"])
        if ident in seen:
            raise ValueError(f"{where}: given more than once")
        seen.add(ident)
    rank = {p: i for i, p in enumerate(PAIR_ORDER)}
    return sorted(results, key=lambda r: (r["task"], rank.get(r["pair"], len(PAIR_ORDER)), r["pair"], r["layer"]))


def _series(results: list[dict]) -> dict[str, dict[str, list[dict]]]:
    out: dict[str, dict[str, list[dict]]] = {}
    for r in check_transfer(results):
        out.setdefault(r["task"], {}).setdefault(r["pair"], []).append(r)
    return out


def _figure(results: list[dict], models: tuple[str, str], out_png: Path, out_pdf: Path, title: str | None) -> None:
    series = _series(results)
    if not series:
        raise ValueError("Figure 5: expected at least one result, got none")
    plt = pyplot()
    fig, axes = plt.subplots(1, len(series), figsize=(4.4 * len(series), 3.5), squeeze=False)
    cmap = plt.get_cmap("tab10")
    for ax, (task, pairs) in zip(axes[0], series.items()):
        for n, (pair, rows) in enumerate(pairs.items()):
            xs = [r["layer"] for r in rows]
            for model, style in zip(models, ("-", "--")):
                ax.plot(xs, [r["tgt_test"][model] for r in rows], style, marker="o", markersize=3.5,
                        color=cmap(n % cmap.N), label=f"{pair} {MODELS[model]}")
        layers = sorted({r["layer"] for rows in pairs.values() for r in rows})
        label_layers(ax, layers, "Frozen layers 0..i", TASK_TITLES.get(task, task), legend_size=7)
    if title:
        fig.suptitle(title, fontsize=10)
    save_and_close(plt, fig, out_png, out_pdf)


def figure5(results: list[dict], out_png: Path, out_pdf: Path, title: str | None = None) -> None:
    """Per task, the target score against layer: MLM align (solid) and biMLM (dashed) per pair."""
    _figure(results, FIGURE5_MODELS, out_png, out_pdf, title)


def figure8(results: list[dict], out_png: Path, out_pdf: Path, title: str | None = None) -> None:
    """Appendix Figure 8: biMLM + W (solid) against biMLM (dashed)."""
    _figure(results, FIGURE8_MODELS, out_png, out_pdf, title)


def transfer_rows(results: list[dict], models=tuple(MODELS)) -> list[dict]:
    """One row per (task, pair, layer, model) of ``models``: the target test score a figure plots,
    the English dev score the cells were chosen by beside it."""
    return [{"task": r["task"], "pair": r["pair"], "layer": r["layer"], "model": m, "metric": r.get("metric", ""),
             "tgt_test": float(r["tgt_test"][m]), "en_dev": float(r["en_dev"][m])}
            for r in check_transfer(results) for m in models]


def write_transfer_csv(results: list[dict], path: Path, models=tuple(MODELS)) -> None:
    write_rows_csv(transfer_rows(results, models), CSV_FIELDS, path)


def figure5_rows(results: list[dict]) -> list[dict]:
    """Figure 5's points: MLM align and biMLM per task, pair and layer."""
    return transfer_rows(results, FIGURE5_MODELS)


def figure8_rows(results: list[dict]) -> list[dict]:
    """Figure 8's points: biMLM + W and biMLM per task, pair and layer."""
    return transfer_rows(results, FIGURE8_MODELS)


def write_figure5_csv(results: list[dict], path: Path) -> None:
    write_transfer_csv(results, path, FIGURE5_MODELS)


def write_figure8_csv(results: list[dict], path: Path) -> None:
    write_transfer_csv(results, path, FIGURE8_MODELS)


def transfer_markdown(results: list[dict]) -> str:
    parts = ["Zero-shot transfer through frozen layers 0..i (Figure 5: MLM align vs biMLM; Figure 8: biMLM + W).", ""]
    for task, pairs in _series(results).items():
        head = ["Layer"] + [f"{p} {MODELS[m]}" for p in pairs for m in MODELS]
        layers = sorted({r["layer"] for rows in pairs.values() for r in rows})
        by = {(p, r["layer"]): r for p, rows in pairs.items() for r in rows}
        rows = [[layer_label(i)] + [_fmt(by[(p, i)]["tgt_test"][m], 1) if (p, i) in by else "–"
                                    for p in pairs for m in MODELS] for i in layers]
        parts += [f"**{TASK_TITLES.get(task, task)}**", ""] + _md_table(head, rows) + [""]
    return "\n".join(parts)
