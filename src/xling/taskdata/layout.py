"""Which task-data directories a pair uses (``R/tasks/<task>/<dir>/``).

NER is the one task whose English side depends on the pair (paper 3.2): WikiAnn for en-fr/en-ru,
CoNLL-2003 for en-zh (target Levow). English WikiAnn lives in ``ner/en``, English CoNLL-2003 in
``ner/en_conll2003``; a target language's directory is its code.
"""

from __future__ import annotations

from typing import Mapping


def ner_dataset(config: Mapping, lang: str) -> str:
    """NER dataset of a target language (config ``finetune.ner.datasets``; WikiAnn by default)."""
    return config.get("finetune", {}).get("ner", {}).get("datasets", {}).get(lang, "wikiann")


def task_dirs(config: Mapping, task: str, pair: str) -> tuple[str, str]:
    """``(source_dir, target_dir)`` under ``R/tasks/<task>/`` for ``pair`` (e.g. ``en-zh``)."""
    src, tgt = pair.split("-", 1)
    if task == "ner" and ner_dataset(config, tgt) == "levow":
        return f"{src}_conll2003", tgt
    return src, tgt
