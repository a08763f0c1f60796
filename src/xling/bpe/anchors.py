"""Anchor points: subword types the two languages' training data share (paper Section 4.2)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from xling.io import atomic_write


def token_counts(path: Path) -> Counter:
    counts: Counter = Counter()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            counts.update(line.split())
    return counts


def anchor_stats(counts: dict[str, Counter], n_examples: int = 20) -> dict:
    """Vocabulary sizes per language, of the union, and the shared types (the anchors), with the
    most frequent shared types (by the smaller of the two counts) as examples."""
    langs = list(counts)
    if len(langs) != 2:
        raise ValueError(f"anchors are defined for two languages, got {langs}")
    a, b = (counts[lang] for lang in langs)
    shared = set(a) & set(b)
    union = set(a) | set(b)
    examples = sorted(shared, key=lambda t: (-min(a[t], b[t]), t))[:n_examples]
    return {
        "languages": langs,
        "vocab_size": {lang: len(counts[lang]) for lang in langs},
        "union_size": len(union),
        "shared": len(shared),
        "shared_fraction_of_union": len(shared) / len(union) if union else 0.0,
        "examples": examples,
    }


def write_anchors(bpe_dir: Path, languages: list[str], n_examples: int = 20) -> dict:
    counts = {lang: token_counts(Path(bpe_dir) / f"{lang}.train.bpe") for lang in languages}
    stats = anchor_stats(counts, n_examples)
    with atomic_write(Path(bpe_dir) / "anchors.json") as fh:
        json.dump(stats, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
    return stats


def anchors_table(rows: list[tuple[str, dict]]) -> str:
    """Markdown table from (setting label, anchors.json content) rows of one pair."""
    if not rows:
        raise ValueError("no settings to tabulate")
    l1, l2 = rows[0][1]["languages"]
    lines = [
        f"| Setting | vocab {l1} | vocab {l2} | union | shared (anchors) | shared % of union |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, st in rows:
        v = st["vocab_size"]
        lines.append(
            f"| {label} | {v[l1]} | {v[l2]} | {st['union_size']} | {st['shared']} "
            f"| {100 * st['shared_fraction_of_union']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def write_anchors_table(anchor_files: dict[str, Path], out_path: Path) -> str:
    """`anchor_files`: setting label -> anchors.json of one pair, in table order."""
    rows = []
    for label, path in anchor_files.items():
        with open(path, encoding="utf-8") as fh:
            rows.append((label, json.load(fh)))
    table = anchors_table(rows)
    with atomic_write(out_path) as fh:
        fh.write(table)
    return table


def anchors_report(entries: list[tuple[str, str, Path]]) -> str:
    """Markdown with one anchors table per pair from (pair, setting label, anchors.json) entries,
    pairs and settings in the order given."""
    by_pair: dict[str, list[tuple[str, dict]]] = {}
    for pair, label, path in entries:
        with open(path, encoding="utf-8") as fh:
            by_pair.setdefault(pair, []).append((label, json.load(fh)))
    parts = ["# Anchor points: subword types shared by the two languages' training data\n"]
    for pair, rows in by_pair.items():
        parts.append(f"\n## {pair}\n\n{anchors_table(rows)}")
    return "".join(parts)
