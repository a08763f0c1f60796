"""One pretraining job as a typed bundle: exactly the values pretraining uses, built from the
config's ``model:`` and ``pretrain:`` sections (or Liu et al.'s overrides of them) and a Table 1
row's ``separate:``. The rule builds it once per job; the job's script rebuilds it from the
rule's params (:meth:`PretrainJob.tracked`); the command line is built from it
(:func:`xling.pretrain.command.fairseq_train_command`).

Snakemake reruns a job when the repr of a param changes, so the tracked form keeps each section's
key order as the config gave it. Keys of the sections that pretraining does not use are not part
of the bundle, so they change nothing.

The schema (``xling/config.schema.yaml``) is the one place defaults and allowed values live: a
section reaches a job with its defaults filled in by :func:`xling.config.validate`, every field is
required here, and :meth:`build` checks the values it is given against the same schema
(:func:`xling.config.section_problems`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar, Iterator, Sequence

from xling import config as xcfg
from xling.errors import ConfigError


class _Section(Mapping):
    """A config section as typed fields that still reads like the config's mapping, so the
    counts of :mod:`xling.pretrain.schedule` take a job's section or the config's alike."""

    # every section is a dataclass: declared so that dataclasses.fields types here
    __dataclass_fields__: ClassVar[dict[str, Any]]

    def __getitem__(self, key: str) -> Any:
        if key not in _names(type(self)):
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(_names(type(self)))

    def __len__(self) -> int:
        return len(fields(self))

    @classmethod
    def from_section(cls, section: Mapping, where: str):
        """The fields of ``section`` (other keys ignored; the schema fills in its defaults); an
        absent field is an error naming ``where``."""
        values = {k: v for k, v in section.items() if k in _names(cls)}
        missing = [f.name for f in fields(cls) if f.name not in values and f.default is MISSING]
        if missing:
            raise ConfigError(f"{where}: missing {', '.join(missing)}")
        if "adam_betas" in values:
            values["adam_betas"] = tuple(values["adam_betas"])
        return cls(**values)


@dataclass(frozen=True)
class ModelShape(_Section):
    """The Transformer encoder (config ``model:``; the schema documents every field and its
    default, XLM's model: docs/reading.md)."""

    layers: int
    heads: int
    dim: int
    ffn_dim: int
    activation: str
    dropout: float
    attention_dropout: float
    tokens_per_sample: int
    language_embeddings: bool
    mlm_head: str
    layer_norm_eps: float
    activation_dropout: float | None  # None: the layers' dropout (torch's layer)
    init: str


@dataclass(frozen=True)
class Recipe(_Section):
    """How the model is trained (config ``pretrain:``; the schema documents every field)."""

    lr: float
    warmup_updates: int
    batch_size_per_gpu: int
    batch_gpus: int
    streams_per_epoch_per_gpu: int
    max_epoch: int
    mask_prob: float
    leave_unmasked_prob: float
    random_token_prob: float
    sampling_alpha: float
    precision: str
    optimizer: str
    adam_betas: tuple[float, float]
    adam_eps: float
    weight_decay: float
    clip_norm: float
    lr_scheduler: str
    max_streams_per_step: int | None
    cpu_processes: int
    one_language_batches: bool
    sample_break_mode: str
    log_interval: int
    save_interval_updates: int | None
    keep_interval_updates: int
    num_workers: int | None
    tensorboard: bool
    sentence_window: int | None
    # which rows draw BERT's random words from the sample's own language (dict.<lang>.txt):
    # "separate" (every row with per-language parameters, Section 4.3) or "separate_embeddings"
    in_language_random_words: str
    # speed alone (the same loss and gradients either way)
    vocab_multiple: int
    compile: bool | str
    # {"by": "batch" | "updates", "sample_break_mode": the reference's}: xling.pretrain.tokens; not a
    # key of the config's pretrain: (Liu et al.'s windowed models get it: xling.config.liu2020)
    match_tokens: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Separation:
    """Which parameters are per language (a Table 1 row's ``separate:``)."""

    embeddings: bool = False
    layers: int = 0
    positions: bool | None = None  # None: as embeddings

    @classmethod
    def of(cls, setting: Mapping) -> "Separation":
        sep = setting["separate"]
        return cls(bool(sep["embeddings"]), int(sep["layers"]), sep.get("positions"))

    @property
    def separate_positions(self) -> bool:
        return self.embeddings if self.positions is None else bool(self.positions)

    @property
    def any(self) -> bool:
        return self.embeddings or self.layers > 0

    def in_language_random_words(self, rule: str) -> bool:
        """Whether the model draws its random replacement words from the sample's language only.
        With separate embeddings always (the language's table trains its own tokens only); with
        separate layers alone as ``rule`` says; never for a model whose parameters are all shared
        (3.1: "the random words could be foreign words")."""
        return self.embeddings or (self.layers > 0 and rule == "separate")


ALL_SHARED = {"separate": {"embeddings": False, "layers": 0}}  # every parameter shared by the languages


@dataclass(frozen=True)
class PretrainJob:
    """Everything one pretraining job uses. ``setting`` is the mapping the rule tracks (a Table 1
    row, or ``ALL_SHARED`` for the monolingual and Liu et al. models); ``separate`` is read from it.
    ``languages`` are in language-id order, the source language (whose dev loss selects
    ``checkpoint_best.pt``) first; ``data_dirs``: the first holds the dictionary and validation
    data, fairseq trains epoch k on directory k mod n."""

    data_dirs: tuple[str, ...]
    setting: Mapping[str, Any]
    model: ModelShape
    recipe: Recipe
    languages: tuple[str, ...]
    seed: int
    # the config's key order of each section, for the tracked form (Snakemake compares reprs)
    model_order: tuple[str, ...] = field(default=(), compare=False, repr=False)
    recipe_order: tuple[str, ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def build(cls, data_dirs: str | Path | Sequence[str | Path], setting: Mapping, model: Mapping,
              pretrain: Mapping, languages: Sequence[str], seed: int) -> "PretrainJob":
        """From the config's sections (defaults filled in by the schema) or a rule's params;
        ``data_dirs``: one directory or several. A one-language model has no language embeddings
        (XLM builds none, ``transformer.py`` L279); a row's ``language_embeddings``, where it
        gives one, overrides the model's."""
        _check(setting, model, pretrain, languages)
        shape = ModelShape.from_section(model, "model")
        own = setting["language_embeddings"] if "language_embeddings" in setting else shape.language_embeddings
        shape = replace(shape, language_embeddings=bool(own) and len(languages) > 1)
        recipe = Recipe.from_section(pretrain, "pretrain")
        return cls(
            data_dirs=(str(data_dirs),) if isinstance(data_dirs, (str, Path)) else tuple(str(d) for d in data_dirs),
            setting=dict(setting),
            model=shape,
            recipe=recipe,
            languages=tuple(languages),
            seed=int(seed),
            model_order=tuple(k for k in model if k in _names(ModelShape)),
            recipe_order=tuple(k for k in pretrain if k in _names(Recipe)),
        )

    @property
    def separate(self) -> Separation:
        return Separation.of(self.setting)

    @property
    def in_language_random_words(self) -> bool:
        return self.separate.in_language_random_words(self.recipe.in_language_random_words)

    def with_recipe(self, recipe: Mapping) -> "PretrainJob":
        """This job trained with another recipe (one matched in tokens to its reference)."""
        return replace(self, recipe=Recipe.from_section(recipe, "pretrain"))

    def tracked(self) -> dict:
        """The rule's params, one per name (what the workflow script receives): each section's
        fields in config order."""
        return {
            "data_dirs": list(self.data_dirs),
            "setting": dict(self.setting),
            "model": _tracked(self.model, self.model_order),
            "pretrain": _tracked(self.recipe, self.recipe_order),
            "languages": list(self.languages),
            "seed": self.seed,
        }


def _check(setting: Mapping, model: Mapping, pretrain: Mapping, languages: Sequence[str]) -> None:
    """The job's sections against the schema, its row's parameter sharing against its model, its
    languages distinct: one ConfigError listing every problem."""
    problems = [*xcfg.section_problems("model", model), *xcfg.section_problems("pretrain", pretrain)]
    if "layers" in model:
        problems += xcfg.separation_problems(setting["separate"], int(model["layers"]))
    if not languages or len(set(languages)) != len(languages):
        problems.append(f"pretraining needs distinct languages, got {list(languages)}")
    if problems:
        raise ConfigError("invalid pretraining job:\n  " + "\n  ".join(problems))


def _tracked(section: _Section, order: tuple[str, ...]) -> dict:
    """A section's fields in ``order`` (the config's), those it lacks (given by a row, not the
    section) last."""
    names = (*order, *(k for k in _names(type(section)) if k not in order))
    return {k: list(getattr(section, k)) if k == "adam_betas" else getattr(section, k) for k in names}


@functools.cache
def _names(cls) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))
