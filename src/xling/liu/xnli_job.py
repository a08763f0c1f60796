"""Liu et al.'s XNLI experiments for one of the study's MLMs: zero-shot transfer from the source
language to every other language (Figures 2, 4, 6) and the mean difference shift at test time (4.3,
Table 4), from one fine-tuning.

- Fine-tuning: the source language's XNLI training set, one cell of hyperparameters and
  ``finetune.xnli``'s epochs and schedule (the fine-tuning loop, ``xling.finetune.loop.train_cells``,
  best epoch on the source dev set). The embeddings and the lower ``freeze`` layers stay fixed, as the paper's Table 4
  fine-tunes "the last 6 layers" of m-BERT with "the first six layers" fixed.
- Transfer: accuracy on each language's dev and test sets with nothing added (alpha = 0).
- MDS: for a language x, ``alpha * D(x -> source)`` at layer ``freeze`` (the output of the last
  fixed layer, where the fine-tuned model and the pretrained one agree, so the means of the
  pretrained model apply); alpha is the one with the best dev accuracy (ties: the smallest), and
  test accuracy is reported at it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

import torch

from xling.analysis.language_shift import blocks, mean_difference, shift_at
from xling.finetune.examples import TaskData, load_split
from xling.finetune.job import FinetuneJob
from xling.finetune.loop import ModuleCell, evaluate, set_seed, train_cells
from xling.finetune.tasks import TASKS
from xling.io import write_result
from xling.liu.translation_job import piece_means
from xling.model import XLING, PretrainedModel
from xling.model.encoder import Encoder, max_positions

Log = Callable[[str], None]


def freeze_below(encoder, freeze: int, lang: str) -> list[torch.nn.Parameter]:
    """Fix every parameter but those of ``lang``'s blocks above the first ``freeze`` (embeddings
    included in the fixed part); return the trainable ones, each once."""
    stack = blocks(encoder, lang)
    if not 0 <= freeze < len(stack):
        raise ValueError(f"freeze_layers must be in 0..{len(stack) - 1} for a {len(stack)}-layer model, got {freeze}")
    for p in encoder.parameters():
        p.requires_grad_(False)
    trainable, seen = [], set()
    for block in stack[freeze:]:
        for p in block.parameters():
            if id(p) not in seen:
                seen.add(id(p))
                p.requires_grad_(True)
                trainable.append(p)
    return trainable


def choose_alpha(dev: Mapping[float, float]) -> float:
    """The alpha with the best dev accuracy; among equals the smallest (no shift wins a tie)."""
    best = max(dev.values())
    return min(a for a, acc in dev.items() if acc == best)


@dataclass(frozen=True)
class XnliModel:
    """What the XNLI job needs of a pretrained model, whatever its kind (ours, m-BERT):
    ``load()`` a fresh copy (an ``xling.model.encoder.Encoder`` that ``language_shift`` reads),
    ``words_to_subwords(lang)`` its word splitter, ``text_lines(lang)`` the lines of pieces whose
    states make the language's mean."""

    load: Callable[[], Encoder]
    words_to_subwords: Callable[[str], Callable]
    text_lines: Callable[[str], list[list[str]]]


def xnli_model(model: PretrainedModel, languages: Sequence[str], texts: Mapping[str, Path], n_sentences: int
               ) -> XnliModel:
    """``model`` for the XNLI job: the means over the first ``n_sentences`` lines of each language's
    ``texts``, the BPE training text of one of the study's MLMs (its pieces), or for a
    ``transformers`` model the same tokenised lines cut by its tokenizer."""
    from xling.io import first_lines

    if model.kind == XLING:
        def pieces(line: str) -> list[str]:
            return line.split()
    else:
        split = model.subwords(languages[0])

        def pieces(line: str) -> list[str]:
            return [p for word in split(line.split()) for p in word]
    return XnliModel(load=lambda: model.load("cpu", languages), words_to_subwords=model.subwords,
                     text_lines=lambda lang: [pieces(line) for line in first_lines(Path(texts[lang]), n_sentences)])


def run_liu_xnli(job: FinetuneJob, checkpoint: Path, dictionary: Path, bpe: Path, train: Path,
                 dev: Mapping[str, Path], test: Mapping[str, Path], texts: Mapping[str, Path], freeze: int,
                 alphas: Sequence[float], n_sentences: int, out_json: Path, meta: dict, batch_size: int = 64,
                 device: str = "cpu", log: Log | None = None, stanford_home: str | None = None,
                 all_layers: bool = False) -> dict:
    """``dev``/``test``: language -> XNLI file (the source language's dev selects the epoch);
    ``texts``: language -> BPE training text (its mean); ``all_layers``: also fine-tune the whole
    model (``all_layers_dev``/``all_layers_test`` per language)."""
    model = xnli_model(PretrainedModel.xling(checkpoint, dictionary, bpe), list(dev), texts, n_sentences)
    return run_xnli(job, model, train, dev, test, freeze, alphas, out_json, {**meta, "sentences": n_sentences},
                    batch_size=batch_size, device=device, log=log, stanford_home=stanford_home, all_layers=all_layers)


