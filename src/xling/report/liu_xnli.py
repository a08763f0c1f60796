"""Liu et al.'s XNLI results for the study's MLMs: zero-shot accuracy per language and model
(Figures 2, 4, 6) and the mean difference shift at test time beside m-BERT's Table 4."""

from __future__ import annotations

import csv
from importlib import resources
from pathlib import Path
from typing import Sequence

from xling.io import atomic_write
from xling.report.csvout import write_rows_csv
from xling.report.plotting import pyplot, save_and_close

FIELDS = ["model", "size", "language", "dev", "test", "alpha", "mds_dev", "mds_test", "mds_gain",
          "all_layers_test", "paper_last6", "paper_mds", "paper_alpha", "paper_all"]


def paper_table4() -> dict[str, dict[str, float]]:
    """Published Table 4: row ("finetune last 6 layers", "... + MDS", "shifting weight") -> language -> value."""
    text = resources.files("xling").joinpath("data/liu2020_table4_xnli_mds.csv").read_text(encoding="utf-8")
    return {r["setting"]: {k: float(v) for k, v in r.items() if k != "setting" and v}
            for r in csv.DictReader(text.splitlines())}


def xnli_rows(results: Sequence[dict]) -> list[dict]:
    """One row per (model, size, language), the published m-BERT values beside it where there are some;
    a static model's rows (no shift) have no MDS values."""
    paper = paper_table4()
    rows = []
    for res in results:
        for lang, s in res["languages"].items():
            shifted = "mds_test" in s  # the static models' results have no shift
            rows.append({
                "model": res["model"], "size": None if res["size"] is None else int(res["size"]), "language": lang,
                "dev": s["dev"], "test": s["test"],
                "alpha": s.get("alpha"), "mds_dev": s.get("mds_dev"), "mds_test": s.get("mds_test"),
                "mds_gain": s["mds_test"] - s["test"] if shifted else None,
                "paper_last6": paper["finetune last 6 layers"].get(lang),
                "paper_mds": paper["finetune last 6 layers + MDS"].get(lang),
                "paper_alpha": paper["shifting weight"].get(lang),
                # Table 4's first row, when the job also fine-tuned the whole model
                "all_layers_test": s.get("all_layers_test"),
                "paper_all": paper["finetune all layers"].get(lang),
            })
    return rows


def _signed(v: float) -> str:
    return f"{v:+.2f}"


def write_table4(rows: Sequence[dict], labels: dict[str, str], md: Path, csv_path: Path, note: str = "") -> None:
    write_rows_csv(rows, FIELDS, csv_path)
    lines = ["# XNLI zero-shot transfer and the mean difference shift (Liu et al. 2020, Figures 2, 4, 6 and Table 4)",
             ""]
    if note:
        lines += [f"_{note}_", ""]
    lines += ["Test accuracy after fine-tuning the upper layers on the source language; \"+ MDS\": with alpha x "
              "D(x -> source) added at the last fixed layer, alpha chosen on x's dev set. In brackets: m-BERT "
              "(Table 4: last 6 layers fine-tuned, shift at layer 6; \"all layers\": the whole model fine-tuned, "
              "no shift); a different model, so compare the "
              "direction of the shift's effect, not the values.", ""]
    for model, size in dict.fromkeys((r["model"], r["size"]) for r in rows):
        sel = [r for r in rows if (r["model"], r["size"]) == (model, size)]
        langs = [r["language"] for r in sel]
        trained = "as released" if size is None else f"{size:,} sentences per language"
        lines += [f"## {labels.get(model, model)}, {trained}", "",
                  "| | " + " | ".join(langs) + " |", "|---|" + "---:|" * len(langs)]

        if all(r["mds_test"] is None for r in sel):  # a static model: its classifier's accuracy only
            lines += ["| BiLSTM-max on the fixed vectors | " + " | ".join(f"{r['test']:.2f}" for r in sel) + " |", ""]
            continue

        def cells(key, paper_key=None, fmt="{:.2f}"):
            out = []
            for r in sel:
                c = fmt.format(r[key])
                if paper_key and r[paper_key] is not None:
                    c += f" ({fmt.format(r[paper_key])})"
                out.append(c)
            return out

        if all(r["all_layers_test"] is not None for r in sel):
            lines.append("| all layers fine-tuned | " + " | ".join(cells("all_layers_test", "paper_all")) + " |")
        lines.append("| fine-tuned | " + " | ".join(cells("test", "paper_last6")) + " |")
        lines.append("| + MDS | " + " | ".join(cells("mds_test", "paper_mds")) + " |")
        gains = []
        for r in sel:
            c = _signed(r["mds_gain"])
            if r["paper_mds"] is not None and r["paper_last6"] is not None:
                c += f" ({_signed(r['paper_mds'] - r['paper_last6'])})"
            gains.append(c)
        lines.append("| MDS gain | " + " | ".join(gains) + " |")
        lines.append("| shifting weight | " + " | ".join(cells("alpha", "paper_alpha", "{:g}")) + " |")
        lines.append("")
    with atomic_write(md) as fh:
        fh.write("\n".join(lines))


FIGURE_FIELDS = ["size", "model", "language", "test", "chance"]
CHANCE = 100 / 3  # three classes


def xnli_figure_rows(rows: Sequence[dict]) -> list[dict]:
    """The figure's bars: test accuracy per (size, model, language) of the study's models (m-BERT,
    of no size, is in Table 4 only), chance beside it (its dotted line)."""
    return [{"size": r["size"], "model": r["model"], "language": r["language"], "test": r["test"], "chance": CHANCE}
            for r in rows if r["size"] is not None]


def write_xnli_figure_csv(rows: Sequence[dict], path: Path) -> None:
    write_rows_csv(xnli_figure_rows(rows), FIGURE_FIELDS, path)


def xnli_figure(rows: Sequence[dict], labels: dict[str, str], out_png: Path, out_pdf: Path,
                title: str | None = None) -> None:
    """Figures 2, 4, 6 in one: test accuracy per language, one bar per model, one panel per size."""
    plt = pyplot()
    rows = xnli_figure_rows(rows)  # the study's models; m-BERT is in the table
    sizes = sorted({r["size"] for r in rows})
    models = list(dict.fromkeys(r["model"] for r in rows))
    fig, axes = plt.subplots(1, len(sizes), figsize=(5.5 * len(sizes), 3.6), squeeze=False, sharey=True)
    for ax, size in zip(axes[0], sizes):
        langs = list(dict.fromkeys(r["language"] for r in rows if r["size"] == size))
        width = 0.8 / max(1, len(models))
        for k, model in enumerate(models):
            acc = {r["language"]: r["test"] for r in rows if r["size"] == size and r["model"] == model}
            xs = [i + (k - (len(models) - 1) / 2) * width for i in range(len(langs))]
            ax.bar(xs, [acc.get(l, 0.0) for l in langs], width, label=labels.get(model, model))
        ax.axhline(CHANCE, color="grey", linestyle=":", linewidth=1, label="chance")
        ax.set_xticks(range(len(langs)), langs)
        ax.set_title(f"{size:,} sentences per language")
        ax.set_ylabel("XNLI test accuracy")
    axes[0][-1].legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=9)
    save_and_close(plt, fig, out_png, out_pdf)
