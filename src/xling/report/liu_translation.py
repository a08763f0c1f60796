"""Liu et al.'s token translation report: Table 2 of each of the study's MLMs beside m-BERT's
published one, the token sets its convert rates use beside the paper's Table 3, and Figures 7-8
(convert rate and BLEU-1 against the layer, one line per alpha).

The paper's m-BERT has 12 layers; its rows name layers 11 and 10. Ours are read at the same
distance from the top (L - 1 and L - 2 of an L-layer model), and ``our_layer`` says which. The
models differ (m-BERT on 104 languages' Wikipedia vs ours), so the table sets the numbers side by
side to compare the direction of each effect, not to pass or fail them."""

from __future__ import annotations

import csv
from importlib import resources
from pathlib import Path
from typing import Sequence

from xling.io import atomic_write
from xling.report.csvout import write_rows_csv
from xling.report.plotting import pyplot, save_and_close

PAPER_LAYERS = 12  # bert-base-multilingual-cased
FIELDS = ["model", "size", "direction", "row", "our_layer", "ours", "paper"]


def paper_table2() -> dict[tuple[str, str], float]:
    """(row, direction) -> the published value."""
    text = resources.files("xling").joinpath("data/liu2020_table2_token_translation.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    return {(r["row"], d): float(v) for r in rows for d, v in r.items() if d != "row" and v != ""}


def paper_table3() -> dict[tuple[str, str], int]:
    """(row, language) -> the published token-set size (``|V_lang|``, ``|V_en ∩ V_lang|``)."""
    text = resources.files("xling").joinpath("data/liu2020_table3_token_sets.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    return {(r["row"], lang): int(v) for r in rows for lang, v in r.items() if lang != "row" and v != ""}


def token_set_rows(results: Sequence[dict]) -> list[dict]:
    """Table 3 of every result that records its token sets (``vocab_sizes``, ``vocab_overlap``):
    |V_lang| and |V_src ∩ V_lang| for the source language (the ``src`` of the first direction) and
    each language it is translated into, beside the paper's; long format with the Table 2 CSV's
    fields (``direction`` is the language)."""
    paper = paper_table3()
    out = []
    for r in results:
        if "vocab_sizes" not in r:
            continue
        src = r["scores"][0]["src"]
        langs = [src] + list(dict.fromkeys(s["tgt"] for s in r["scores"] if s["src"] == src))
        size = None if r["size"] is None else int(r["size"])
        for row, value in (("|V_lang|", lambda lang: r["vocab_sizes"][lang]),
                           (f"|V_{src} ∩ V_lang|", lambda lang: r["vocab_sizes"][lang] if lang == src
                            else r["vocab_overlap"][f"{src}-{lang}"])):
            for lang in langs:
                published = paper.get((row.replace(f"V_{src} ", "V_en "), lang)) if src == "en" else None
                out.append({"model": r["model"], "size": size, "direction": lang, "row": row, "our_layer": None,
                            "ours": value(lang), "paper": published, "text": r.get("token_sets")})
    return out


def _at(scores: list[dict], layer: int, alpha: float) -> dict | None:
    return next((s for s in scores if s["layer"] == layer and s["alpha"] == alpha), None)


def table2_rows(results: Sequence[dict], layers: int) -> list[dict]:
    """Long-format Table 2 of every model and direction: the paper's rows, computed on ours.
    ``layers``: L of the study's MLMs; a result that records its own ``layers`` (m-BERT's 12) uses
    that; a ``size`` of None is a model not trained here (m-BERT)."""
    paper = paper_table2()
    out = []
    for r in results:
        for key in ("model", "size", "scores"):
            if key not in r:
                raise ValueError(f"token translation result without {key!r}: {sorted(r)}")
        depth = int(r.get("layers") or layers)
        top, second = depth - (PAPER_LAYERS - 11), depth - (PAPER_LAYERS - 10)
        size = None if r["size"] is None else int(r["size"])
        directions = list(dict.fromkeys((s["src"], s["tgt"]) for s in r["scores"]))
        for src, tgt in directions:
            d = f"{src}-{tgt}"
            scores = [s for s in r["scores"] if (s["src"], s["tgt"]) == (src, tgt)]
            shifted = [s for s in scores if s["alpha"] > 0]
            best = max(shifted, key=lambda s: s["bleu1"]) if shifted else None
            none = next((s for s in scores if s["alpha"] == 0), None)

            def add(row: str, our_layer, value):
                out.append({"model": r["model"], "size": size, "direction": d, "row": row,
                            "our_layer": our_layer, "ours": value, "paper": paper.get((row, d))})

            s = _at(scores, top, 3.0)
            add("BLEU-1 (layer=11 alpha=3)", top, s["bleu1"] if s else None)
            add("best BLEU-1", best["layer"] if best else None, best["bleu1"] if best else None)
            add("best layer", None, best["layer"] if best else None)
            add("best alpha", None, best["alpha"] if best else None)
            for alpha in (1.0, 2.0, 3.0):
                s = _at(scores, second, alpha)
                add(f"convert rate (layer=10 alpha={alpha:g})", second, s["convert_rate"] if s else None)
            add("BLEU-1 without shift", None, none["bleu1"] if none else None)
            add("convert rate without shift", None, none["convert_rate"] if none else None)
    return out


def _fmt(v, row: str) -> str:
    if v is None:
        return "—"
    if row == "best layer" or row.startswith("|V"):
        return str(int(v))
    if row == "best alpha":
        return f"{v:g}"
    return f"{v:.3f}" if row.startswith("convert rate") else f"{v:.2f}"


def write_table2(rows: Sequence[dict], labels: dict[str, str], md: Path, csv_path: Path, note: str = "",
                 token_sets: Sequence[dict] = ()) -> None:
    """The md page and the long CSV of Table 2 (``rows``) and, per model, its token sets beside
    Table 3 (``token_sets``: :func:`token_set_rows`; in the CSV with the language as ``direction``)."""
    write_rows_csv([*rows, *({k: r[k] for k in FIELDS} for r in token_sets)], FIELDS, csv_path)
    lines = ["# Token translation by the mean difference shift (Liu et al. 2020, Table 2)", ""]
    if note:
        lines += [f"_{note}_", ""]
    lines += ["Each cell: ours (m-BERT, published). Layers as the paper names them for its 12-layer m-BERT; ours "
              "are read at the same distance from the top (`our_layer` in the CSV). A convert rate is undefined "
              "(—) when every output piece is in both languages' token sets. Below each table, the token sets "
              "V_lang the convert rates use, beside the paper's Table 3 (m-BERT's WordPieces of XNLI's sentences).",
              ""]
    for model, size in dict.fromkeys((r["model"], r["size"]) for r in rows):
        sel = [r for r in rows if (r["model"], r["size"]) == (model, size)]
        dirs = list(dict.fromkeys(r["direction"] for r in sel))
        trained = "as released" if size is None else f"{size:,} sentences per language"
        lines += [f"## {labels.get(model, model)}, {trained}", ""] + _md_table(sel, dirs) + [""]
        sets = [r for r in token_sets if (r["model"], r["size"]) == (model, size)]
        if sets:
            text = {"evaluated": "the evaluated parallel rows'", "training": "the training text's"}
            lines += [f"Token sets (Table 3): {text.get(sets[0]['text'], sets[0]['text'])} pieces", ""]
            lines += _md_table(sets, list(dict.fromkeys(r["direction"] for r in sets))) + [""]
    with atomic_write(md) as fh:
        fh.write("\n".join(lines))


def _md_table(sel: Sequence[dict], columns: list[str]) -> list[str]:
    """One row per ``row`` of ``sel``, one column per ``direction``: ours (paper)."""
    lines = ["| | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    for row in dict.fromkeys(r["row"] for r in sel):
        cells = []
        for d in columns:
            r = next(x for x in sel if x["row"] == row and x["direction"] == d)
            cells.append(_fmt(r["ours"], row) + ("" if r["paper"] is None else f" ({_fmt(r['paper'], row)})"))
        name = row.replace("|", "\\|")  # Table 3's |V| inside a markdown table
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


FIGURE7_8_FIELDS = ["model", "size", "direction", "alpha", "layer", "convert_rate", "bleu1"]


def _direction_scores(result: dict, direction: str) -> list[dict]:
    src, tgt = direction.split("-")
    scores = [s for s in result["scores"] if (s["src"], s["tgt"]) == (src, tgt)]
    if not scores:
        raise ValueError(f"token translation figure: no scores for {direction} in {result.get('model')}")
    return scores


def figure7_8_rows(result: dict, direction: str) -> list[dict]:
    """Figures 7-8's points: per shifting weight alpha > 0 (a line of each panel) and layer shifted,
    the convert rate and BLEU-1; then the unshifted scores (alpha 0, no layer: the dotted line)."""
    scores = _direction_scores(result, direction)
    base = {"model": result["model"], "size": None if result["size"] is None else int(result["size"]),
            "direction": direction}
    rows = [{**base, "alpha": float(s["alpha"]), "layer": int(s["layer"]), "convert_rate": s["convert_rate"],
             "bleu1": float(s["bleu1"])}
            for s in sorted((s for s in scores if s["alpha"] > 0), key=lambda s: (s["alpha"], s["layer"]))]
    none = next((s for s in scores if s["alpha"] == 0), None)
    if none is not None:
        rows.append({**base, "alpha": 0.0, "layer": None, "convert_rate": none["convert_rate"],
                     "bleu1": float(none["bleu1"])})
    return rows


def write_figure7_8_csv(result: dict, direction: str, path: Path) -> None:
    write_rows_csv(figure7_8_rows(result, direction), FIGURE7_8_FIELDS, path)


def figure7_8(result: dict, direction: str, out_png: Path, out_pdf: Path, title: str | None = None) -> None:
    """Convert rate (Figure 7) and BLEU-1 (Figure 8b) against the layer, one line per alpha, for one
    direction of one model; the unshifted BLEU-1 dotted."""
    scores = _direction_scores(result, direction)
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    cmap = plt.get_cmap("viridis")
    alphas = sorted({s["alpha"] for s in scores if s["alpha"] > 0})
    for k, alpha in enumerate(alphas):
        pts = sorted((s for s in scores if s["alpha"] == alpha), key=lambda s: s["layer"])
        color = cmap(k / max(1, len(alphas) - 1))
        xs = [s["layer"] for s in pts]
        axes[0].plot(xs, [s["convert_rate"] if s["convert_rate"] is not None else float("nan") for s in pts],
                     marker="o", markersize=3, color=color, label=f"α = {alpha:g}")
        axes[1].plot(xs, [s["bleu1"] for s in pts], marker="o", markersize=3, color=color, label=f"α = {alpha:g}")
    none = next((s for s in scores if s["alpha"] == 0), None)
    if none is not None:
        axes[1].axhline(none["bleu1"], color="grey", linestyle=":", linewidth=1, label="no shift")
    axes[0].set_ylabel("convert rate")
    axes[1].set_ylabel("BLEU-1")
    for ax in axes:
        ax.set_xlabel("layer shifted")
        ax.grid(alpha=0.3)
        ax.set_title(f"{direction}, {result['model']}, {int(result['size']):,} sentences", fontsize=8)
    axes[1].legend(fontsize=7, loc="best")
    if title:
        fig.suptitle(title, fontsize=9)
    save_and_close(plt, fig, out_png, out_pdf)
