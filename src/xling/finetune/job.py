"""One fine-tuning job as a typed bundle, and the grid it is a cell of: what planning needs of
fine-tuning, importable without torch (every dry run and every SLURM job's re-parse of the
workflow builds these).

The rule builds a :class:`FinetuneJob` from the config's ``finetune:`` section and passes
:meth:`FinetuneJob.tracked` as its ``job`` param; the job's script makes it again with
``FinetuneJob(**params.job)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from xling.config import cell_from_id, grid_cells
from xling.preprocess.tokenize import TokenizeSettings

# The tracked form's keys, in the order the rule's params have always had them (Snakemake compares
# the repr of a param, and a dict's repr follows its order).
TRACKED = ("task", "src_lang", "tgt_lang", "hp", "epochs", "epoch_size", "schedule", "warmup_fraction",
           "max_seq_len", "seed", "max_train_examples", "max_eval_examples", "tokenize")


@dataclass(frozen=True)
class FinetuneJob:
    """One grid cell of one task (a job trains the cells of a batch size together).

    ``hp`` holds ``batch_size`` and either ``lr`` or ``encoder_lr`` + ``classifier_lr`` (and the
    parser's ``arc_mlp``/``label_mlp``); ``schedule`` None: constant with ``encoder_lr``, else
    warmup_linear; ``epoch_size`` = training examples per epoch (None: one pass; XLM's XNLI epochs
    are 20000 examples); ``tokenize``: language -> TokenizeSettings fields (how its corpus was
    tokenised; a language without an entry gets the plain Moses chain)."""

    task: str
    src_lang: str
    tgt_lang: str
    hp: dict
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
    def build(cls, finetune: Mapping[str, Any], task: str, src_lang: str, tgt_lang: str, hp: Mapping, seed: int,
              tokenize: dict) -> "FinetuneJob":
        """The job of cell ``hp`` of ``task`` from the config's ``finetune:`` section (the task's
        length, schedule and caps, the shared sequence length and evaluation cap)."""
        spec = finetune[task]
        return cls(task=task, src_lang=src_lang, tgt_lang=tgt_lang, hp=dict(hp), epochs=spec["epochs"],
                   seed=int(seed), max_seq_len=finetune["max_seq_len"], warmup_fraction=spec["warmup_fraction"],
                   schedule=spec["schedule"], epoch_size=spec["epoch_size"],
                   max_train_examples=spec["max_train_examples"], max_eval_examples=finetune["max_eval_examples"],
                   tokenize=tokenize)

    def tracked(self) -> dict:
        """The rule's ``job`` param."""
        return {name: getattr(self, name) for name in TRACKED}

    def tokenize_settings(self, lang: str, stanford_home: str | None = None) -> TokenizeSettings:
        fields = self.tokenize.get(lang) or {"moses_lang": lang}
        return TokenizeSettings(**fields, stanford_home=stanford_home)


def cell_hp(finetune: Mapping[str, Any], task: str, hp_id: str) -> dict:
    """The hyperparameters of the grid cell ``hp_id`` of ``task`` (the parser's MLP sizes travel
    with its cell)."""
    spec = finetune[task]
    hp = dict(cell_from_id(spec, hp_id))
    if task == "parsing":
        hp.update(arc_mlp=spec["arc_mlp"], label_mlp=spec["label_mlp"])
    return hp


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
