"""Figures 6 and 7 (Section 5 analyses) and Markdown tables of the same numbers.

Inputs are the parsed JSON files the analysis jobs write:

- Figure 6, one dict per pair: ``{"pair", "source", "target", "layers", "p_at_1", "n_train", "n_test"}``
  (sentence retrieval P@1 in percent, per layer, after Procrustes alignment of monolingual models:
  the target mapped onto the source, English), and optionally ``random``: ``{"seed", "p_at_1"}``
  (the same with the models untrained: each side's architecture freshly initialised) and
  ``paired`` (the two compared sentence by sentence at their best layers:
  xling.analysis.run.paired_table). Results written before ``map`` was recorded named the mapped
  language ``source``; they are read with the names swapped back.
- Figure 7, one dict per pair: ``{"pair", "layers", "cka": {"monolingual", "bilingual", "random"}, "n"}``
  (linear CKA per layer; a kind may be ``null`` when that model does not exist for the pair).

A per-layer value may be ``null`` (that layer was not measured); missing values are marked, never drawn
as zero.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

from xling.report.csvout import write_rows_csv
from xling.report.plotting import pyplot, save_and_close, save_figure

MISSING = "–"
PAIR_ORDER = ["en-en_prime", "en-fr", "en-de", "en-ru", "en-zh"]  # the paper's column order
PAIR_LABELS = {"en-en_prime": "en-en′"}
KINDS = ["monolingual", "bilingual", "random"]
KIND_TITLES = {"monolingual": "Monolingual", "bilingual": "Bilingual", "random": "Random"}
FIG6_KEYS = ["pair", "source", "target", "layers", "p_at_1", "n_train", "n_test"]
FIG7_KEYS = ["pair", "layers", "cka", "n"]


def pair_label(pair: str) -> str:
    return PAIR_LABELS.get(pair, pair)


def layer_label(layer: int) -> str:
    return f"L{layer}"  # L0 = embedding output, L1.. = transformer layers


# ---------------------------------------------------------------- validation


def _name(r: dict) -> str:
    return repr(r.get("pair", "<no pair>")) if isinstance(r, dict) else "<not a dict>"


def _require(r: dict, keys: Sequence[str], what: str) -> None:
    if not isinstance(r, dict):
        raise ValueError(f"{what}: expected a dict per pair, got {type(r).__name__}")
    missing = [k for k in keys if k not in r]
    if missing:
        raise ValueError(f"{what} result for pair {_name(r)}: missing key(s) {', '.join(missing)}")
    if not isinstance(r["pair"], str) or not r["pair"]:
        raise ValueError(f"{what} result: key 'pair' must be a non-empty string, got {r['pair']!r}")


def _layers(r: dict, what: str) -> list[int]:
    layers = r["layers"]
    ok = (isinstance(layers, list) and layers
          and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in layers)
          and all(a < b for a, b in zip(layers, layers[1:])))
    if not ok:
        raise ValueError(f"{what} result for pair {_name(r)}: key 'layers' must be a non-empty increasing "
                         f"list of layer indices >= 0, got {layers!r}")
    return list(layers)


def _values(r: dict, key: str, values, n: int, lo: float | None, hi: float | None,
            what: str) -> list[float | None]:
    """Per-layer numbers (None kept as missing); length must equal the number of layers."""
    if not isinstance(values, list) or len(values) != n:
        got = f"length {len(values)}" if isinstance(values, list) else type(values).__name__
        raise ValueError(f"{what} result for pair {_name(r)}: key {key!r} must be a list with one value per "
                         f"layer ({n}), got {got}")
    out: list[float | None] = []
    for v in values:
        if v is None:
            out.append(None)
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{what} result for pair {_name(r)}: key {key!r} has a non-numeric value {v!r}")
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise ValueError(f"{what} result for pair {_name(r)}: key {key!r} value {v!r} outside [{lo}, {hi}]")
        out.append(float(v))
    return out


def _count(r: dict, key: str, what: str) -> int:
    v = r[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"{what} result for pair {_name(r)}: key {key!r} must be a count >= 0, got {v!r}")
    return v


def _ordered(results: list[dict]) -> list[dict]:
    """Paper order first, then any other pair in input order; a pair given twice is an error."""
    seen: set[str] = set()
    for r in results:
        if r["pair"] in seen:
            raise ValueError(f"pair {r['pair']!r} given more than once")
        seen.add(r["pair"])
    rank = {p: i for i, p in enumerate(PAIR_ORDER)}
    return sorted(results, key=lambda r: rank.get(r["pair"], len(PAIR_ORDER)))  # stable for the rest


PAIRED_KEYS = ("trained_layer", "random_layer", "both", "trained_only", "random_only", "neither")


def _sides(r: dict) -> dict:
    """``source``/``target`` as the pair names them (source = English, the target mapped onto it):
    a result written before ``map`` existed had them the other way round."""
    if "map" in r:
        return {}
    return {"source": r["target"], "target": r["source"]}


def _random(r: dict, n: int) -> dict | None:
    """The random-encoder baseline of a Figure 6 result, validated (None: the result has none)."""
    rnd = r.get("random")
    if rnd is None:
        return None
    if not isinstance(rnd, dict) or "p_at_1" not in rnd:
        raise ValueError(f"Figure 6 result for pair {_name(r)}: key 'random' must be a dict with 'p_at_1'")
    paired = r.get("paired")
    if not isinstance(paired, dict) or any(not isinstance(paired.get(k), int) or paired[k] < 0 for k in PAIRED_KEYS):
        raise ValueError(f"Figure 6 result for pair {_name(r)}: key 'paired' must hold the counts {PAIRED_KEYS}")
    counted = sum(paired[k] for k in PAIRED_KEYS[2:])
    if counted != r["n_test"]:
        raise ValueError(f"Figure 6 result for pair {_name(r)}: key 'paired' counts {counted} test sentences, "
                         f"n_test is {r['n_test']}")
    return {**rnd, "p_at_1": _values(r, "random.p_at_1", rnd["p_at_1"], n, 0.0, 100.0, "Figure 6")}


def check_figure6(results: list[dict]) -> list[dict]:
    """Validated, ordered copies: p_at_1 as floats/None (percent, 0-100), ``random`` validated or
    None, ``source``/``target`` as the pair names them."""
    out = []
    for r in results:
        _require(r, FIG6_KEYS, "Figure 6")
        layers = _layers(r, "Figure 6")
        out.append({**r, **_sides(r), "layers": layers,
                    "p_at_1": _values(r, "p_at_1", r["p_at_1"], len(layers), 0.0, 100.0, "Figure 6"),
                    "n_train": _count(r, "n_train", "Figure 6"), "n_test": _count(r, "n_test", "Figure 6")})
        out[-1]["random"] = _random(out[-1], len(layers))
    return _ordered(out)


def check_figure7(results: list[dict]) -> list[dict]:
    """Validated, ordered copies; ``cka[kind]`` is a list of floats/None, or None for an absent model.

    All pairs must share the same layers: they are the rows of one heatmap."""
    out = []
    for r in results:
        _require(r, FIG7_KEYS, "Figure 7")
        layers = _layers(r, "Figure 7")
        cka = r["cka"]
        if not isinstance(cka, dict):
            raise ValueError(f"Figure 7 result for pair {_name(r)}: key 'cka' must be a dict of kinds {KINDS}")
        missing = [k for k in KINDS if k not in cka]
        unknown = sorted(set(cka) - set(KINDS))
        if missing or unknown:
            raise ValueError(f"Figure 7 result for pair {_name(r)}: key 'cka' must have exactly the kinds "
                             f"{KINDS}; missing {missing}, unknown {unknown}")
        # No range check: linear CKA is in [0, 1] but rounding can step just outside; colours are clipped.
        vals = {k: None if cka[k] is None
                else _values(r, f"cka.{k}", cka[k], len(layers), None, None, "Figure 7") for k in KINDS}
        checked = {**r, "layers": layers, "cka": vals, "n": _count(r, "n", "Figure 7")}
        controlled = (r.get("length_controlled") or {}).get("cka")
        if controlled is not None:  # results from before the length-controlled CKA have none
            checked["length_controlled"] = {**r["length_controlled"], "cka": {
                k: None if controlled.get(k) is None else _values(r, f"length_controlled.cka.{k}", controlled[k],
                                                                  len(layers), None, None, "Figure 7")
                for k in KINDS}}
        out.append(checked)
    for r in out[1:]:
        if r["layers"] != out[0]["layers"]:
            raise ValueError(f"Figure 7 result for pair {r['pair']!r}: key 'layers' {r['layers']} differs from "
                             f"pair {out[0]['pair']!r}'s {out[0]['layers']}; all pairs must share the layers")
    return _ordered(out)


# ---------------------------------------------------------------- maths


def layer_average(values: Sequence[float | None] | None) -> float | None:
    """Mean over layers (the paper's "Average" row); None if any layer is missing, since a mean over
    a subset of layers would not be comparable with the other columns."""
    present = [v for v in values or () if v is not None]
    if not values or len(present) != len(values):
        return None
    return sum(present) / len(present)


def _present_kinds(results: list[dict]) -> list[str]:
    return [k for k in KINDS if any(r["cka"][k] is not None for r in results)]


def cka_grid(results: list[dict], kind: str) -> list[list[float | None]]:
    """Rows = layers then Average, columns = pairs (in the given order)."""
    cols: list[list[float | None]] = []
    for r in results:
        vals = r["cka"][kind]
        cols.append([None] * (len(r["layers"]) + 1) if vals is None else [*vals, layer_average(vals)])
    return [list(row) for row in zip(*cols)]


# ---------------------------------------------------------------- figures


def figure6(results: list[dict], out_png: Path, out_pdf: Path, title: str | None = None) -> None:
    """P@1 (percent) against layer, one line with markers per pair."""
    results = check_figure6(results)
    plt, fig, ax, colors = line_axes(results, "Figure 6")
    for r, color in zip(results, colors):
        ys = [float("nan") if v is None else v for v in r["p_at_1"]]  # NaN leaves a gap in the line
        ax.plot(r["layers"], ys, marker="o", markersize=4, color=color,
                label=f"{pair_label(r['pair'])} ({r['target']}→{r['source']})")
        for x, v in zip(r["layers"], r["p_at_1"]):
            if v is None:  # missing results are marked, not drawn as zero
                ax.text(x, 0, "×", ha="center", va="bottom", fontsize=8, color=color)
        if r["random"] is not None:  # the baseline: the same models untrained
            ax.plot(r["layers"], [float("nan") if v is None else v for v in r["random"]["p_at_1"]], linestyle="--",
                    marker="x", markersize=3, color=color, alpha=0.7,
                    label=f"{pair_label(r['pair'])}, random encoder")
    finish_p1_by_layer(plt, fig, ax, sorted({x for r in results for x in r["layers"]}), "Layer (L0 = embeddings)",
                       out_png, out_pdf, title)


def line_axes(results: list[dict], figure: str):
    """``(pyplot, figure, axes, a colour per result)`` of a figure of one line per result (Figures
    4b and 6); a figure of no result is an error."""
    if not results:
        raise ValueError(f"{figure}: expected at least one pair's result, got none")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 3.6))
    cmap = plt.get_cmap("tab10")
    return plt, fig, ax, [cmap(i % cmap.N) for i in range(len(results))]


def label_layers(ax, layers: list[int], xlabel: str, ylabel: str, ylim: tuple[float, float] | None = None,
                 legend_size: int = 8) -> None:
    """An axis of scores against layers: the layers' names as ticks, the labels, the score's range,
    a grid and the legend."""
    ax.set_xticks(layers, [layer_label(x) for x in layers])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=legend_size, frameon=False)


def finish_p1_by_layer(plt, fig, ax, layers: list[int], xlabel: str, out_png: Path, out_pdf: Path,
                       title: str | None) -> None:
    """The axes of a P@1-against-layer figure (Figures 4b and 6), then save it and close it."""
    label_layers(ax, layers, xlabel, "P@1 (%)", ylim=(0, 100))
    if title:
        ax.set_title(title, fontsize=10)
    save_and_close(plt, fig, out_png, out_pdf)


def figure7(results: list[dict], out_png: Path, out_pdf: Path, title: str | None = None) -> None:
    """One CKA heatmap per model kind present; rows L0..LL + Average, columns pairs, shared 0-1 scale."""
    import numpy as np

    results = check_figure7(results)
    if not results:
        raise ValueError("Figure 7: expected at least one pair's result, got none")
    kinds = _present_kinds(results)
    if not kinds:
        raise ValueError("Figure 7: every pair has null CKA for every model kind; nothing to draw")
    plt = pyplot()
    rows = [layer_label(x) for x in results[0]["layers"]] + ["Average"]
    cols = [pair_label(r["pair"]) for r in results]
    cmap = plt.get_cmap("viridis").with_extremes(bad="lightgrey")  # missing cells greyed, not coloured as 0
    fig, axes = plt.subplots(1, len(kinds), squeeze=False, layout="constrained",  # room for the colorbar
                             figsize=(0.75 * len(cols) * len(kinds) + 1.6, 0.36 * len(rows) + 1.3))
    im = None
    for ax, kind in zip(axes[0], kinds):
        grid = cka_grid(results, kind)
        arr = np.ma.masked_invalid(np.array([[np.nan if v is None else v for v in row] for row in grid]))
        im = ax.imshow(arr, cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                text, color = (MISSING, "dimgrey") if v is None else (f"{v:.2f}", "white" if v < 0.6 else "black")
                ax.text(j, i, text, ha="center", va="center", fontsize=7 if v is not None else 9, color=color)
        ax.axhline(len(rows) - 1.5, color="white", linewidth=2)  # sets the Average row apart
        ax.set_xticks(range(len(cols)), cols, fontsize=8)
        ax.set_yticks(range(len(rows)), rows if ax is axes[0][0] else [], fontsize=8)
        ax.tick_params(length=0)
        ax.set_title(KIND_TITLES[kind], fontsize=9)
    fig.colorbar(im, ax=list(axes[0]), shrink=0.9, pad=0.02)
    if title:
        fig.suptitle(title, fontsize=10)
    save_figure(fig, out_png, out_pdf)
    plt.close(fig)


# ---------------------------------------------------------------- CSVs: the figures' plotted points

FIGURE6_FIELDS = ["pair", "source", "target", "kind", "layer", "p_at_1", "n_train", "n_test"]
FIGURE7_FIELDS = ["pair", "kind", "layer", "cka", "low", "high", "length_controlled_cka", "length_controlled_low",
                  "length_controlled_high", "n"]


def figure6_rows(results: list[dict], trained: str = "monolingual") -> list[dict]:
    """Figure 6's points: one row per (pair, ``kind``, layer), P@1 empty where the layer was not
    measured; ``kind`` is ``trained`` (the models' own: monolingual, or a multilingual model's
    bilingual reading) or ``random`` (the same models untrained), as Figure 7 names its kinds."""
    out = []
    for r in check_figure6(results):
        kinds = [(trained, r["p_at_1"])] + ([("random", r["random"]["p_at_1"])] if r["random"] else [])
        out += [{"pair": r["pair"], "source": r["source"], "target": r["target"], "kind": kind, "layer": layer,
                 "p_at_1": p, "n_train": r["n_train"], "n_test": r["n_test"]}
                for kind, values in kinds for layer, p in zip(r["layers"], values)]
    return out


def _bounds(r: dict, where: dict, key: str, kind: str, n: int) -> list[tuple[float | None, float | None]]:
    """The per-layer (low, high) of ``where[key][kind]`` (the bootstrap's 95% interval), or empty
    bounds where the result has none (results from before the bootstrap)."""
    iv = (where.get(key) or {}).get(kind)
    if iv is None:
        return [(None, None)] * n
    ok = isinstance(iv, list) and len(iv) == n and all(
        x is None or (isinstance(x, list) and len(x) == 2 and all(isinstance(v, (int, float)) for v in x)) for x in iv)
    if not ok:
        raise ValueError(f"Figure 7 result for pair {_name(r)}: key {key!r}.{kind} must be a [low, high] per layer "
                         f"({n}), got {iv!r:.80}")
    return [(None, None) if x is None else (float(x[0]), float(x[1])) for x in iv]


def figure7_rows(results: list[dict]) -> list[dict]:
    """Figure 7's cells: one row per (kind drawn, pair, layer), then the pair's Average over the
    layers (``layer`` = "average", no interval); ``low``/``high``: the bootstrap's 95% interval
    (``cka_interval``); ``length_controlled_*``: the same CKA with each side's length signal removed
    (``length_controlled``: not the paper's measure, shown beside it in analysis.md). A kind a pair
    has no model of is a row of empty cells, as the figure greys it."""
    results = check_figure7(results)
    rows = []
    for kind in _present_kinds(results):
        for r in results:
            n = len(r["layers"])
            vals = r["cka"][kind] or [None] * n
            bounds = _bounds(r, r, "cka_interval", kind, n) if r["cka"][kind] else [(None, None)] * n
            lc = r.get("length_controlled") or {}
            lc_vals = (lc.get("cka") or {}).get(kind) or [None] * n
            lc_bounds = _bounds(r, lc, "cka_interval", kind, n) if lc else [(None, None)] * n
            for i, layer in enumerate(r["layers"]):
                rows.append({"pair": r["pair"], "kind": kind, "layer": layer, "cka": vals[i], "low": bounds[i][0],
                             "high": bounds[i][1], "length_controlled_cka": lc_vals[i],
                             "length_controlled_low": lc_bounds[i][0], "length_controlled_high": lc_bounds[i][1],
                             "n": r["n"]})
            rows.append({"pair": r["pair"], "kind": kind, "layer": "average", "cka": layer_average(r["cka"][kind]),
                         "low": None, "high": None,
                         "length_controlled_cka": layer_average((lc.get("cka") or {}).get(kind)),
                         "length_controlled_low": None, "length_controlled_high": None, "n": r["n"]})
    return rows


def write_figure6_csv(results: list[dict], path: Path) -> None:
    write_rows_csv(figure6_rows(results), FIGURE6_FIELDS, path)


def write_figure7_csv(results: list[dict], path: Path) -> None:
    write_rows_csv(figure7_rows(results), FIGURE7_FIELDS, path)


# ---------------------------------------------------------------- tables


def _fmt(v: float | None, digits: int) -> str:
    return MISSING if v is None else f"{v:.{digits}f}"


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    return out + ["| " + " | ".join(row) + " |" for row in rows]


def figure6_markdown(results: list[dict]) -> str:
    results = check_figure6(results)
    layers = sorted({x for r in results for x in r["layers"]})
    columns = []
    for r in results:
        columns.append((f"{pair_label(r['pair'])} ({r['target']}→{r['source']})", dict(zip(r["layers"], r["p_at_1"]))))
        if r["random"]:
            columns.append((f"{pair_label(r['pair'])} random", dict(zip(r["layers"], r["random"]["p_at_1"]))))
    head = ["Layer"] + [name for name, _ in columns]
    rows = [[layer_label(x)] + [_fmt(d.get(x), 1) for _, d in columns] for x in layers]
    sizes = "; ".join(f"{pair_label(r['pair'])}: {r['n_train']} train / {r['n_test']} test" for r in results)
    lines = ["Sentence retrieval P@1 (%) after Procrustes alignment of monolingual models (Figure 6); "
             "*random*: the same with the models untrained, each side's architecture freshly initialised (the "
             "baseline the trained models are judged against).", ""]
    return "\n".join(lines + _md_table(head, rows) + ["", f"Sentences: {sizes}."]) + "\n"


def figure7_markdown(results: list[dict]) -> str:
    results = check_figure7(results)
    lines = ["Linear CKA of mean-pooled parallel sentence representations (Figure 7); "
             "Average = mean over the layers.", ""]
    row_names = [layer_label(x) for x in results[0]["layers"]] + ["Average"] if results else []
    for kind in _present_kinds(results):
        grid = cka_grid(results, kind)
        rows = [[name] + [_fmt(v, 2) for v in row] for name, row in zip(row_names, grid)]
        lines += [f"**{KIND_TITLES[kind]}**", ""]
        lines += _md_table(["Layer"] + [pair_label(r["pair"]) for r in results], rows) + [""]
    sizes = "; ".join(f"{pair_label(r['pair'])}: {r['n']}" for r in results)
    lines.append(f"Parallel sentences: {sizes}.")
    return "\n".join(lines + _length_controlled_lines(results) + _drift_lines(results)) + "\n"


def _length_controlled_lines(results: list[dict]) -> list[str]:
    """The same CKA with each side's length signal removed (not the paper's measure): averages
    over layers beside the paper's."""
    with_lc = [r for r in results if "length_controlled" in r]
    if not with_lc:
        return []
    head = ["Kind"] + [pair_label(r["pair"]) for r in with_lc]
    rows = []
    for kind in _present_kinds(with_lc):
        rows.append([f"{KIND_TITLES[kind]}, paper's CKA"] + [_fmt(layer_average(r["cka"][kind]), 2) for r in with_lc])
        rows.append([f"{KIND_TITLES[kind]}, length-controlled"]
                    + [_fmt(layer_average(r["length_controlled"]["cka"].get(kind)), 2) for r in with_lc])
    return ["", "**Length-controlled CKA** (average over the layers). Parallel sentences have correlated "
            "lengths, and a mean-pooled state carries its sentence's length through the mean positional "
            "embedding, so two encoders that share nothing score a CKA floor on length alone. Here each "
            "side's states minus the mean of its sentences of the same subword count (a robustness check "
            "beside Figure 7, not the paper's measure):", ""] + _md_table(head, rows)


def _drift_lines(results: list[dict]) -> list[str]:
    """How far training moved each model from its initial weights: a model that has barely left
    its start is measured near its random initialisation."""
    with_drift = [r for r in results if r.get("drift")]
    if not with_drift:
        return []
    rows = []
    for kind, sides in (("monolingual", ("source", "target")), ("bilingual", ("model",))):
        for i, side in enumerate(sides):
            vals = [(r["drift"].get(kind) or [None] * 2)[i] for r in with_drift]
            if any(v is not None for v in vals):
                rows.append([f"{KIND_TITLES[kind]} {side}"] + ["–" if v is None else f"{100 * v:.1f}%" for v in vals])
    if not rows:
        return []
    return ["", "**Distance from the initial weights** (||w − w0|| / ||w0|| over the encoder's parameters, "
            "w0 rebuilt from the model's training seed): how far training took each model. At a few percent "
            "a model is still close to its random start, and Figures 6 and 7 measure largely its "
            "initialisation:", ""] + _md_table(["Model"] + [pair_label(r["pair"]) for r in with_drift], rows)


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r (numpy's corrcoef); None with fewer than 3 points or a constant series."""
    import numpy as np

    if len(xs) != len(ys):
        raise ValueError(f"pearson: {len(xs)} x values but {len(ys)} y values")
    if len(xs) < 3 or np.ptp(xs) == 0 or np.ptp(ys) == 0:
        return None
    return float(np.corrcoef(np.asarray(xs, float), np.asarray(ys, float))[0, 1])


def cka_retrieval_correlation(fig6: list[dict], fig7: list[dict]) -> list[tuple[str, float | None, int]]:
    """Per pair with both results: Pearson's r across layers between Figure 7's monolingual CKA and
    Figure 6's retrieval P@1 (the paper: "over 0.9 Pearson correlation for all four languages
    pairs"), and the number of layers it is computed over."""
    cka = {r["pair"]: r for r in check_figure7(fig7)}
    out = []
    for r6 in check_figure6(fig6):
        r7 = cka.get(r6["pair"])
        if r7 is None or r7["cka"].get("monolingual") is None:
            continue
        by_layer = dict(zip(r7["layers"], r7["cka"]["monolingual"]))
        points = [(by_layer[l], p) for l, p in zip(r6["layers"], r6["p_at_1"])
                  if p is not None and by_layer.get(l) is not None]
        out.append((r6["pair"], pearson([c for c, _ in points], [p for _, p in points]), len(points)))
    return out


def correlation_markdown(rows: list[tuple[str, float | None, int]]) -> str:
    out = ["Pearson's r across layers between the monolingual models' CKA (Figure 7) and their retrieval "
           "P@1 after alignment (Figure 6); the paper reports over 0.9 for every pair.", ""]
    out += _md_table(["", *(pair_label(p) for p, _, _ in rows)],
                     [["r", *(_fmt(r, 2) for _, r, _ in rows)], ["layers", *(str(n) for _, _, n in rows)]])
    return "\n".join(out) + "\n"


def analysis_tables_md(fig6: list[dict], fig7: list[dict]) -> str:
    """Markdown for the README/report: P@1 per layer and pair (1 decimal); CKA per layer, kind and pair,
    with the Average row (2 decimals); their correlation per pair. A figure with no results is left out."""
    if not fig6 and not fig7:
        raise ValueError("analysis tables: expected Figure 6 or Figure 7 results, got neither")
    parts = []
    if fig6:
        parts.append(figure6_markdown(fig6))
    if fig7:
        parts.append(figure7_markdown(fig7))
    correlation = cka_retrieval_correlation(fig6, fig7) if fig6 and fig7 else []
    if correlation:
        parts.append(correlation_markdown(correlation))
    return "\n".join(parts)
