"""``analysis.external_models``: ``transformers`` checkpoints (local directories) as Section 5 rows,
the questions of Figures 6 and 7 answered without pretraining (target ``section5_external``).

A row is one of two roles:

- ``monolingual``: one model per language (``models: {en: <dir>, fr: <dir>}``): each other language
  with English is a monolingual pair (Figure 6 after an orthogonal map; Figure 7 beside a random
  encoder of the target model's architecture);
- ``multilingual``: one model (``path``) read as each of its ``languages``: Figure 6 after an
  orthogonal map between its own languages, and without one (raw, and after Liu et al.'s
  mean-difference shift); Figure 7 across its languages.

Planning refuses, before any job and naming the key, a row whose directory is missing or
unreadable, whose weights file is truncated or corrupt, whose model is no encoder (as
``transformers``' own config classes read its config.json: DistilBERT's ``n_layers`` and ``dim`` are
its depth and width), or whose language has no data. ``transformers`` (and torch with it, some
seconds) is imported only when the config has rows. The sha256 of each weights file is taken then
(:func:`weights_digests`, cached by file size and modification time) and every job of the row checks
its file against it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

MONOLINGUAL, MULTILINGUAL = "monolingual", "multilingual"
WEIGHTS_FILES = ("model.safetensors", "pytorch_model.bin")
# what AutoTokenizer reads: a fast tokenizer's tokenizer.json, WordPiece's vocab.txt, BPE's vocab.json
# (+ merges.txt), sentencepiece models under XLM-R's, ALBERT's and DeBERTa-v2's names
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "sentencepiece.bpe.model", "spiece.model",
                   "spm.model")
XNLI_15WAY = ("en", "fr", "es", "de", "el", "bg", "ru", "tr", "ar", "vi", "th", "zh", "hi", "sw", "ur")


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
        """The config key of ``lang``'s model (what an error about its files names)."""
        where = f"analysis.external_models.{self.name}"
        return f"{where}.models.{lang}" if self.role == MONOLINGUAL else f"{where}.path"

    def language_key(self, lang: str) -> str:
        """The config key that asks for ``lang`` (what an error about its data names)."""
        where = f"analysis.external_models.{self.name}"
        return f"{where}.models.{lang}" if self.role == MONOLINGUAL else f"{where}.languages"


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
    language needs (XNLI-15way rows for both figures unless analysis.parallel is pud, Tatoeba for
    Figure 6: ``tatoeba_ids``), a
    directory that is missing or no encoder, a monolingual pair of models of different depths or
    widths (one map and one CKA per layer)."""
    from xling.config import tatoeba_ids

    src, downloads = cfg["source_language"], cfg["downloads"]
    # with analysis.parallel: pud the rows are PUD's, checked with the other Section 5 languages'
    way15 = cfg["analysis"]["parallel"] == "xnli_15way"
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
        if way15 and "xnli_15way" not in downloads:
            yield f"{where}: Section 5 needs XNLI-15way rows; config key 'downloads' has no entry 'xnli_15way'"
        for lang in r.targets(src):
            missing = [f"Tatoeba {lang}-{src} (downloads {' and '.join(ids)})"
                       for ids in [[rid for rid in tatoeba_ids(lang) if rid not in downloads]] if ids]
            if way15 and lang not in XNLI_15WAY:
                missing.append(f"XNLI-15way column (its languages: {', '.join(XNLI_15WAY)})")
            if missing:
                yield (f"config key '{r.language_key(lang)}': {lang!r} has no Section 5 data: no "
                       + " and no ".join(missing))
        readable = True
        for lang, directory in r.models.items():
            problem = check_directory(directory) or check_weights(Path(directory)) or _not_an_encoder(Path(directory))
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


def weights_file(directory: str | Path) -> Path:
    """The weights file of a model directory (the first of WEIGHTS_FILES it has)."""
    path = Path(directory)
    return next((path / w for w in WEIGHTS_FILES if (path / w).is_file()), path / WEIGHTS_FILES[0])


def check_weights(directory: Path) -> str | None:
    """What says the weights file is truncated or corrupt, or None: safetensors' own header check
    (its offsets must cover the file exactly, so a cut file fails), or for ``pytorch_model.bin``
    torch.save's zip archive and its central directory (at the end, so a cut file has none). Reads
    the headers only."""
    path = weights_file(directory)
    if path.suffix == ".safetensors":
        from safetensors import SafetensorError, safe_open

        try:
            with safe_open(str(path), framework="numpy"):
                return None
        except SafetensorError as err:
            return f"{path}: not a whole safetensors file ({err})"
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            archive.infolist()
        return None
    except (zipfile.BadZipFile, OSError) as err:
        return f"{path}: not a whole torch.save archive (a zip file; {err})"


def _config(directory: Path):
    """``transformers``' config object of the model (its class maps each model's own key names:
    DistilBERT's ``n_layers``/``dim``, XLM's ``n_layers``/``emb_dim``)."""
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(str(directory))


def _not_an_encoder(directory: Path) -> str | None:
    """What says ``transformers`` cannot read the model as an encoder of text (a model type it has
    no base model for, an encoder-decoder, a decoder-only language model, a config without depth or
    width), or None."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
        MODEL_MAPPING_NAMES,
    )

    try:
        config = _config(directory)
    except (ValueError, KeyError, OSError) as err:
        return f"{directory}/config.json: transformers cannot read it ({str(err).splitlines()[0]})"
    if getattr(config, "is_encoder_decoder", False):
        return f"{directory}: an encoder-decoder model ({config.model_type}); Section 5 reads an encoder's layers"
    # transformers' own tables, not class names: XLM's masked LM is called XLMWithLMHeadModel
    kind = config.model_type
    if kind in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and kind not in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return (f"{directory}: a decoder ({config.model_type}: transformers has a causal language model of it and no "
                f"masked one); Section 5 reads an encoder's layers")
    if config.model_type not in MODEL_MAPPING_NAMES:
        return f"{directory}: transformers has no base model (AutoModel) for model_type {config.model_type!r}"
    for key in ("num_hidden_layers", "hidden_size"):
        if not isinstance(getattr(config, key, None), int):
            return (f"{directory}/config.json: no {key} (an encoder's depth and width, as {type(config).__name__} "
                    "reads it)")
    return None


def _shape(directory: Path) -> tuple[int, int]:
    config = _config(directory)
    return int(config.num_hidden_layers), int(config.hidden_size)


def weights_digests(cfg: Mapping, cache: Path | None = None) -> dict[str, dict[str, str]]:
    """Row name -> language -> the sha256 of its model's weights file, as planning saw it (jobs
    check theirs against it). ``cache``: a JSON file of digests keyed by path, size and modification
    time, so that a dry run does not hash a gigabyte of weights again."""
    import os

    from xling.download.fetch import sha256_file
    from xling.io import atomic_write

    known = {}
    if cache is not None and cache.is_file():
        try:
            known = json.loads(cache.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            known = {}  # a damaged cache is only a cache: hash again
    out: dict[str, dict[str, str]] = {}
    changed = False
    for r in rows(cfg):
        out[r.name] = {}
        for lang, directory in r.models.items():
            path = weights_file(directory).resolve()
            st = os.stat(path)
            key = f"{path}:{st.st_size}:{st.st_mtime_ns}"
            if key not in known:
                known[key], changed = sha256_file(path), True
            out[r.name][lang] = known[key]
    if cache is not None and changed:
        with atomic_write(cache) as fh:
            json.dump(known, fh, indent=1, sort_keys=True)
    return out
