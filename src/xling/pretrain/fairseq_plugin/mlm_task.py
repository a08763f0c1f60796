"""Multilingual masked LM task of the paper (3.1, 4.3), built on fairseq's
``multilingual_masked_lm``. Differences from the stock task:

* the language id reaches the model (``net_input["src_lang_id"]``) so per-language
  embeddings/layers can be selected;
* random replacement words exclude ``<mask>``/``madeupword`` fillers, and are drawn from the
  sample's own language when ``--in-language-replacement`` (separate embeddings);
* language sampling follows sentence counts^alpha, with one-language batches;
* ``valid_<lang>`` subsets give a validation perplexity per language (list the source
  language first in ``--valid-subset`` so it selects ``checkpoint_best.pt``);
* the step: the task computes the MLM loss itself (:meth:`mlm_loss`, the same sum fairseq's
  ``masked_lm`` criterion computes) from predicted positions indexed on the host while the batch
  is collated (:mod:`xling.pretrain.batches`), so nothing in it waits for the GPU; under
  ``--autocast bf16|fp16`` on fp32 weights. The criterion stays fairseq's ``masked_lm``: its
  class name is recorded in checkpoints and checked when a run resumes, and it logs the loss.
  ``--deferred-loss-log`` logs each step's loss at the next step (:mod:`xling.pretrain.deferred`).
"""

from __future__ import annotations

import logging
import math
import os
import time

import numpy as np
import torch
from fairseq.data import (
    ConcatDataset,
    NestedDictionaryDataset,
    NumelDataset,
    NumSamplesDataset,
    PadDataset,
    PrependTokenDataset,
    RawLabelDataset,
    ResamplingDataset,
    TokenBlockDataset,
    TruncateDataset,
    data_utils,
)
from fairseq.logging import metrics
from fairseq.tasks import register_task
from fairseq.tasks.multilingual_masked_lm import MultiLingualMaskedLMTask

from xling.errors import InputError
from xling.pretrain.batches import add_host_fields, bucket_length, pad_to_shape
from xling.pretrain.deferred import Deferred
from xling.pretrain.fairseq_plugin.data import (
    HostFieldsDataset,
    LanguageBatchedDataset,
    LanguageMaskTokensDataset,
    SizeSortedDataset,
    SlicedDataset,
    TokenRemapDataset,
)
from xling.pretrain.lifecycle import last_update_taken
from xling.pretrain.names import TASK_NAME
from xling.pretrain.sampling import language_sampling_probs, resampling_ratios
from xling.pretrain.vocab import out_of_language_remap, read_language_vocab, replacement_weights

logger = logging.getLogger(__name__)

AUTOCAST = {"none": None, "bf16": torch.bfloat16, "fp16": torch.float16}


class _NothingPredicted:
    """Stands in for the criterion in ``reduce_metrics`` when a step reports no predicted position
    (the first step when losses are logged one step late)."""

    @staticmethod
    def reduce_metrics(logging_outputs) -> None:
        # weight 0: the averages stay as they are, and fairseq does not warn that no loss was logged
        metrics.log_scalar("loss", 0.0, 0, round=3)


def _unwrapped(model):
    """The fairseq model inside a DistributedDataParallel-like wrapper."""
    while hasattr(model, "module"):
        model = model.module
    return model


