"""Figure 3: grouped bars per task (panel) and language pair (group) across settings (bars), and
its CSV: one row per bar, with the cell's 95% interval over its replicates."""

from __future__ import annotations

from pathlib import Path

from xling.report.aggregate import Table1
from xling.report.csvout import write_rows_csv
from xling.report.plotting import pyplot, save_figure
from xling.report.render import TASK_TITLES

FIGURE3_FIELDS = ["task", "target", "setting", "label", "score", "low", "high", "replicates", "result_files", "note"]


def figure3_rows(t: Table1) -> list[dict]:
    """One row per bar of Figure 3 (task, target language, setting): the Table 1 cell it draws, its
    95% t interval over the replicates where it has two or more, how many replicates and result
    files are behind it; a cell without results has no score (the figure's ×), and ``note`` says
    why when its column was not run."""
    rows = []
    for task in t.tasks:
        for lang in t.targets:
            for s in t.settings:
                iv = t.value_intervals.get((s, task, lang))
                rows.append({"task": task, "target": lang, "setting": s, "label": t.labels[s],
                             "score": t.values[(s, task, lang)], "low": iv.low if iv else None,
                             "high": iv.high if iv else None, "replicates": iv.n if iv else 0,
                             "result_files": t.n_cells.get((s, task, lang), 0),
                             "note": t.unavailable.get((task, lang), "")})
    return rows


def write_figure3_csv(t: Table1, path: Path) -> None:
    write_rows_csv(figure3_rows(t), FIGURE3_FIELDS, path)


def figure3(t: Table1, out_png: Path, out_pdf: Path, title: str | None = None) -> None:
    import numpy as np

    plt = pyplot()

    n_set = len(t.settings)
    fig, axes = plt.subplots(1, len(t.tasks), figsize=(4.2 * len(t.tasks) + 2.2, 3.6), squeeze=False)
    cmap = plt.get_cmap("tab10" if n_set <= 10 else "tab20")
    width = 0.8 / n_set
    x = np.arange(len(t.targets))
    for ax, task in zip(axes[0], t.tasks):
        for i, s in enumerate(t.settings):
            vals = [t.values[(s, task, lang)] for lang in t.targets]
            pos = x - 0.4 + width * (i + 0.5)
            present = [v is not None for v in vals]
            ax.bar(pos[present], [v for v in vals if v is not None], width, color=cmap(i % cmap.N),
                   label=t.labels[s])
            for p, ok in zip(pos, present):
                if not ok:  # missing results are marked, not drawn as zero
                    ax.text(p, 0, "×", ha="center", va="bottom", fontsize=7, color="grey")
        ax.set_xticks(x, [f"en→{lang}" + ("\n(needs licensed data)" if (task, lang) in t.unavailable else "")
                          for lang in t.targets])
        ax.set_title(TASK_TITLES.get(task, task))
        ax.set_xlim(-0.5, len(t.targets) - 0.5)
        shown = [t.values[(s, task, lang)] for s in t.settings for lang in t.targets]
        ax.set_ylim(0, max([v for v in shown if v is not None] + [0]) * 1.1 or 100)
        ax.grid(axis="y", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", fontsize=8, frameon=False)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1 - 2.0 / fig.get_figwidth(), 1))
    save_figure(fig, out_png, out_pdf)
    plt.close(fig)
