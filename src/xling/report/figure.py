"""Figure 3: grouped bars per task (panel) and language pair (group) across settings (bars)."""

from __future__ import annotations

from pathlib import Path

from xling.report.aggregate import Table1
from xling.report.plotting import pyplot, save_figure
from xling.report.render import TASK_TITLES


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
