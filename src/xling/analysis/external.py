"""Section 5 on ``transformers`` checkpoints (``analysis.external_models``, xling.config.external):
a row's models as the analyses read them, and what its results record of them.

A monolingual row reads each language with that language's model (Figure 7's kind
``monolingual``); a multilingual row reads both with its one model (kind ``bilingual``: one model,
both languages, as the paper's bilingual MLM). Figure 7's random encoder is the target side's
model untrained, initialised with ``analysis.random_seed`` (the paper's random encoder reads the
non-English side only).
"""

from __future__ import annotations

from typing import Mapping

from xling.model import ModelSpec, PretrainedModel


def row_specs(row: Mapping, source: str, target: str) -> tuple[ModelSpec, ModelSpec, dict]:
    """The source's and the target's reading of a row (the rule's ``row`` param: name, role, label,
    models, and ``sha256``: each language's weights as planning hashed them), and the ``external``
    record a result carries: the row, and each language's model directory with the sha256 of its
    weights. Weights that differ from what planning saw are refused (replaced after planning)."""
    models = {lang: PretrainedModel.transformers(row["models"][lang]) for lang in (source, target)}
    digests = {lang: m.digest() for lang, m in models.items()}
    for lang, digest in digests.items():
        planned = (row.get("sha256") or {}).get(lang)
        if planned is not None and planned != digest:
            raise ValueError(f"{models[lang].path}: its weights changed since planning (sha256 {digest[:12]}, "
                             f"planned {planned[:12]}); plan the run again")
    meta = {"external": {
        "row": row["name"], "role": row["role"], "label": row["label"],
        "models": {lang: {"path": str(m.path), "sha256": digests[lang]} for lang, m in models.items()},
    }}
    return ModelSpec(models[source], source), ModelSpec(models[target], target), meta


def cka_models(source: ModelSpec, target: ModelSpec, random_seed: int) -> dict[str, tuple[ModelSpec, ModelSpec] | None]:
    """Figure 7's kinds for one row: its trained models under ``monolingual`` (two models) or
    ``bilingual`` (one model read as both languages), and ``random``: the source side trained, the
    target side untrained."""
    trained = (source, target)
    one_model = source.model == target.model
    untrained = ModelSpec(target.model.untrained(random_seed), target.lang, target.text_lang)
    return {"monolingual": None if one_model else trained, "bilingual": trained if one_model else None,
            "random": (source, untrained)}
