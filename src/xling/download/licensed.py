"""Licensed corpora (CoNLL-2003, Levow 2006) cannot be downloaded: the user supplies a directory.

At planning time the workflow asks :func:`unavailable_ner_targets` which NER cells lack their
corpora: it plans and runs everything else, warns with these messages (what is missing, where to
get it, where to put it), and Table 1 shows those cells as needing licensed data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping

from xling.errors import ConfigError

# NER dataset name (config finetune.ner.datasets) -> licensed corpora it needs. Levow's English
# side is CoNLL-2003 (paper 3.2: "For English-Chinese, we use CoNLL 2003 English and ... Levow").
DATASET_LICENSED: dict[str, tuple[str, ...]] = {
    "wikiann": (),
    "levow": ("levow_zh", "conll2003_en"),
    "conll2003": ("conll2003_en",),
}


def needed_licensed(config: Mapping) -> dict[str, list[str]]:
    """Licensed corpus id -> reasons it is needed (one per pair/task), from the run's config."""
    finetune = config.get("finetune", {})
    if "ner" not in finetune.get("tasks", []):
        return {}
    datasets = finetune.get("ner", {}).get("datasets", {})
    needed: dict[str, list[str]] = {}
    for pair in config.get("pairs", []):
        src, tgt = pair.split("-", 1)
        dataset = datasets.get(tgt, "wikiann")
        if dataset not in DATASET_LICENSED:
            raise ConfigError(f"finetune.ner.datasets.{tgt}: unknown NER dataset {dataset!r}")
        for corpus in DATASET_LICENSED[dataset]:
            needed.setdefault(corpus, []).append(f"NER for pair {pair} uses {dataset}")
    return needed


def _under(path: Path, root: Path | None) -> bool:
    if root is None:
        return False
    try:
        path.resolve().relative_to(Path(root).resolve())
        return True
    except ValueError:
        return False


def _problem(corpus: str, entry: Mapping | None, root: Path | None) -> str | None:
    """What keeps one licensed corpus from being used, and what to do: None when it is in place
    (or inside ``root``, a directory the workflow fills itself). Names the directory to use."""
    if entry is None:
        return f"the config has no licensed.{corpus} entry"
    how = str(entry.get("how", "")).strip()
    how = f" {how}" if how else ""
    files = list(entry.get("files", []))
    path = entry.get("path")
    if not path:
        return (f"licensed.{corpus}.path is not set.{how} Put {', '.join(files)} in a directory and set "
                f"licensed.{corpus}.path to it.")
    d = Path(path)
    if _under(d, root):
        return None
    if not d.is_dir():
        return f"licensed.{corpus}.path = {d} is not a directory.{how} Put {', '.join(files)} in {d}."
    missing = [f for f in files if not (d / f).is_file()]
    if missing:
        return f"{d} (licensed.{corpus}.path) lacks {', '.join(missing)}.{how} Put them in {d}."
    return None


def licensed_problems(
    licensed: Mapping, needed: Mapping[str, Iterable[str]], generated_under: str | Path | None = None
) -> list[str]:
    """One message per needed corpus that is not usable: why it is needed, what is missing,
    where to get it and which directory to put it in.

    ``generated_under``: a directory the workflow itself fills (the demo's testbed); a corpus path
    inside it is not checked on disk at planning time, since it does not exist yet."""
    root = None if generated_under is None else Path(generated_under)
    problems = []
    for corpus, reasons in needed.items():
        problem = _problem(corpus, licensed.get(corpus), root)
        if problem:
            why = "; ".join(reasons) or "needed"
            problems.append(f"licensed corpus {corpus!r} ({why}): {problem}")
    return problems


def missing_licensed(config: Mapping, generated_under: str | Path | None = None) -> list[str]:
    """Messages for every licensed corpus the config's pairs/tasks need but that is not in place."""
    return licensed_problems(config.get("licensed", {}), needed_licensed(config), generated_under)


def unavailable_ner_targets(config: Mapping, generated_under: str | Path | None = None) -> dict[str, str]:
    """Target language -> why its NER cell cannot run (each missing corpus' message), for the
    pairs whose NER data need a licensed corpus that is not in place."""
    finetune = config.get("finetune", {})
    if "ner" not in finetune.get("tasks", []):
        return {}
    datasets = finetune.get("ner", {}).get("datasets", {})
    root = None if generated_under is None else Path(generated_under)
    licensed = config.get("licensed", {})
    out = {}
    for pair in config.get("pairs", []):
        _, tgt = pair.split("-", 1)
        dataset = datasets.get(tgt, "wikiann")
        corpora = DATASET_LICENSED.get(dataset, ())
        problems = [(c, p) for c in corpora if (p := _problem(c, licensed.get(c), root))]
        if problems:
            out[tgt] = (f"its data ({dataset}) need the licensed corpora {', '.join(corpora)}. "
                        + " ".join(f"{c}: {p}" for c, p in problems))
    return out
