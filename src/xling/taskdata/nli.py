"""XNLI-1.0 and MultiNLI readers, and the builder of ``tasks/xnli/<lang>/{train,dev,test}.tsv``.

Real layouts: ``XNLI-1.0/xnli.{dev,test}.tsv`` is one TSV for all 15 languages with a header
(``language gold_label ... sentence1 sentence2 ...``, 19 columns); MultiNLI is
``multinli_1.0/multinli_1.0_train.jsonl`` with ``gold_label`` ``-`` where annotators disagreed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Iterator

from xling.errors import InputError
from xling.taskdata.textio import NLI_LABELS, numbered_lines, tsv_header, write_nli_tsv

# XNLI-MT's files spell the label "contradictory"; accept it so either release reads the same.
_LABEL_ALIASES = {"contradictory": "contradiction"}
_XNLI_REQUIRED = ("language", "gold_label", "sentence1", "sentence2")


def _label(path: Path, line: int, raw: str) -> str:
    label = _LABEL_ALIASES.get(raw, raw)
    if label not in NLI_LABELS:
        raise InputError(path, line, f"a label in {'|'.join(NLI_LABELS)}", raw)
    return label


def read_xnli_tsv(path: str | Path, languages: Iterable[str] | None = None) -> dict[str, list[tuple[str, str, str]]]:
    """``language -> [(premise, hypothesis, label)]`` from an XNLI ``xnli.{dev,test}.tsv``."""
    path = Path(path)
    wanted = None if languages is None else set(languages)
    out: dict[str, list[tuple[str, str, str]]] = {} if wanted is None else {lang: [] for lang in wanted}
    lines = numbered_lines(path)
    header, header_line = tsv_header(path, lines, "a header line")
    missing = [c for c in _XNLI_REQUIRED if c not in header]
    if missing:
        raise InputError(path, 1, f"a header with columns {', '.join(_XNLI_REQUIRED)}", header_line)
    col = {c: header.index(c) for c in _XNLI_REQUIRED}
    for i, line in lines:
        if not line:
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            raise InputError(path, i, f"{len(header)} tab-separated columns", f"{len(cells)} columns: {line}")
        lang = cells[col["language"]]
        if wanted is not None and lang not in wanted:
            continue
        label = _label(path, i, cells[col["gold_label"]])
        out.setdefault(lang, []).append((cells[col["sentence1"]], cells[col["sentence2"]], label))
    if wanted is not None:
        empty = sorted(lang for lang, rows in out.items() if not rows)
        if empty:
            raise InputError(path, None, f"examples for languages {', '.join(empty)}", "none")
    return out


def read_multinli_jsonl(path: str | Path) -> Iterator[tuple[str, str, str]]:
    """``(premise, hypothesis, label)`` from MultiNLI jsonl, skipping ``gold_label == '-'`` (no consensus)."""
    path = Path(path)
    for i, line in numbered_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(path, i, "one JSON object per line", line) from e
        fields = ("gold_label", "sentence1", "sentence2")
        if not isinstance(obj, dict) or not all(isinstance(obj.get(k), str) for k in fields):
            raise InputError(path, i, "an object with string gold_label, sentence1, sentence2", line)
        if obj["gold_label"] == "-":
            continue
        yield obj["sentence1"], obj["sentence2"], _label(path, i, obj["gold_label"])


def find_one(root: Path, relative: str) -> Path:
    """``root/relative``, or the single match one level down (archives may add a top folder)."""
    direct = root / relative
    if direct.is_file():
        return direct
    hits = sorted(root.glob(f"*/{relative}"))
    if len(hits) != 1:
        raise InputError(direct, None, f"the file {relative} under {root}", f"{len(hits)} matches")
    return hits[0]


def build_xnli(
    xnli_root: str | Path,
    multinli_root: str | Path,
    languages: Iterable[str],
    out_root: str | Path,
    source: str = "en",
) -> dict[str, dict[str, int]]:
    """Write ``out_root/<lang>/{dev,test}.tsv`` for every language and ``<source>/train.tsv`` from
    MultiNLI; returns ``{lang: {split: examples}}``. Only the source language is trained on
    (zero-shot transfer), so only it gets a train file."""
    xnli_root, multinli_root, out_root = Path(xnli_root), Path(multinli_root), Path(out_root)
    languages = list(languages)
    counts: dict[str, dict[str, int]] = {lang: {} for lang in languages}
    for split in ("dev", "test"):
        by_lang = read_xnli_tsv(find_one(xnli_root, f"XNLI-1.0/xnli.{split}.tsv"), languages)
        for lang in languages:
            counts[lang][split] = write_nli_tsv(out_root / lang / f"{split}.tsv", by_lang[lang])
    if source in counts:
        mnli = find_one(multinli_root, "multinli_1.0/multinli_1.0_train.jsonl")
        counts[source]["train"] = write_nli_tsv(out_root / source / "train.tsv", read_multinli_jsonl(mnli))
    return counts
