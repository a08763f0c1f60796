"""Weighted bilingual dictionaries from a PanLex CSV snapshot (db.panlex.org `panlex-*-csv.zip`).

Tables used (columns as in the snapshot's headers):
  langvar.csv    id, lang_code, var_code, ...   (a variety's uid is `<lang_code>-<var_code:03d>`)
  expr.csv       id, langvar, txt, ...
  denotation.csv id, meaning, expr
  meaning.csv    id, source
  source.csv     id, ..., quality, grp, ...

Two expressions of the two varieties that denote the same meaning are translations. Weight of a
translation (a, b): take the meanings in which both a and b occur; each meaning comes from one
source; group those sources by their source group (`grp`, the source id itself when empty) and
keep the best `quality` in each group; the weight is the sum over groups. So a pair attested by
several independent groups outweighs one attested many times within one group of related
sources (PanLex's own translation-quality score, and the paper's "weighted according to their
translation quality").

The big tables are streamed, keeping only what concerns the two varieties: their langvar ids,
then their expressions, then the meanings with an expression of the target, then the source-side
denotations of those meanings, then those meanings' sources.
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path
from typing import Iterator

from xling.errors import InputError

# Paper languages -> PanLex language varieties (config-overridable: codeswitch.panlex_uids).
DEFAULT_UIDS = {"en": "eng-000", "fr": "fra-000", "de": "deu-000", "ru": "rus-000", "zh": "cmn-000"}

TABLE_COLUMNS = {
    "langvar.csv": ("id", "lang_code", "var_code"),
    "expr.csv": ("id", "langvar", "txt"),
    "denotation.csv": ("meaning", "expr"),
    "meaning.csv": ("id", "source"),
    "source.csv": ("id", "quality", "grp"),
}

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # some PanLex texts are long


def find_snapshot(root: Path) -> Path:
    """The directory holding the CSV tables: `root` itself or the one folder below it that has
    langvar.csv (the zip unpacks to `panlex-YYYYMMDD-csv/`)."""
    root = Path(root)
    if (root / "langvar.csv").is_file():
        return root
    found = sorted(p.parent for p in root.rglob("langvar.csv"))
    if len(found) != 1:
        raise InputError(root, None, "exactly one PanLex CSV snapshot (a folder with langvar.csv)",
                         f"{len(found)} found")
    return found[0]


def _rows(path: Path, columns: tuple[str, ...]) -> Iterator[tuple[int, list[str]]]:
    """(line number, [values of `columns`]) per data row; InputError on a missing column or a
    short row."""
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader)
        except StopIteration:
            raise InputError(path, 1, f"a CSV header with columns {', '.join(columns)}", "empty file")
        missing = [c for c in columns if c not in header]
        if missing:
            raise InputError(path, 1, f"a CSV header with columns {', '.join(columns)} "
                             f"(missing: {', '.join(missing)})", ",".join(header))
        idx = [header.index(c) for c in columns]
        width = len(header)
        for row in reader:
            if len(row) != width:
                raise InputError(path, reader.line_num, f"{width} fields as in the header",
                                 f"{len(row)} fields: {','.join(row)}")
            yield reader.line_num, [row[i] for i in idx]


def _int(path: Path, line: int, value: str, what: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise InputError(path, line, f"an integer {what}", value)


def langvar_ids(snapshot: Path, uids: list[str]) -> dict[str, str]:
    """uid -> langvar id (as the string it is written as in expr.csv)."""
    path = snapshot / "langvar.csv"
    wanted = set(uids)
    found: dict[str, str] = {}
    for line, (lid, lang_code, var_code) in _rows(path, TABLE_COLUMNS["langvar.csv"]):
        uid = f"{lang_code}-{_int(path, line, var_code, 'var_code'):03d}"
        if uid in wanted:
            found[uid] = lid
    missing = wanted - set(found)
    if missing:
        raise InputError(path, None, f"language varieties {', '.join(sorted(missing))}", "not in the snapshot")
    return found


def read_panlex(root: Path, src_uid: str, tgt_uid: str) -> dict[tuple[str, str], int]:
    """{(source text, target text): weight} for the two varieties (see the module docstring)."""
    snap = find_snapshot(root)
    lv = langvar_ids(snap, [src_uid, tgt_uid])
    side_of_langvar = {lv[src_uid]: 0, lv[tgt_uid]: 1}

    # expressions of the two varieties: expr id (string, compared as read) -> (side, text)
    exprs: dict[str, tuple[int, str]] = {}
    for _, (eid, langvar, txt) in _rows(snap / "expr.csv", TABLE_COLUMNS["expr.csv"]):
        side = side_of_langvar.get(langvar)
        if side is not None:
            exprs[eid] = (side, " ".join(txt.split()))

    # pass 1 over denotations: meanings with a target expression; pass 2: their source expressions
    den = snap / "denotation.csv"
    tgt_of: dict[str, set[str]] = defaultdict(set)
    for _, (meaning, eid) in _rows(den, TABLE_COLUMNS["denotation.csv"]):
        e = exprs.get(eid)
        if e is not None and e[0] == 1:
            tgt_of[meaning].add(eid)
    src_of: dict[str, set[str]] = defaultdict(set)
    for _, (meaning, eid) in _rows(den, TABLE_COLUMNS["denotation.csv"]):
        if meaning in tgt_of:
            e = exprs.get(eid)
            if e is not None and e[0] == 0:
                src_of[meaning].add(eid)

    source_of: dict[str, str] = {}
    mpath = snap / "meaning.csv"
    for _, (mid, sid) in _rows(mpath, TABLE_COLUMNS["meaning.csv"]):
        if mid in src_of:
            source_of[mid] = sid
    spath = snap / "source.csv"
    needed = set(source_of.values())
    quality_grp: dict[str, tuple[int, str]] = {}
    for line, (sid, quality_field, grp_field) in _rows(spath, TABLE_COLUMNS["source.csv"]):
        if sid in needed:
            quality_grp[sid] = (_int(spath, line, quality_field, "quality"), grp_field or sid)

    # (a, b) -> group -> best quality in that group
    best: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for meaning, srcs in src_of.items():
        source = source_of.get(meaning)
        if source is None:
            raise InputError(mpath, None, f"a row for meaning {meaning} used in {den.name}", "none")
        if source not in quality_grp:
            raise InputError(spath, None, f"a row for source {source} used in {mpath.name}", "none")
        quality, grp = quality_grp[source]
        for a in srcs:
            for b in tgt_of[meaning]:
                groups = best[(a, b)]
                if quality > groups.get(grp, -1):
                    groups[grp] = quality

    out: dict[tuple[str, str], int] = {}
    for (a, b), groups in best.items():
        key = (exprs[a][1], exprs[b][1])
        if key[0] and key[1]:
            out[key] = out.get(key, 0) + sum(groups.values())
    return out
