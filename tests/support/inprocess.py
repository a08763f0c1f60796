"""Build fairseq's task/model/criterion/trainer from our ``fairseq-train`` command inside
this process (tests and the benchmark time and inspect single steps). Test support, not part of
the shipped package."""

from __future__ import annotations

from fairseq import options, tasks
from fairseq.dataclass.utils import convert_namespace_to_omegaconf


def parse_command(cmd: list[str]):
    """fairseq config (omegaconf) of a ``fairseq-train`` argv as built by
    :func:`xling.pretrain.command.fairseq_train_command`."""
    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, input_args=list(cmd[1:]))
    return convert_namespace_to_omegaconf(args)


def build(cmd: list[str]):
    """(cfg, task, model, criterion) for the command's setup, datasets not loaded."""
    cfg = parse_command(cmd)
    task = tasks.setup_task(cfg.task)
    model = task.build_model(cfg.model)
    criterion = task.build_criterion(cfg.criterion)
    return cfg, task, model, criterion


def build_trainer(cmd: list[str]):
    """(cfg, task, trainer) with the train split loaded, as fairseq-train sets them up."""
    from fairseq.trainer import Trainer

    cfg, task, model, criterion = build(cmd)
    task.load_dataset(cfg.dataset.train_subset, epoch=1)
    trainer = Trainer(cfg, task, model, criterion)
    return cfg, task, trainer
