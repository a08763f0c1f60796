"""Multilingual masked LM task of the paper (3.1, 4.3), built on fairseq's
``multilingual_masked_lm``. Differences from the stock task:

* the language id reaches the model (``net_input["src_lang_id"]``) so per-language
  embeddings/layers can be selected;
* random replacement words exclude ``<mask>``/``madeupword`` fillers, and are drawn from the
  sample's own language when ``--in-language-replacement`` (separate embeddings);
* language sampling follows sentence counts^alpha, with one-language batches;
* ``valid_<lang>`` subsets give a validation perplexity per language (list the source
  language first in ``--valid-subset`` so it selects ``checkpoint_best.pt``).
"""

from __future__ import annotations

import logging
import os

import numpy as np
from fairseq.data import (
    ConcatDataset,
    NestedDictionaryDataset,
    NumelDataset,
    NumSamplesDataset,
    PadDataset,
    PrependTokenDataset,
    RawLabelDataset,
    ResamplingDataset,
    SortDataset,
    TokenBlockDataset,
    TruncateDataset,
    data_utils,
)
from fairseq.tasks import register_task
from fairseq.tasks.multilingual_masked_lm import MultiLingualMaskedLMTask

from xling.errors import InputError
from xling.pretrain.fairseq_plugin.data import (
    LanguageBatchedDataset,
    LanguageMaskTokensDataset,
    SlicedDataset,
    TokenRemapDataset,
)
from xling.pretrain.names import TASK_NAME
from xling.pretrain.sampling import language_sampling_probs, resampling_ratios
from xling.pretrain.vocab import out_of_language_remap, read_language_vocab, replacement_weights

logger = logging.getLogger(__name__)


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
        x 6 iterators were the ~120 s exit and the ~20 s epoch-start stalls of issue 29 (reproduced
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
                dataset, out_of_language_remap(self.language_vocabs[lang_id], self.source_dictionary.unk()))
        # a window cuts sentences (the config pairs it with sample_break_mode eos)
        window = int(getattr(self.args, "sentence_window", 0) or 0)
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
            self.language_vocabs[lang_id] if self.args.in_language_replacement else None)
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
        return nested, n_sentences

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
        dataset = SortDataset(dataset, sort_order=[shuffle, dataset.sizes])
        if self.args.one_language_batches and len(datasets) > 1:
            dataset = LanguageBatchedDataset(dataset, np.cumsum([len(d) for d in datasets]))
        self.datasets[split] = dataset