def run_xnli(job: FinetuneJob, model: XnliModel, train: Path, dev: Mapping[str, Path], test: Mapping[str, Path],
             freeze: int, alphas: Sequence[float], out_json: Path, meta: dict, batch_size: int = 64,
             device: str = "cpu", log: Log | None = None, stanford_home: str | None = None,
             all_layers: bool = False) -> dict:
    """The fine-tuning, the scores with and without the shift, and optionally the whole model
    fine-tuned (see the module's docstring) for any ``XnliModel``."""
    log = log or (lambda _m: None)
    set_seed(job.seed)  # the head's initialisation and dropout, as in every fine-tuning job
    src = job.src_lang
    encoder = model.load().to(device)
    d = encoder.dictionary
    targets = [lang for lang in dev if lang != src]
    max_len = min(job.max_seq_len, max_positions(encoder) or job.max_seq_len)
    # means before fine-tuning: up to layer ``freeze`` the fine-tuned model computes the same states
    means = {lang: piece_means(encoder, d, model.text_lines(lang), lang, max_len, batch_size, device, log)
             for lang in [src, *targets]}
    task = TASKS["xnli"](job.hp)

    def items(name: str, path: Path, lang: str):
        return load_split(job, task, name, path, lang, d, model.words_to_subwords(lang), stanford_home)

    data_items, truncated = {}, {}
    data_items["train"], truncated["train"] = items("train", train, src)
    data_items["en_dev"], truncated["en_dev"] = items("dev", dev[src], src)
    trainable = freeze_below(encoder, freeze, src)
    head = task.make_head(encoder.dim).to(device)
    run = train_cells([job], task, ModuleCell(task, encoder, head, trainable, device), TaskData(data_items, truncated),
                      log)[0]
    languages = {}
    for lang in [src, *targets]:
        dev_items, _ = items("dev", dev[lang], lang)
        test_items, _ = items("test", test[lang], lang)
        shift = mean_difference(means[lang], means[src])[freeze]  # D(lang -> src) at the shifted layer
        scores: dict[str, dict[float, float]] = {"dev": {}, "test": {}}
        for alpha in ([0.0] if lang == src else sorted({0.0, *map(float, alphas)})):
            with shift_at(encoder, freeze, alpha * shift, lang=lang):
                scores["dev"][alpha] = evaluate(task, encoder, head, dev_items, lang, device)["accuracy"]
        chosen = choose_alpha(scores["dev"])
        for alpha in sorted({0.0, chosen}):
            with shift_at(encoder, freeze, alpha * shift, lang=lang):
                scores["test"][alpha] = evaluate(task, encoder, head, test_items, lang, device)["accuracy"]
        languages[lang] = {"dev": scores["dev"][0.0], "test": scores["test"][0.0], "alpha": chosen,
                           "mds_dev": scores["dev"][chosen], "mds_test": scores["test"][chosen],
                           "dev_by_alpha": {f"{a:g}": v for a, v in scores["dev"].items()},
                           "examples": {"dev": len(dev_items), "test": len(test_items)}}
        log(f"{lang}: test {languages[lang]['test']:.2f}, with the shift (alpha {chosen:g}) "
            f"{languages[lang]['mds_test']:.2f}")
    extra = {}
    if all_layers:
        set_seed(job.seed)
        whole = model.load().to(device)
        for p in whole.parameters():
            p.requires_grad_(True)
        head = task.make_head(whole.dim).to(device)
        run_all = train_cells([job], task, ModuleCell(task, whole, head, list(whole.parameters()), device),
                              TaskData(data_items, truncated), log)[0]
        for lang in [src, *targets]:
            for split, paths in (("dev", dev), ("test", test)):
                split_items, _ = items(split, paths[lang], lang)
                scored = evaluate(task, whole, head, split_items, lang, device)
                languages[lang][f"all_layers_{split}"] = scored["accuracy"]
            log(f"{lang}: all layers fine-tuned, test {languages[lang]['all_layers_test']:.2f}")
        extra = {"all_layers": {"best_epoch": run_all["best_epoch"], "history": run_all["history"]}}
    return write_result(out_json, {
        **meta, "layers": encoder.num_layers, "freeze_layers": freeze, "hp": job.hp.tracked(), "epochs": job.epochs,
        "best_epoch": run["best_epoch"], "history": run["history"],
        "examples": {"train": len(data_items["train"])}, "truncated": truncated, "languages": languages, **extra})
