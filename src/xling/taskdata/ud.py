"""UD treebanks: validate ``ud-treebanks-v2.3/<treebank>/<code>-ud-<split>.conllu`` (from the
archive, or one such file downloaded alone) and copy them unchanged to
``tasks/parsing/<lang>/<split>.conllu``.

Validation (what the parser relies on): 10 tab-separated columns per token line, fields the
``conllu`` library can parse, word ids 1..n in order, every word's head an integer in 0..n,
exactly one root, and multiword-token ranges ``a-b`` (a < b) that start at the next word and stay
inside the sentence. Empty nodes (``8.1``, enhanced UD) are allowed and ignored.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conllu.exceptions import ParseException
from conllu.parser import DEFAULT_FIELD_PARSERS, DEFAULT_FIELDS

from xling.errors import InputError
from xling.io import atomic_path
from xling.taskdata.textio import blank_line_blocks, numbered_lines


def _check_sentence(path: Path, rows: list[tuple[int, dict]]) -> None:
    """Sentence-level checks over ``(line_number, parsed token)`` rows."""
    words = [(i, t) for i, t in rows if isinstance(t["id"], int)]
    n = len(words)
    if n == 0:
        raise InputError(path, rows[0][0], "a sentence with at least one word line", "only multiword/empty lines")
    roots = 0
    next_id = 1
    for i, t in rows:
        tid = t["id"]
        if isinstance(tid, int):
            if tid != next_id:
                raise InputError(path, i, f"word id {next_id}", str(tid))
            next_id += 1
            head = t["head"]
            if not isinstance(head, int) or not 0 <= head <= n:
                raise InputError(path, i, f"a head in 0..{n}", str(head))
            roots += head == 0
        elif tid[1] == "-":
            a, b = tid[0], tid[2]
            if a != next_id or b <= a or b > n:
                raise InputError(path, i, f"a multiword range starting at word {next_id} ending after it, "
                                 f"within 1..{n}", f"{a}-{b}")
    if roots != 1:
        raise InputError(path, rows[0][0], "exactly one word with head 0 in the sentence starting here",
                         f"{roots} roots")


def validate_conllu(path: str | Path) -> int:
    """Validate a CoNLL-U file (see module doc); return the number of sentences."""
    path = Path(path)
    sentences = 0
    for block in blank_line_blocks(numbered_lines(path)):
        rows: list[tuple[int, dict]] = []
        for i, line in block:
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 10:
                raise InputError(path, i, "10 tab-separated CoNLL-U columns", f"{len(cols)} columns: {line}")
            try:
                # conllu's own field parsers on our tab split (its parse_line also splits on double
                # spaces, which would shift columns for a form that contains them)
                token = {f: DEFAULT_FIELD_PARSERS[f](cols, k) if f in DEFAULT_FIELD_PARSERS else cols[k]
                         for k, f in enumerate(DEFAULT_FIELDS)}
            except ParseException as e:
                raise InputError(path, i, "valid CoNLL-U fields", f"{e}: {line}") from e
            if token["id"] is None:
                raise InputError(path, i, "an id (n, a-b or n.m)", cols[0])
            rows.append((i, token))
        if rows:  # a block of comments only is no sentence
            _check_sentence(path, rows)
            sentences += 1
    if sentences == 0:
        raise InputError(path, None, "at least one sentence", "an empty file")
    return sentences


def treebank_file(ud_root: str | Path, treebank: str, split: str) -> Path:
    """``<ud_root>/[ud-treebanks-v2.3/]<treebank>/<code>-ud-<split>.conllu`` (code from the file name)."""
    ud_root = Path(ud_root)
    for base in (ud_root, ud_root / "ud-treebanks-v2.3"):
        hits = sorted((base / treebank).glob(f"*-ud-{split}.conllu"))
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise InputError(base / treebank, None, f"one *-ud-{split}.conllu", ", ".join(h.name for h in hits))
    raise InputError(ud_root / treebank / f"<code>-ud-{split}.conllu", None, f"the {split} file of {treebank}",
                     "no such file")


def copy_validated(src: str | Path, out: str | Path) -> int:
    """Validate the CoNLL-U file ``src`` and copy it unchanged to ``out`` (atomically); its sentences."""
    sentences = validate_conllu(src)
    with atomic_path(Path(out)) as tmp:
        shutil.copyfile(src, tmp)
    return sentences


def build_ud(ud_root: str | Path, treebank: str, splits: dict[str, str], out_dir: str | Path) -> dict[str, int]:
    """Validate and copy ``{out_split: ud_split}`` files of ``treebank`` to ``out_dir/<out_split>.conllu``.
    Returns sentences per output split. (``{'train': 'dev', ...}`` lets small runs stand dev in for train.)"""
    return {out_split: copy_validated(treebank_file(ud_root, treebank, ud_split), Path(out_dir) / f"{out_split}.conllu")
            for out_split, ud_split in splits.items()}


def build_ud_split(out: str | Path, treebank: str, ud_split: str, conllu: str | Path | None = None,
                   ud_root: str | Path | None = None) -> dict:
    """One task file ``out`` from ``treebank``'s ``ud_split``: the single downloaded file ``conllu``
    (UD's name for it, ``<code>-ud-<ud_split>.conllu``, is checked: a download id given the wrong
    split's file stops here), or the file inside the extracted archive ``ud_root``."""
    if (conllu is None) == (ud_root is None):
        raise ValueError("build_ud_split reads either a single .conllu file or the UD archive")
    if conllu is not None:
        src = Path(conllu)
        if not src.name.endswith(f"-ud-{ud_split}.conllu"):
            raise InputError(src, None, f"the {ud_split} file of {treebank} (<code>-ud-{ud_split}.conllu)", src.name)
    else:
        assert ud_root is not None
        src = treebank_file(ud_root, treebank, ud_split)
    return {"treebank": treebank, "split": ud_split, "file": str(src), "sentences": copy_validated(src, out)}
