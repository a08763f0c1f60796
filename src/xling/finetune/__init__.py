"""Zero-shot cross-lingual fine-tuning (paper 3.2): XNLI, NER and UD parsing on English, tested on
the pair's other language; one grid cell per job (``run_finetune``) or the cells of a grid that
share batch size and seed in one job (``run_grid``)."""

from xling.finetune.grid import GridSettings, finetune_grid, run_grid
from xling.finetune.train import FinetuneJob, TaskFiles, finetune, run_finetune

__all__ = ["FinetuneJob", "GridSettings", "TaskFiles", "finetune", "finetune_grid", "run_finetune", "run_grid"]
