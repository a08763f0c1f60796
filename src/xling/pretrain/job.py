"""One pretraining job as a typed bundle: exactly the values pretraining uses, built from the
config's ``model:`` and ``pretrain:`` sections (or Liu et al.'s overrides of them) and a Table 1
row's ``separate:``. The rule builds it once per job; the job's script rebuilds it from the
rule's params (:meth:`PretrainJob.tracked`); the command line is built from it
(:func:`xling.pretrain.command.fairseq_train_command`).

Snakemake reruns a job when the repr of a param changes, so the tracked form keeps each section's
key order as the config gave it, and leaves out an *option* (a field added after models had been
trained, declared with :func:`option`) while it holds the value those models had: a new option
never makes a finished model look changed, a value set away from it retrains exactly the models it
applies to. Keys of the sections that pretraining does not use are not part of the bundle, so they
change nothing either.

The schema (``xling/config.schema.yaml``) is where defaults and allowed values live: a section
reaches a job with its defaults filled in by :func:`xling.config.validate`, and :meth:`build`
checks the values it is given against the same schema (:func:`xling.config.section_problems`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Iterator, Sequence

from xling import config as xcfg
from xling.errors import ConfigError


def option(default: Any):
    """A field added after models had been trained with this pipeline: ``default`` is the value
    those models had (for the options of speed alone, which train the same model either way, the
    schema's default), and a job's tracked params leave the field out while it holds it."""
    return field(default=default, metadata={"option": True})


class _Section(Mapping):
    """A config section as typed fields that still reads like the config's mapping, so the
    counts of :mod:`xling.pretrain.schedule` take a job's section or the config's alike."""

    def __getitem__(self, key: str) -> Any:
        if key not in _names(type(self)):
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(_names(type(self)))

    def __len__(self) -> int:
        return len(fields(self))

    @classmethod
    def options(cls) -> dict[str, Any]:
        """Each option and the value a tracked job leaves it out at."""
        return {f.name: f.default for f in fields(cls) if f.metadata.get("option")}

    @classmethod
    def from_section(cls, section: Mapping, where: str):
        """The fields of ``section`` (other keys ignored); an absent option takes the value older
        jobs had, an absent field that is not an option is an error naming ``where``."""
        values = {k: v for k, v in section.items() if k in _names(cls)}
        missing = [f.name for f in fields(cls) if f.name not in values and f.default is MISSING]
        if missing:
            raise ConfigError(f"{where}: missing {', '.join(missing)}")
        if "adam_betas" in values:
            values["adam_betas"] = tuple(values["adam_betas"])
        return cls(**values)


@dataclass(frozen=True)
class ModelShape(_Section):
    """The Transformer encoder (config ``model:``; the schema documents every field). The
    options' schema defaults follow XLM (docs/reading.md); older models had BERT's."""

    layers: int
    heads: int
    dim: int
    ffn_dim: int
    activation: str
    dropout: float
    attention_dropout: float
    tokens_per_sample: int
    language_embeddings: bool = option(False)
    mlm_head: str = option("bert")
    layer_norm_eps: float = option(1e-5)
    activation_dropout: float | None = option(None)  # None: the layers' dropout (torch's layer)
    init: str = option("bert_xavier_attention")  # BERT's N(0, 0.02) with torch's q/k/v, as drawn before


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
    tensorboard: bool = option(False)
    sentence_window: int | None = option(None)
    # {"by": "batch" | "updates", "sample_break_mode": the reference's}: xling.pretrain.tokens
    match_tokens: Mapping[str, Any] | None = option(None)
    # which rows draw BERT's random words from the sample's own language (dict.<lang>.txt):
    # "separate" (every row with per-language parameters, Section 4.3) or "separate_embeddings"
    in_language_random_words: str = option("separate_embeddings")
    # speed alone (the same loss and gradients either way)
    vocab_multiple: int = option(64)
    compile: bool | str = option("auto")


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
        ``data_dirs``: one directory or several.

        A value that cannot change what this job computes is set to its old value, so its tracked
        params leave it out: language embeddings in a one-language model (XLM builds none,
        ``transformer.py`` L279), the rule of in-language random words where the row's parameters
        are all shared or its embeddings separate. A row's ``language_embeddings`` overrides the
        model's."""
        _check(setting, model, pretrain, languages)
        shape = ModelShape.from_section(model, "model")
        own = setting.get("language_embeddings", shape.language_embeddings)
        shape = replace(shape, language_embeddings=bool(own) and len(languages) > 1)
        recipe = Recipe.from_section(pretrain, "pretrain")
        sep, old_rule = Separation.of(setting), Recipe.options()["in_language_random_words"]
        if sep.in_language_random_words(recipe.in_language_random_words) == sep.in_language_random_words(old_rule):
            recipe = replace(recipe, in_language_random_words=old_rule)
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
        """The rule's params, one per name (what the workflow script receives): each section in
        config order, options at their old value left out."""
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
    """A section's fields in ``order`` (all, when empty), each option left out at its old value; an
    option set away from it that the order lacks (given by a row, not the section) comes last."""
    options = type(section).options()
    names = order or _names(type(section))
    out = {}
    for k in (*names, *(k for k in options if k not in names)):
        v = getattr(section, k)
        if k in options and v == options[k]:
            continue
        out[k] = list(v) if k == "adam_betas" else v
    return out


@functools.cache
def _names(cls) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))
