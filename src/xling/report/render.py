"""Table 1 as Markdown, CSV and LaTeX (one decimal, signed Delta, as in the paper), and the table
that sets each reproduced cell beside the published one."""

from __future__ import annotations

import csv
import io
from importlib import resources

from xling.report.aggregate import Table1

TASK_TITLES = {"xnli": "XNLI (Acc)", "ner": "NER (F1)", "parsing": "Parsing (LAS)"}
MISSING = "–"
UNAVAILABLE = "needs licensed data"


def fmt(x: float | None) -> str:
    return MISSING if x is None else f"{x:.1f}"


def fmt_delta(x: float | None) -> str:
    """Signed, one decimal; a Delta that rounds to zero is written 0.0 as the paper's Default row."""
    if x is None:
        return MISSING
    if round(x, 1) == 0:
        return "0.0"
    return f"{x:+.1f}"


def _columns(t: Table1) -> list[tuple[str, str | None]]:
    """(task, target language or None for Delta) in display order."""
    return [(task, lang) for task in t.tasks for lang in [*t.targets, None]]


def _interval(t: Table1, setting: str, task: str, lang: str | None):
    return t.value_intervals.get((setting, task, lang)) if lang else t.delta_intervals.get((setting, task))


def _cell(t: Table1, setting: str, task: str, lang: str | None, unavailable: str = UNAVAILABLE + "*",
          pm: str = " ± ") -> str:
    """One decimal; `` ± `` the half-width of the 95% interval where the cell has replicates."""
    if lang and (task, lang) in t.unavailable:
        return unavailable
    text = fmt(t.values[(setting, task, lang)]) if lang else fmt_delta(t.deltas[(setting, task)])
    iv = _interval(t, setting, task, lang)
    return text if iv is None or iv.half_width is None else f"{text}{pm}{iv.half_width:.1f}"


