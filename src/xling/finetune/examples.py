"""A fine-tuning job's task files, read and encoded for one model: English train and dev, the
target's dev and test, and any extra test sets (of the target, and of the source language), each
as the task's examples (:class:`xling.finetune.tasks.Item`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping

from xling.finetune.job import FinetuneJob
from xling.model.text import WordEncoder, WordsToSubwords, line_and_word_tokenizers

if TYPE_CHECKING:
    from xling.finetune.tasks import Item, TaskAdapter


# the kinds of extra test set, by the language they are read in: result.json's keys for their scores
EXTRA_SIDES = ("tgt_extra", "src_extra")


@dataclass(frozen=True)
class TaskFiles:
    """The task files of one job: English train and dev, the target's dev (optional) and test; extra
    test sets scored as the target's test is, by name: the target's (``tgt_extra``) and the source
    language's (``src_extra``)."""

    train: Path
    en_dev: Path
    tgt_test: Path
    tgt_dev: Path | None = None
    tgt_extra: Mapping[str, Path] = field(default_factory=dict)
    src_extra: Mapping[str, Path] = field(default_factory=dict)


def extra_split(side: str, name: str) -> str:
    """The split name of an extra test set in :class:`TaskData` and a record's ``scores``."""
    return f"{side}.{name}"


@dataclass
class TaskData:
    # train, en_dev, tgt_dev (when given), tgt_test, then the extra test sets (extra_split names)
    items: dict[str, list[Item]]
    truncated: dict[str, int]

    def scored(self, job: FinetuneJob) -> list[tuple[str, str]]:
        """(split, language) of every set scored after training but English dev, in load order."""
        source = extra_split("src_extra", "")
        return [(name, job.src_lang if name.startswith(source) else job.tgt_lang) for name in self.items
                if name not in ("train", "en_dev")]


def load_split(job: FinetuneJob, task: TaskAdapter, name: str, path: Path, lang: str, dictionary,
               words_to_subwords: WordsToSubwords, stanford_home: str | None = None) -> tuple[list[Item], int]:
    """One task file encoded for an encoder with ``dictionary``: ``(items, truncated)``. ``name``
    "train" also fits the task's labels; the others are capped at ``job.max_eval_examples``."""
    if not Path(path).exists():
        raise FileNotFoundError(f"{path}: task file missing")
    raw = task.read(Path(path))
    if name == "train":
        raw = raw[: job.max_train_examples] if job.max_train_examples else raw
        task.fit_labels(raw)
    elif job.max_eval_examples:
        raw = raw[: job.max_eval_examples]
    lines, word = line_and_word_tokenizers(job.tokenize_settings(lang, stanford_home))
    enc = WordEncoder(dictionary, words_to_subwords, job.max_seq_len, split_word=word)
    return task.tensorize(raw, enc, lines)


def load_task_data(job: FinetuneJob, task: TaskAdapter, dictionary, words_to_subwords: Callable[[str], WordsToSubwords],
                   files: TaskFiles, stanford_home: str | None = None) -> TaskData:
    """Read and encode the job's task files. Raw sentences (XNLI) are tokenised like the
    pretraining corpus; given words (NER, UD) are re-tokenised one at a time with the same
    settings, staying one word each."""
    splits: list[tuple[str, str, Path | None]] = [
        (name, lang, getattr(files, name)) for name, lang in (("train", job.src_lang), ("en_dev", job.src_lang),
                                                              ("tgt_dev", job.tgt_lang), ("tgt_test", job.tgt_lang))]
    for side, lang in zip(EXTRA_SIDES, (job.tgt_lang, job.src_lang)):
        splits += [(extra_split(side, name), lang, path) for name, path in getattr(files, side).items()]
    items, truncated = {}, {}
    for name, lang, path in splits:
        if path is None:
            continue
        items[name], truncated[name] = load_split(job, task, name, path, lang, dictionary, words_to_subwords(lang),
                                                  stanford_home)
    return TaskData(items, truncated)
