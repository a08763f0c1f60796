"""A pretrained model as one type (:class:`PretrainedModel`): the pipeline's own checkpoints and
``transformers`` model directories, loaded as one encoder interface (:class:`Encoder`: every
layer's hidden states, its language-specific parameters) and reading raw text with their own
tokenisation.

* ``spec``: :class:`PretrainedModel` (a model's files, its kind), :class:`ModelSpec` (a model read
  as one language);
* ``encoder``: the :class:`Encoder` protocol, the freezing of language-specific parts;
* ``text``: words to input ids (:class:`WordEncoder`), the pretraining corpus's tokenisers;
* ``checkpoint``: the pipeline's fairseq checkpoints, read without fairseq;
* ``huggingface``: a ``transformers`` directory as an encoder with its tokenizer (planning checks
  a directory's files without it: ``xling.config.external``).
"""

from xling.model.spec import KINDS, TRANSFORMERS, XLING, ModelSpec, PretrainedModel

__all__ = ["KINDS", "TRANSFORMERS", "XLING", "ModelSpec", "PretrainedModel"]