@register_task(TASK_NAME)
class XlingMultilingualMLMTask(MultiLingualMaskedLMTask):
    @staticmethod
    def add_args(parser):
        MultiLingualMaskedLMTask.add_args(parser)
        parser.add_argument("--languages", required=True,
                            help="comma-separated languages, in language-id order (subdirectories of data)")
        parser.add_argument("--in-language-replacement", action="store_true",
                            help="draw random replacement words from dict.<lang>.txt only")
        parser.add_argument("--language-vocab-mask", action="store_true",
                            help="restrict each language's softmax to dict.<lang>.txt")
        parser.add_argument("--one-language-batches", action="store_true",
                            help="every batch holds streams of a single language")
        parser.add_argument("--sentence-window", type=int, default=0,
                            help="with --sample-break-mode eos: cut every sentence into consecutive samples of "
                                 "at most this many tokens, <s> included, instead of truncating it (0: truncate)")
        parser.add_argument("--autocast", choices=list(AUTOCAST), default="none",
                            help="forward and loss under torch.autocast with this dtype; the weights stay fp32")
        parser.add_argument("--deferred-loss-log", action="store_true",
                            help="log each training step's loss at the next step, so that logging never "
                                 "waits for the GPU")

    def __init__(self, args, dictionary):
        super().__init__(args, dictionary)
        self.languages = [lang for lang in args.languages.split(",") if lang]
        if len(set(self.languages)) != len(self.languages) or not self.languages:
            raise ValueError(f"--languages must list distinct languages, got {args.languages!r}")
        data_path = self._data_path(1)
        self.language_vocabs = None
        if args.in_language_replacement or args.language_vocab_mask:
            self.language_vocabs = [
                read_language_vocab(os.path.join(data_path, f"dict.{lang}.txt"), dictionary)
                for lang in self.languages
            ]
        self.autocast_dtype = AUTOCAST[getattr(args, "autocast", "none") or "none"]
        self._late_loss = Deferred() if getattr(args, "deferred_loss_log", False) else None
        self._shapes_seen: set = set()
        self._max_update = getattr(args, "max_update", 0) or math.inf  # 0: fairseq's "no limit"

    def get_batch_iterator(self, *args, **kwargs):
        """fairseq's iterator with data-loader workers that end with each pass over the data.

        fairseq asks for persistent workers (its default; this legacy task has no ``cfg`` to say
        otherwise) but builds a new iterator, with its own workers, every epoch: the resampled
        training set cannot reuse one. The old iterators sit in a reference cycle (the batch
        sampler holds a method of its iterator), so their workers live on until the garbage
        collector frees them, at whatever allocation triggers it: an epoch start, a checkpoint
        save, the exit. The collector first runs the weakref finalizers that close each worker's
        index queue, so the iterator's own shutdown then sends its "stop" message into a closed
        queue and waits ``MP_STATUS_CHECK_INTERVAL`` (5 s) per worker before killing it: 4 workers
        x 6 iterators were the ~120 s exit and the ~20 s epoch-start stalls measured on an H100 (reproduced
        on CPU by bench/bench_pretrain_workers.py). Non-persistent workers are shut down by the
        iterator itself, with its queues open, as soon as its pass ends."""
        epoch_iter = super().get_batch_iterator(*args, **kwargs)
        epoch_iter.persistent_workers = False  # read when its DataLoader is built, lazily
        return epoch_iter

    # -- helpers ---------------------------------------------------------------------
    def _data_path(self, epoch: int) -> str:
        from fairseq import utils

        paths = utils.split_paths(self.args.data)
        return paths[(epoch - 1) % len(paths)]

    def lang_id(self, lang: str) -> int:
        return self.languages.index(lang)

    def _language_vocab(self, lang_id: int) -> np.ndarray:
        """A language's entries of the dictionary (read when a vocabulary mask or in-language
        replacement asks for them)."""
        assert self.language_vocabs is not None, "--language-vocab-mask or --in-language-replacement reads them"
        return self.language_vocabs[lang_id]

    def _language_dataset(self, data_path: str, lang: str, split: str, combine: bool):
        """One language's masked streams with its language id; also returns the number of
        sentences (lines) the split holds, which drives the sampling."""
        lang_id = self.lang_id(lang)
        split_path = os.path.join(data_path, lang, split)
        raw = data_utils.load_indexed_dataset(split_path, self.source_dictionary, self.args.dataset_impl,
                                              combine=combine)
        if raw is None:
            raise InputError(split_path + ".bin", None, f"a fairseq indexed dataset of {lang} {split} data")
        n_sentences = len(raw)
        dataset = raw
        if self.args.language_vocab_mask:
            dataset = TokenRemapDataset(
                dataset, out_of_language_remap(self._language_vocab(lang_id), self.source_dictionary.unk()))
        # a window cuts sentences (the config pairs it with sample_break_mode eos)
        window = int(self.args.sentence_window or 0)
        if window:
            dataset = SlicedDataset(dataset, raw.sizes, window - 1)  # one less for <s>
        elif self.args.sample_break_mode == "eos":
            # one sentence per sample, from position 1: fairseq's own "eos" blocks need numpy < 2
            dataset = TruncateDataset(dataset, self.args.tokens_per_sample - 1)  # one less for <s>
        else:
            dataset = TokenBlockDataset(
                dataset, raw.sizes, self.args.tokens_per_sample - 1,  # one less for <s>
                pad=self.source_dictionary.pad(), eos=self.source_dictionary.eos(),
                break_mode=self.args.sample_break_mode,
            )
        dataset = PrependTokenDataset(dataset, self.source_dictionary.bos())
        weights = replacement_weights(
            self.source_dictionary, self.mask_idx,
            self._language_vocab(lang_id) if self.args.in_language_replacement else None)
        src, tgt = LanguageMaskTokensDataset.apply_mask(
            dataset, self.source_dictionary,
            pad_idx=self.source_dictionary.pad(), mask_idx=self.mask_idx,
            # a different masking stream per language (the stock task reuses one seed)
            seed=self.args.seed + 1000 * lang_id,
            mask_prob=self.args.mask_prob, leave_unmasked_prob=self.args.leave_unmasked_prob,
            random_token_prob=self.args.random_token_prob,
            replacement_weights=weights,
        )
        pad = self.source_dictionary.pad()
        nested = NestedDictionaryDataset(
            {
                "net_input": {
                    "src_tokens": PadDataset(src, pad_idx=pad, left_pad=False),
                    "src_lengths": NumelDataset(src, reduce=False),
                    "src_lang_id": RawLabelDataset([lang_id] * len(src)),
                },
                "target": PadDataset(tgt, pad_idx=pad, left_pad=False),
                "nsentences": NumSamplesDataset(),
                "ntokens": NumelDataset(src, reduce=True),
                "lang_id": RawLabelDataset([lang_id] * len(src)),
            },
            sizes=[src.sizes],
        )
        return HostFieldsDataset(nested, pad, self.args.mask_prob), n_sentences

    def load_dataset(self, split, epoch=1, combine=False, **kwargs):
        data_path = self._data_path(epoch)
        # "valid_en": one language's split, for per-language validation perplexity
        base, langs = split, self.languages
        for lang in self.languages:
            if split.endswith("_" + lang):
                base, langs = split[: -len(lang) - 1], [lang]
        parts = [self._language_dataset(data_path, lang, base, combine) for lang in langs]
        datasets = [d for d, _ in parts]
        if split == self.args.train_subset and len(datasets) > 1:
            probs = language_sampling_probs([n for _, n in parts], self.args.multilang_sampling_alpha)
            ratios = resampling_ratios(probs, [len(d) for d in datasets])
            logger.info("language sampling probabilities: %s",
                        {lang: round(float(p), 4) for lang, p in zip(langs, probs)})
            datasets = [
                ResamplingDataset(d, size_ratio=r, seed=self.args.seed, epoch=epoch, replace=r >= 1.0)
                for d, r in zip(datasets, ratios)
            ]
        dataset = ConcatDataset(datasets)
        with data_utils.numpy_seed(self.args.seed + epoch):
            shuffle = np.random.permutation(len(dataset))
        dataset = SizeSortedDataset(dataset, shuffle)
        if self.args.one_language_batches and len(datasets) > 1:
            dataset = LanguageBatchedDataset(dataset, np.cumsum([len(d) for d in datasets]))
        self.datasets[split] = dataset

    # -- the step ------------------------------------------------------------------------
    def _autocast(self, sample):
        device = sample["net_input"]["src_tokens"].device.type
        return torch.autocast(device, dtype=self.autocast_dtype or torch.float32,
                              enabled=self.autocast_dtype is not None)

    def mlm_loss(self, model, sample, deferred: bool = False):
        """``(summed loss, predicted positions, logging output)`` as fairseq's ``masked_lm``
        criterion gives them, from the host-built index of the predicted positions. ``deferred``:
        the logging output carries the previous call's loss and count instead of this one's."""
        if "masked_index" not in sample:  # a batch collated elsewhere: index it now (a sync on a GPU)
            add_host_fields(sample, self.source_dictionary.pad(), self.args.mask_prob)
        loss, _ = model(**sample["net_input"], masked_index=sample["masked_index"],
                        masked_target=sample["masked_target"])
        n = sample["n_predicted"]
        log = {"ntokens": sample["ntokens"], "nsentences": sample["nsentences"]}
        if deferred and self._late_loss is not None:
            previous = self._late_loss.swap(loss, n)
            log.update(loss=previous[0] if previous else 0.0, sample_size=previous[1] if previous else 0)
        else:
            log.update(loss=loss.detach(), sample_size=n)
        return loss, n, log

    def train_step(self, sample, model, criterion, optimizer, update_num, ignore_grad=False):
        model.train()
        model.set_num_updates(update_num)
        if update_num + 1 >= self._max_update:
            last_update_taken()  # the rank's exit may now skip finalisation (xling.pretrain.lifecycle)
        if getattr(_unwrapped(model).encoder, "compiled", False):
            sample = self._static_shape(sample, _unwrapped(model).encoder.max_positions())
        timed = self._first_compiled_step(model, sample)
        if timed:
            _sync(sample)
            start = time.perf_counter()
        with torch.autograd.profiler.record_function("forward"), self._autocast(sample):
            loss, sample_size, logging_output = self.mlm_loss(
                model, sample, deferred=self._late_loss is not None and not ignore_grad)
        if ignore_grad:
            loss *= 0
        with torch.autograd.profiler.record_function("backward"):
            optimizer.backward(loss)
        if timed:
            _sync(sample)
            logger.info("first step of language %s, streams %s, %d prediction slots, padded=%s: %.1f s "
                        "(torch.compile of the encoder included)", *timed, time.perf_counter() - start)
        return loss, sample_size, logging_output

    def valid_step(self, sample, model, criterion):
        model.eval()
        with torch.no_grad(), self._autocast(sample):
            return self.mlm_loss(model, sample)

    def _static_shape(self, sample, max_length: int):
        """The batch padded to the full number of streams and a bucketed length, for the compiled
        loss: an epoch's short last batch or a shorter stream takes no graph of its own (nor makes
        the graph dynamic); the loss and gradients are unchanged (:func:`pad_to_shape`)."""
        if "masked_index" not in sample:  # a batch collated elsewhere: index it now (a sync on a GPU)
            add_host_fields(sample, self.source_dictionary.pad(), self.args.mask_prob)
        tokens = sample["net_input"]["src_tokens"]
        streams = max(int(self.args.batch_size or 0), tokens.size(0))
        length = bucket_length(tokens.size(1), int(max_length))
        d = self.source_dictionary
        return pad_to_shape(sample, streams, length, d.bos(), d.pad(), self.args.mask_prob)

    def _first_compiled_step(self, model, sample) -> tuple | None:
        """The batch's shape key when the encoder is compiled and has not seen it (its step
        compiles a graph: timed apart, once), else None."""
        encoder = _unwrapped(model).encoder
        if not getattr(encoder, "compiled", False):
            return None
        net = sample["net_input"]
        slots = int(sample["masked_index"].numel()) if "masked_index" in sample else -1
        lang = net.get("src_lang") if encoder.language_specific else None  # one graph for all languages
        key = (lang, tuple(net["src_tokens"].shape), slots, net.get("padded"))
        if key in self._shapes_seen:
            return None
        self._shapes_seen.add(key)
        return key

    def reduce_metrics(self, logging_outputs, criterion):
        if not sum(log.get("sample_size", 0) for log in logging_outputs):
            criterion = _NothingPredicted()
        super().reduce_metrics(logging_outputs, criterion)


def _sync(sample) -> None:
    if sample["net_input"]["src_tokens"].is_cuda:
        torch.cuda.synchronize()
