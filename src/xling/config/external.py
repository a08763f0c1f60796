"""``analysis.external_models``: ``transformers`` checkpoints (local directories) as Section 5 rows,
the questions of Figures 6 and 7 answered without pretraining (target ``section5_external``).

A row is one of two roles:

- ``monolingual``: one model per language (``models: {en: <dir>, fr: <dir>}``): each other language
  with English is a monolingual pair (Figure 6 after an orthogonal map; Figure 7 beside a random
  encoder of the target model's architecture);
- ``multilingual``: one model (``path``) read as each of its ``languages``: Figure 6 after an
  orthogonal map between its own languages, and without one (raw, and after Liu et al.'s
  mean-difference shift); Figure 7 across its languages.

Every check reads files only (no torch, no transformers): planning refuses a row whose directory
is missing or unreadable, whose model is no encoder, or whose language has no data, before any job,
naming the key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

MONOLINGUAL, MULTILINGUAL = "monolingual", "multilingual"
WEIGHTS_FILES = ("model.safetensors", "pytorch_model.bin")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "sentencepiece.bpe.model", "spiece.model")


@dataclass(frozen=True)
class ExternalRow:
    """One row: its key, role, the report's label, and the model directory of each language it reads
    (a multilingual row's languages all name its one directory)."""

    name: str
    role: str
    label: str
    models: Mapping[str, str]

    def targets(self, src: str) -> list[str]:
        """The languages compared with ``src``, in the row's order."""
        return [lang for lang in self.models if lang != src]

    def key(self, lang: str) -> str:
        """The config key of ``lang``'s model (what an error names)."""
        where = f"analysis.external_models.{self.name}"
        return f"{where}.models.{lang}" if self.role == MONOLINGUAL else f"{where}.path"


def rows(cfg: Mapping) -> list[ExternalRow]:
    """The config's rows, in its order (a row missing its role's keys has none: :func:`problems`)."""
    out = []
    for name, row in (cfg["analysis"].get("external_models") or {}).items():
        if row["role"] == MONOLINGUAL:
            models = dict(row.get("models") or {})
        else:
            models = {lang: row["path"] for lang in row.get("languages") or []} if "path" in row else {}
        out.append(ExternalRow(name, row["role"], row.get("label", name), models))
    return out


def jobs(cfg: Mapping) -> list[tuple[str, str]]:
    """``(row, target language)`` of every external Section 5 job."""
    src = cfg["source_language"]
    return [(r.name, t) for r in rows(cfg) for t in r.targets(src)]


def problems(cfg: Mapping) -> Iterable[str]:
    """One line per problem of the section: a role's keys, the source language, the data a
    language needs (XNLI-15way rows for both figures, Tatoeba for Figure 6: ``tatoeba_ids``), a
    directory that is missing or no encoder, a monolingual pair of models of different depths or
    widths (one map and one CKA per layer)."""
    from xling.config import tatoeba_ids

    src, downloads = cfg["source_language"], cfg["downloads"]
    for name, row in (cfg["analysis"].get("external_models") or {}).items():
        where = f"config key 'analysis.external_models.{name}'"
        if row["role"] == MONOLINGUAL and ("path" in row or "languages" in row or "models" not in row):
            yield f"{where}: a monolingual row names one directory per language (models: {{lang: dir}}), no path"
            continue
        if row["role"] == MULTILINGUAL and ("models" in row or "path" not in row or "languages" not in row):
            yield f"{where}: a multilingual row names one directory (path) and the languages it reads, no models"
            continue
    for r in rows(cfg):
        where = f"config key 'analysis.external_models.{r.name}'"
        if src not in r.models:
            yield f"{where}: the source language {src!r} must be among its languages ({', '.join(r.models)})"
        if "xnli_15way" not in downloads:
            yield f"{where}: Section 5 needs XNLI-15way rows; config key 'downloads' has no entry 'xnli_15way'"
        for lang in r.targets(src):
            missing = [rid for rid in tatoeba_ids(lang) if rid not in downloads]
            if missing:
                yield (f"config key '{r.key(lang)}': Figure 6 retrieves {lang} in Tatoeba; config key "
                       f"'downloads' has no entry {missing[0]!r}")
        readable = True
        for lang, directory in r.models.items():
            problem = check_directory(directory) or _not_an_encoder(Path(directory))
            if problem:
                readable = False
                yield f"config key '{r.key(lang)}': {problem}"
                if r.role == MULTILINGUAL:
                    break  # one directory: said once
        if r.role == MONOLINGUAL and readable and src in r.models:
            shapes = {lang: _shape(Path(d)) for lang, d in r.models.items()}
            for lang in r.targets(src):
                if shapes[lang] != shapes.get(src):
                    yield (f"config key '{r.key(lang)}': {shapes[lang][0]} layers of width {shapes[lang][1]}, the "
                           f"{src} model {shapes[src][0]} of {shapes[src][1]}; one map and one CKA per layer need "
                           f"the same depth and width")


def check_directory(directory: str | Path) -> str | None:
    """What keeps ``directory`` from being read as an encoder with its tokenizer, or None: no
    directory, no ``config.json`` naming a ``model_type``, no weights, no tokenizer files. Reads
    only the files (no transformers import): planning checks every row this way."""
    path = Path(directory)
    if not path.is_dir():
        return f"{path}: no such directory (a transformers model directory: config.json, weights, tokenizer)"
    config = path / "config.json"
    if not config.is_file():
        return f"{path}: no config.json (a transformers model directory)"
    try:
        model_type = json.loads(config.read_text(encoding="utf-8")).get("model_type")
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        return f"{config}: not JSON ({err})"
    if not model_type:
        return f"{config}: names no model_type"
    if not any((path / w).is_file() for w in WEIGHTS_FILES):
        return f"{path}: no weights ({' or '.join(WEIGHTS_FILES)})"
    if not any((path / t).is_file() for t in TOKENIZER_FILES):
        return f"{path}: no tokenizer ({', '.join(TOKENIZER_FILES)})"
    return None


def _config(directory: Path) -> dict:
    return json.loads((directory / "config.json").read_text(encoding="utf-8"))


def _not_an_encoder(directory: Path) -> str | None:
    """What says, from config.json alone, that ``transformers`` cannot read the model as an encoder
    of text (an encoder-decoder, a decoder-only language model), or None."""
    config = _config(directory)
    if config.get("is_encoder_decoder"):
        return f"{directory}: an encoder-decoder model ({config['model_type']}); Section 5 reads an encoder's layers"
    arch = config.get("architectures") or []
    if arch and all(a.endswith(("ForCausalLM", "LMHeadModel", "ForConditionalGeneration")) for a in arch):
        return f"{directory}: a decoder ({', '.join(arch)}); Section 5 reads an encoder's layers"
    for key in ("num_hidden_layers", "hidden_size"):
        if not isinstance(config.get(key), int):
            return f"{directory}/config.json: no {key} (an encoder's depth and width)"
    return None


def _shape(directory: Path) -> tuple[int, int]:
    config = _config(directory)
    return int(config["num_hidden_layers"]), int(config["hidden_size"])