def _join(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _replicate_counts(t: Table1) -> str:
    """Over how many replicates the cells' ± stand: one number when every cell has the same; else
    each number with the rows it holds for (when a row's cells all have the same), or the columns
    (when a column's do), or the cells."""
    cells = {(s, (task, lang)): iv.n for (s, task, lang), iv in t.value_intervals.items()
             if iv is not None and iv.bounds is not None}
    counts = sorted(set(cells.values()), reverse=True)
    if len(counts) <= 1:
        return f"over {counts[0]} replicates" if counts else "over the replicates"

    def alike(part: int) -> bool:  # part 0: rows, 1: columns
        return all(len({n for c, n in cells.items() if c[part] == key}) == 1 for key in {c[part] for c in cells})

    by_row, by_column = alike(0), alike(1)

    def where(n: int) -> list[str]:
        group = {c for c, m in cells.items() if m == n}
        if by_row:
            return [t.labels[s] for s in t.settings if any(c[0] == s for c in group)]
        if by_column:
            return [_header(t, *col) for col in _columns(t) if any(c[1] == col for c in group)]
        return [f"{t.labels[s]} ({_join([_header(t, *col) for col in _columns(t) if (s, col) in group])})"
                for s in t.settings if any(c[0] == s for c in group)]

    return "over the replicates, " + "; ".join(f"{n} for {_join(where(n))}" for n in counts)


def interval_note(t: Table1) -> str | None:
    """How the ± were computed, when the table has any, and over how many replicates."""
    ivs = [*t.value_intervals.values(), *t.delta_intervals.values()]
    if not any(iv is not None and iv.low is not None for iv in ivs):
        return None
    return (f"± = half-width of the 95% interval {_replicate_counts(t)} (Student's t for a cell; Welch's for Δ "
            "against the baseline). A replicate is a pretraining seed (its fine-tuning seeds averaged), or "
            "a fine-tuning seed when there is one pretraining seed.")


def _header(t: Table1, task: str, lang: str | None) -> str:
    """Column title; a Delta over fewer languages than the table's says which."""
    if lang:
        return f"{TASK_TITLES.get(task, task)} {lang}"
    langs = t.delta_targets(task)
    return f"{TASK_TITLES.get(task, task)} Δ" + ("" if langs == t.targets else f" ({', '.join(langs)})")


def unavailable_notes(t: Table1) -> list[str]:
    """One line per column that was not run: which, and what it needs."""
    return [f"\\* {TASK_TITLES.get(task, task)} {lang}: {why}" for (task, lang), why in sorted(t.unavailable.items())]


def table1_markdown(t: Table1, note: str | None = None) -> str:
    out = []
    if note:
        out += [note, ""]
    head = ["Model"] + [_header(t, task, lang) for task, lang in _columns(t)]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" + "---:|" * (len(head) - 1))
    for s in t.settings:
        out.append("| " + " | ".join([t.labels[s]] + [_cell(t, s, task, lang) for task, lang in _columns(t)]) + " |")
    notes = [n for n in [interval_note(t)] if n] + unavailable_notes(t)
    return "\n".join(out + ([""] + notes if notes else [])) + "\n"


def _col_name(task: str, lang: str | None) -> str:
    return f"{task}_{lang or 'delta'}"


def table1_csv(t: Table1) -> str:
    """Unrounded values; empty where missing; column names as the published CSV's, each followed by
    the bounds of its 95% interval (``<column>_low``, ``<column>_high``; empty without replicates)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["setting", "model"] + [f"{_col_name(task, lang)}{suffix}" for task, lang in _columns(t)
                                       for suffix in ("", "_low", "_high")])
    for s in t.settings:
        row = [s, t.labels[s]]
        for task, lang in _columns(t):
            v = t.values[(s, task, lang)] if lang else t.deltas[(s, task)]
            iv = _interval(t, s, task, lang)
            row.append("" if v is None else f"{v:.4f}")
            row += ["", ""] if iv is None or iv.low is None else [f"{iv.low:.4f}", f"{iv.high:.4f}"]
        w.writerow(row)
    return buf.getvalue()


def _tex_escape(s: str) -> str:
    return s.replace("&", r"\&").replace("%", r"\%").replace("_", r"\_")


def table1_latex(t: Table1, caption: str | None = None) -> str:
    ncol = len(t.targets) + 1
    lines = [r"\begin{table*}[t]", r"\centering", r"\small",
             r"\begin{tabular}{l" + ("|" + "r" * ncol) * len(t.tasks) + "}", r"\toprule"]
    lines.append(" & " + " & ".join(rf"\multicolumn{{{ncol}}}{{c}}{{{_tex_escape(TASK_TITLES.get(task, task))}}}"
                                      for task in t.tasks) + r" \\")
    lines.append("Model & " + " & ".join(([*t.targets, r"$\Delta$"]) * len(t.tasks)) + r" \\")
    lines.append(r"\midrule")
    for s in t.settings:
        cells = [_cell(t, s, task, lang, "n/a", pm=r"$\pm$").replace(MISSING, "--") for task, lang in _columns(t)]
        lines.append(_tex_escape(t.labels[s]) + " & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if t.unavailable:
        missing = ", ".join(f"{TASK_TITLES.get(task, task)} {lang}" for task, lang in sorted(t.unavailable))
        caption = (caption + " " if caption else "") + f"n/a: {missing} not run ({UNAVAILABLE}; see table1.md)."
    if caption:
        lines.append(r"\caption{" + _tex_escape(caption) + "}")
    lines.append(r"\end{table*}")
    return "\n".join(lines) + "\n"


def published_table1() -> dict[str, dict[str, float]]:
    """The paper's Table 1 (package data), by model label then column (e.g. ``xnli_fr``)."""
    text = resources.files("xling").joinpath("data/wu2020_table1.csv").read_text(encoding="utf-8")
    rows = csv.DictReader(io.StringIO(text))
    out = {}
    for r in rows:
        out[r["model"]] = {k: float(v) for k, v in r.items() if k.split("_")[0] in ("xnli", "ner", "parsing")}
    return out


def comparison_rows(t: Table1, published: dict[str, dict[str, float]]) -> list[dict]:
    rows = []
    for s in t.settings:
        pub = published.get(t.labels[s], {})
        for task, lang in _columns(t):
            col = _col_name(task, lang)
            ours = t.values[(s, task, lang)] if lang else t.deltas[(s, task)]
            theirs = pub.get(col)
            diff = None if ours is None or theirs is None else ours - theirs
            rows.append({"setting": s, "model": t.labels[s], "task": task, "column": lang or "delta",
                         "reproduced": ours, "published": theirs, "difference": diff})
    return rows


def comparison_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["setting", "model", "task", "column", "reproduced", "published", "difference"])
    for r in rows:
        w.writerow([r["setting"], r["model"], r["task"], r["column"]] +
                   ["" if r[k] is None else f"{r[k]:.4f}" for k in ("reproduced", "published", "difference")])
    return buf.getvalue()


def comparison_markdown(t: Table1, rows: list[dict], note: str | None = None) -> str:
    """Per task, reproduced / published (difference) for each cell."""
    by = {(r["setting"], r["task"], r["column"]): r for r in rows}
    out = []
    if note:
        out += [note, ""]
    out.append("Each cell: reproduced / published (reproduced − published). Published: Wu et al. (2020), Table 1.")
    for task in t.tasks:
        out += ["", f"### {TASK_TITLES.get(task, task)}", ""]
        cols = [*t.targets, "delta"]
        out.append("| Model | " + " | ".join(c if c != "delta" else "Δ" for c in cols) + " |")
        out.append("|---|" + "---:|" * len(cols))
        for s in t.settings:
            cells = []
            for c in cols:
                r = by[(s, task, c)]
                f = fmt_delta if c == "delta" else fmt
                d = MISSING if r["difference"] is None else f"{r['difference']:+.1f}"
                ours = UNAVAILABLE + "*" if (task, c) in t.unavailable else f(r["reproduced"])
                cells.append(f"{ours} / {f(r['published'])} ({d})")
            out.append(f"| {t.labels[s]} | " + " | ".join(cells) + " |")
        if t.delta_targets(task) != t.targets:
            out += ["", f"Δ reproduced over {', '.join(t.delta_targets(task))} only; published over all."]
    notes = unavailable_notes(t)
    return "\n".join(out + ([""] + notes if notes else [])) + "\n"
