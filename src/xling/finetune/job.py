"""One fine-tuning job as a typed bundle, and the grid it is a cell of: what planning needs of
fine-tuning, importable without torch (every dry run and every SLURM job's re-parse of the
workflow builds these).

The rule builds a :class:`FinetuneJob` from the config's ``finetune:`` section and passes
:meth:`FinetuneJob.tracked` as its ``job`` param; the job's script makes it again with
:meth:`FinetuneJob.from_tracked`. A grid cell's :class:`Hyperparameters` travel in the tracked form
as the mapping the config gives (``hp``), in its key order.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from xling.config import cell_from_id, grid_cells
from xling.preprocess.tokenize import TokenizeSettings

# The tracked form's keys, in the order the rule's params have always had them (Snakemake compares
# the repr of a param, and a dict's repr follows its order).
TRACKED = ("task", "src_lang", "tgt_lang", "hp", "epochs", "epoch_size", "schedule", "warmup_fraction",
           "max_seq_len", "seed", "max_train_examples", "max_eval_examples", "tokenize")


@dataclass(frozen=True)
class Hyperparameters:
    """One grid cell's hyperparameters: ``batch_size`` and either ``lr`` (NER, parsing) or
    ``encoder_lr`` + ``classifier_lr`` (XNLI: one learning rate for the encoder, one for the head);
    the parser's MLP sizes ``arc_mlp``/``label_mlp`` travel with its cells."""

    batch_size: int
    lr: float | None = None
    encoder_lr: float | None = None
    classifier_lr: float | None = None
    arc_mlp: int | None = None
    label_mlp: int | None = None
    # the cell's keys in the order the config gave them, for the tracked form (Snakemake compares
    # the repr of a param, and a dict's repr follows its order)
    order: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        given = (self.lr is not None, self.encoder_lr is not None, self.classifier_lr is not None)
        if given not in ((True, False, False), (False, True, True)):
            raise ValueError(f"a grid cell has lr or encoder_lr + classifier_lr, got {self.tracked()}")
        if (self.arc_mlp is None) != (self.label_mlp is None):
            raise ValueError(f"a parsing cell has arc_mlp and label_mlp, got {self.tracked()}")

    @classmethod
    def of(cls, cell: Mapping[str, Any]) -> Hyperparameters:
        """From a cell's mapping: the config grid's (``xling.config.grid_cells``), or the tracked form."""
        unknown = sorted(set(cell) - set(_HP_NAMES))
        if unknown:
            raise ValueError(f"unknown hyperparameter(s) {', '.join(unknown)} of grid cell {dict(cell)}")
        return cls(**cell, order=tuple(cell))

    @property
    def split_lr(self) -> bool:
        """One learning rate for the encoder and one for the head (XNLI)."""
        return self.encoder_lr is not None

    def learning_rates(self) -> tuple[float, float]:
        """(the encoder's, the head's): ``encoder_lr`` and ``classifier_lr``, else ``lr`` for both."""
        if self.encoder_lr is not None and self.classifier_lr is not None:
            return float(self.encoder_lr), float(self.classifier_lr)
        assert self.lr is not None  # __post_init__ refuses a cell without either
        return float(self.lr), float(self.lr)

    def tracked(self) -> dict[str, Any]:
        """The cell's mapping, in the order it was given (the rule's params, result.json's ``hp``)."""
        names = (*self.order, *(n for n in _HP_NAMES if n not in self.order))
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}


_HP_NAMES = tuple(f.name for f in fields(Hyperparameters) if f.name != "order")


@dataclass(frozen=True)
class FinetuneJob:
    """One grid cell of one task (a job trains the cells of a batch size together).

    ``schedule`` None: constant with ``encoder_lr``, else warmup_linear; ``epoch_size`` = training
    examples per epoch (None: one pass; XLM's XNLI epochs are 20000 examples); ``tokenize``:
    language -> TokenizeSettings fields (how its corpus was tokenised; a language without an entry
    gets the plain Moses chain)."""

    task: str
    src_lang: str
    tgt_lang: str
    hp: Hyperparameters
    epochs: int
    seed: int
    max_seq_len: int
    warmup_fraction: float
    schedule: str | None = None
    epoch_size: int | None = None
    max_train_examples: int | None = None
    max_eval_examples: int | None = None
    tokenize: dict = field(default_factory=dict)

    @classmethod
    def build(cls, finetune: Mapping[str, Any], task: str, src_lang: str, tgt_lang: str, hp: Hyperparameters,
              seed: int, tokenize: dict) -> "FinetuneJob":
        """The job of cell ``hp`` of ``task`` from the config's ``finetune:`` section (the task's
        length, schedule and caps, the shared sequence length and evaluation cap)."""
        spec = finetune[task]
        return cls(task=task, src_lang=src_lang, tgt_lang=tgt_lang, hp=hp, epochs=spec["epochs"],
                   seed=int(seed), max_seq_len=finetune["max_seq_len"], warmup_fraction=spec["warmup_fraction"],
                   schedule=spec["schedule"], epoch_size=spec["epoch_size"],
                   max_train_examples=spec["max_train_examples"], max_eval_examples=finetune["max_eval_examples"],
                   tokenize=tokenize)

    @classmethod
    def from_tracked(cls, params: Mapping[str, Any]) -> "FinetuneJob":
        """The job again from the rule's ``job`` param (:meth:`tracked`)."""
        return cls(**{**params, "hp": Hyperparameters.of(params["hp"])})

    def tracked(self) -> dict:
        """The rule's ``job`` param."""
        return {name: self.hp.tracked() if name == "hp" else getattr(self, name) for name in TRACKED}

    def tokenize_settings(self, lang: str, stanford_home: str | None = None) -> TokenizeSettings:
        fields = self.tokenize.get(lang) or {"moses_lang": lang}
        return TokenizeSettings(**fields, stanford_home=stanford_home)


def cell_hp(finetune: Mapping[str, Any], task: str, hp_id: str) -> Hyperparameters:
    """The hyperparameters of the grid cell ``hp_id`` of ``task`` (the parser's MLP sizes travel
    with its cell)."""
    spec = finetune[task]
    hp = dict(cell_from_id(spec, hp_id))
    if task == "parsing":
        hp.update(arc_mlp=spec["arc_mlp"], label_mlp=spec["label_mlp"])
    return Hyperparameters.of(hp)


def cells_by_batch_size(task_cfg: dict) -> dict[int, list[dict]]:
    """A task's grid (``finetune.<task>`` of the config) as grid jobs: batch size -> the cells one
    job trains together, in ``xling.config.grid_cells``' order."""
    out: dict[int, list[dict]] = {}
    for cell in grid_cells(task_cfg):
        out.setdefault(int(cell["batch_size"]), []).append(cell)
    return out


# The workflow's fine-tuning rule, one per task (workflow/rules/finetune.smk): a job per batch size,
# training the cells of that batch size together
GRID_RULE = "finetune_grid_{task}"


def finetune_rules(finetune: Mapping[str, Any]) -> list[str]:
    """The rules whose jobs fine-tune under the config's ``finetune:`` section, one per task:
    ``--forcerun`` with these re-runs every fine-tuning job of the targets asked for."""
    return [GRID_RULE.format(task=t) for t in finetune["tasks"]]
