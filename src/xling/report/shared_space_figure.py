"""The shared-space curve: how well a bilingual model retrieves one language's sentences with the
other's (rule ``shared_space``, no map in between) as pretraining goes on, per Table 1 setting,
the mean over pretraining seeds with its 95% t interval."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Mapping

from xling.metrics.intervals import t_interval
from xling.report.csvout import write_rows_csv
from xling.report.plotting import pyplot, save_and_close

FIELDS = ["pair", "setting", "updates", "best_layer_p1", "low", "high", "seeds", "chance"]


def curve_rows(results: list[dict]) -> list[dict]:
    """One row per (pair, setting, updates): each seed's best layer (centred P@1, %) averaged,
    with a t interval when there are two seeds or more. A checkpoint that some seeds lack (another
    ``keep_interval_updates``) is averaged over the seeds that have it."""
    by_key: dict[tuple, list[float]] = defaultdict(list)
    chance: dict[str, float] = {}
    for r in results:
        for key in ("pair", "setting", "seed", "checkpoints", "chance"):
            if key not in r:
                raise ValueError(f"shared-space result without {key!r}: {sorted(r)}")
        chance[r["pair"]] = r["chance"]
        for point in r["checkpoints"]:
            by_key[(r["pair"], r["setting"], int(point["updates"]))].append(max(point["centred"]))
    rows = []
    for (pair, setting, updates), values in sorted(by_key.items()):
        iv = t_interval(values)
        rows.append({"pair": pair, "setting": setting, "updates": updates, "best_layer_p1": iv.estimate,
                     "low": iv.low, "high": iv.high, "seeds": len(values), "chance": chance[pair]})
    return rows


def write_curve_csv(rows: list[dict], path: Path) -> None:
    write_rows_csv(rows, FIELDS, path, digits=3)


def shared_space_figure(rows: list[dict], labels: Mapping[str, str], out_png: Path, out_pdf: Path,
                        title: str | None = None) -> None:
    """One panel per pair: best-layer P@1 against pretraining updates, one line per setting with
    its interval as a band; chance as a dotted line."""
    if not rows:
        raise ValueError("shared-space figure: expected at least one result, got none")
    plt = pyplot()
    pairs = sorted({r["pair"] for r in rows})
    settings = list(dict.fromkeys(r["setting"] for r in rows))
    fig, axes = plt.subplots(1, len(pairs), figsize=(4.2 * len(pairs), 3.4), squeeze=False, sharey=True)
    cmap = plt.get_cmap("tab10")
    for ax, pair in zip(axes[0], pairs):
        for i, setting in enumerate(settings):
            pts = [r for r in rows if r["pair"] == pair and r["setting"] == setting]
            if not pts:
                continue
            xs = [r["updates"] for r in pts]
            color = cmap(i % cmap.N)
            ax.plot(xs, [r["best_layer_p1"] for r in pts], marker="o", markersize=3, color=color,
                    label=labels.get(setting, setting))
            band = [r for r in pts if r["low"] is not None]
            if band:
                ax.fill_between([r["updates"] for r in band], [r["low"] for r in band], [r["high"] for r in band],
                                color=color, alpha=0.2, linewidth=0)
        chance = next(r["chance"] for r in rows if r["pair"] == pair)
        ax.axhline(chance, color="grey", linestyle=":", linewidth=1, label="chance")
        ax.set_title(pair)
        ax.set_xlabel("Pretraining updates")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("Retrieval P@1 (%), best layer")
    axes[0][-1].legend(fontsize=7, loc="best")
    if title:
        fig.suptitle(title, fontsize=9)
    save_and_close(plt, fig, out_png, out_pdf)
