"""Zero-shot cross-lingual fine-tuning (paper 3.2): XNLI, NER and UD parsing on English, tested on
the pair's other language."""

from xling.finetune.train import FinetuneJob, TaskFiles, finetune, run_finetune

__all__ = ["FinetuneJob", "TaskFiles", "finetune", "run_finetune"]
