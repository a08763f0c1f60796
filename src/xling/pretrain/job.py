"""One pretraining job as a typed bundle: exactly the values pretraining uses, built from the
config's ``model:`` and ``pretrain:`` sections (or Liu et al.'s overrides of them) and a Table 1
row's ``separate:``.

The rule's tracked params are :meth:`PretrainJob.tracked`: Snakemake reruns a job when the repr of
a param changes, so the bundle keeps each section's key order as the config gave it, and leaves out
an *option* (a field added after models had been trained, see ``OPTIONS``) while it is at its
default: a new option never makes a finished model look changed, a value set away from the default
retrains exactly the models it applies to. Keys of the sections that pretraining does not use are
not part of the bundle, so they change nothing either.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, Mapping, Sequence

from xling.errors import ConfigError


@dataclass(frozen=True)
class ModelShape:
    """The Transformer encoder (config ``model:``)."""

    layers: int
    heads: int
    dim: int
    ffn_dim: int
    activation: str
    dropout: float
    attention_dropout: float
    tokens_per_sample: int
    # options (MODEL_OPTIONS): tracked only when set away from the value older models were trained
    # with; the schema's defaults follow XLM (docs/reading.md)
    language_embeddings: bool = False
    mlm_head: str = "bert"
    layer_norm_eps: float = 1e-5
    activation_dropout: float | None = None  # None: the layers' dropout (torch's layer)
    init: str = "bert_xavier_attention"


# The model's fields added after models had been trained, at the value those models had.
MODEL_OPTIONS = {"language_embeddings": False, "mlm_head": "bert", "layer_norm_eps": 1e-5, "activation_dropout": None,
                 "init": "bert_xavier_attention"}


def model_option(model: Mapping, key: str):
    """A model option of a tracked ``model`` mapping, which leaves it out at its old value."""
    return model.get(key, MODEL_OPTIONS[key])


@dataclass(frozen=True)
class Recipe:
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
    optimizer: str = "adam"
    adam_betas: tuple[float, float] = (0.9, 0.999)
    adam_eps: float = 1e-6
    weight_decay: float = 0.01
    clip_norm: float = 5.0
    lr_scheduler: str = "inverse_sqrt"
    max_streams_per_step: int | None = None
    cpu_processes: int = 1
    one_language_batches: bool = True
    sample_break_mode: str = "none"
    log_interval: int = 100
    save_interval_updates: int | None = None
    keep_interval_updates: int = 2
    num_workers: int | None = None
    # options (OPTIONS): tracked only when set away from their default
    tensorboard: bool = False
    sentence_window: int | None = None
    # {"by": "batch" | "updates", "sample_break_mode": the reference's}: xling.pretrain.tokens
    match_tokens: Mapping[str, Any] | None = None
    # which rows draw BERT's random words from the sample's own language (dict.<lang>.txt):
    # "separate" (every row with per-language parameters, Section 4.3) or "separate_embeddings"
    in_language_random_words: str = "separate_embeddings"
    # speed alone (the same loss and gradients either way)
    vocab_multiple: int = 64
    compile: bool | str = "auto"


# Fields added after models had been trained with this pipeline, at the value a job's tracked
# params leave them out: the value that reproduces what those models did, or for the options of
# speed alone (the same model either way), their default.
OPTIONS = {"tensorboard": False, "sentence_window": None, "match_tokens": None,
           "in_language_random_words": "separate_embeddings", "vocab_multiple": 64, "compile": "auto"}
RANDOM_WORD_RULES = ("separate", "separate_embeddings")


def in_language_random_words(separate: "Separation", rule: str) -> bool:
    """Whether a model draws its random replacement words from the sample's language only. With
    separate embeddings always (the language's table trains its own tokens only); with separate
    layers alone as ``rule`` says; never for a model whose parameters are all shared (3.1: "the
    random words could be foreign words")."""
    if rule not in RANDOM_WORD_RULES:
        raise ConfigError(f"pretrain.in_language_random_words: {rule!r} is not one of {', '.join(RANDOM_WORD_RULES)}")
    return separate.embeddings or (separate.layers > 0 and rule == "separate")


@dataclass(frozen=True)
class Separation:
    """Which parameters are per language (a Table 1 row's ``separate:``)."""

    embeddings: bool = False
    layers: int = 0
    positions: bool | None = None  # None: as embeddings

    @property
    def separate_positions(self) -> bool:
        return self.embeddings if self.positions is None else bool(self.positions)

    @property
    def any(self) -> bool:
        return self.embeddings or self.layers > 0


ALL_SHARED = {"separate": {"embeddings": False, "layers": 0}}  # every parameter shared by the languages


def _typed(cls, section: Mapping, where: str):
    known = {f.name for f in fields(cls)}
    values = {k: v for k, v in section.items() if k in known}
    missing = [f.name for f in fields(cls) if f.name not in values and f.default is MISSING]
    if missing:
        raise ConfigError(f"{where}: missing {', '.join(missing)}")
    if "adam_betas" in values:
        values["adam_betas"] = tuple(values["adam_betas"])
    return cls(**values)


@dataclass(frozen=True)
class PretrainJob:
    """Everything one pretraining job uses. ``setting`` is the mapping the rule tracks (a Table 1
    row, or ``ALL_SHARED`` for the monolingual and Liu et al. models); ``separate`` is read from it."""

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
    def build(cls, data_dirs: Sequence[str], setting: Mapping, model: Mapping, pretrain: Mapping,
              languages: Sequence[str], seed: int) -> "PretrainJob":
        """From the config's sections (defaults filled in by the schema) or a rule's params.

        A value that cannot change what this job computes is set to its old value, so its tracked
        params leave it out: language embeddings in a one-language model (XLM builds none,
        ``transformer.py`` L279), the rule of in-language random words where the row's parameters
        are all shared or its embeddings separate. A row's ``language_embeddings`` overrides the
        model's."""
        shape = _typed(ModelShape, model, "model")
        own = setting.get("language_embeddings", shape.language_embeddings)
        shape = replace(shape, language_embeddings=bool(own) and len(languages) > 1)
        recipe = _typed(Recipe, pretrain, "pretrain")
        sep = _separation(setting)
        if in_language_random_words(sep, recipe.in_language_random_words) == in_language_random_words(
                sep, OPTIONS["in_language_random_words"]):
            recipe = replace(recipe, in_language_random_words=OPTIONS["in_language_random_words"])
        return cls(
            data_dirs=tuple(str(d) for d in data_dirs),
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
        return _separation(self.setting)

    def model_dict(self) -> dict:
        """The model as tracked: config order, options at their old value left out."""
        return _tracked(self.model, self.model_order, MODEL_OPTIONS)

    def recipe_dict(self) -> dict:
        """The recipe as tracked: config order, options at their default left out."""
        return _tracked(self.recipe, self.recipe_order, OPTIONS)

    def tracked(self) -> dict:
        """The rule's params, one per name (what the workflow script receives)."""
        return {
            "data_dirs": list(self.data_dirs),
            "setting": dict(self.setting),
            "model": self.model_dict(),
            "pretrain": self.recipe_dict(),
            "languages": list(self.languages),
            "seed": self.seed,
        }


def _separation(setting: Mapping) -> Separation:
    sep = setting["separate"]
    return Separation(bool(sep["embeddings"]), int(sep["layers"]), sep.get("positions"))


def _tracked(section, order: tuple[str, ...], options: Mapping[str, Any]) -> dict:
    """A section's fields in ``order`` (all, when empty), each option left out at its old value; an
    option set away from it that the order lacks (given by a row, not the section) comes last."""
    names = order or _names(type(section))
    out = {}
    for k in (*names, *(k for k in options if k not in names)):
        v = getattr(section, k)
        if k in options and v == options[k]:
            continue
        out[k] = list(v) if k == "adam_betas" else v
    return out


def _names(cls) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))
