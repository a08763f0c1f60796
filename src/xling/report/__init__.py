"""Table 1, the paper-vs-reproduction table and Figure 3 from the fine-tuning result.json files.

Needs no GPU and no model: regenerating the report never retrains."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from xling.io import atomic_write
from xling.report.aggregate import aggregate, build_table1
from xling.report.collect import collect_results
from xling.report.figure import figure3, write_figure3_csv
from xling.report.render import (
    comparison_csv,
    comparison_markdown,
    comparison_rows,
    published_table1,
    table1_csv,
    table1_latex,
    table1_markdown,
)


def table1_from_results(results, settings: Sequence[str], labels: dict[str, str], pairs: Sequence[str],
                        tasks: Sequence[str], top_k: int = 2, baseline: str = "default", source: str = "en",
                        unavailable: dict[str, dict[str, str]] | None = None, score: str = "tgt_test",
                        columns: Sequence[str] | None = None):
    """(cells, Table1) from a finetune directory or a list of result.json paths; ``unavailable``:
    task -> target language -> why that column was not run; ``score``: the result.json key the
    table reports (Table 1's ``tgt_test``; an extra test set's ``tgt_extra.<name>``); ``columns``:
    ``build_table1``'s."""
    cells = collect_results(results, score)
    missing = {(task, lang): why for task, langs in (unavailable or {}).items() for lang, why in langs.items()}
    return cells, build_table1(aggregate(cells, top_k), settings, labels, pairs, tasks, baseline, source, missing,
                               columns)


def table1_header(note: str | None, source: str, top_k: int, baseline_label: str) -> str:
    """The line Table 1 starts with: what the run is made of, and what a cell and Δ are."""
    return (note + " " if note else "") + (
        f"Zero-shot transfer from {source}; each cell is the mean target-language score of the best "
        f"{top_k} hyperparameter settings by {source} dev; Δ = average over the languages minus "
        f"{baseline_label}'s.")


def build_report(
    results,
    out_dir: Path,
    settings: Sequence[str],
    labels: dict[str, str],
    pairs: Sequence[str],
    tasks: Sequence[str],
    top_k: int = 2,
    baseline: str = "default",
    source: str = "en",
    note: str | None = None,
    unavailable: dict[str, dict[str, str]] | None = None,
) -> dict:
    """Write table1.{md,csv,tex}, table1_vs_paper.{md,csv}, figure3.{png,pdf,csv} into ``out_dir``.

    ``results``: a finetune directory or a list of result.json paths. ``unavailable``: task ->
    target language -> why that column was not run (shown in its cells). Returns the Table1 numbers."""
    out_dir = Path(out_dir)
    cells, table = table1_from_results(results, settings, labels, pairs, tasks, top_k, baseline, source, unavailable)
    header = table1_header(note, source, top_k, labels.get(baseline, baseline))
    rows = comparison_rows(table, published_table1())
    outputs = {
        "table1.md": table1_markdown(table, header),
        "table1.csv": table1_csv(table),
        "table1.tex": table1_latex(table, header),
        "table1_vs_paper.md": comparison_markdown(table, rows, note),
        "table1_vs_paper.csv": comparison_csv(rows),
    }
    for name, text in outputs.items():
        with atomic_write(out_dir / name) as fh:
            fh.write(text)
    figure3(table, out_dir / "figure3.png", out_dir / "figure3.pdf", note)
    write_figure3_csv(table, out_dir / "figure3.csv")
    return {"cells": len(cells), "table": table}


def build_part(results, out_md: Path, out_csv: Path, title: str, note: str | None = None, **table) -> dict:
    """One part of Table 1 (a row, or a language pair's columns) beside the paper's numbers:
    ``out_md`` (the part as Table 1 prints it, then reproduced / published per cell) and
    ``out_csv`` (the comparison rows); ``table``: ``table1_from_results``' arguments for the part.
    Δ needs the baseline row and every pair: it is shown only where the part has both, and is
    otherwise left to the whole table."""
    cells, t = table1_from_results(results, **table)
    rows = comparison_rows(t, published_table1())
    text = f"# {title}\n\n" + table1_markdown(t, note) + "\n" + comparison_markdown(t, rows)
    with atomic_write(out_md) as fh:
        fh.write(text)
    with atomic_write(out_csv) as fh:
        fh.write(comparison_csv(rows))
    return {"cells": len(cells), "table": t}


def build_extra_table(results, out_md: Path, out_csv: Path, title: str, score: str, about: str,
                      note: str | None = None, **table) -> dict:
    """Table 1 again, on another test set: the record's ``score`` (an extra test set's
    ``tgt_extra.<name>``, or the source language's ``src_extra.<name>``) instead of ``tgt_test``, with
    Table 1's selection (English dev), replicates, intervals and Δ. ``out_md``: ``title``, the
    header, ``about`` (what the set is) and the table; ``out_csv``: Table 1's CSV columns;
    ``table``: ``table1_from_results``' arguments (``columns`` included) but ``score``."""
    cells, t = table1_from_results(results, score=score, **table)
    top_k, source, baseline = table.get("top_k", 2), table.get("source", "en"), table.get("baseline", "default")
    header = table1_header(note, source, top_k, t.labels.get(baseline, baseline))
    with atomic_write(out_md) as fh:
        fh.write(f"# {title}\n\n{about}\n\n" + table1_markdown(t, header))
    with atomic_write(out_csv) as fh:
        fh.write(table1_csv(t))
    return {"cells": len(cells), "table": t}
