"""fairseq model ``xling_mlm``: the encoder of :mod:`xling.pretrain.encoder` (paper 3.1, 4.3)
as a fairseq encoder model, with its command-line options. The batch language comes from the
task as ``src_lang`` (known on the host) or ``src_lang_id``.
"""

from __future__ import annotations

import logging

import numpy as np
import torch
from fairseq.models import (
    FairseqEncoder,
    FairseqEncoderModel,
    register_model,
    register_model_architecture,
)

from xling.pretrain.compiling import MIN_STEP_FLOPS, SETTINGS, compile_unavailable, compile_wanted
from xling.pretrain.encoder import MODEL_NAME, EncoderCore, paper_model_args
from xling.pretrain.schedule import train_flops_per_token

logger = logging.getLogger(__name__)


class XlingMLMEncoder(EncoderCore, FairseqEncoder):
    def __init__(self, args, dictionary, n_languages: int, vocab_masks: torch.Tensor | None):
        FairseqEncoder.__init__(self, dictionary)
        self._build(args, len(dictionary), dictionary.pad(), n_languages, vocab_masks)


def step_flops(args, vocab: int) -> float | None:
    """Model FLOPs of one training step of a process (its ``--batch-size`` streams of
    ``--tokens-per-sample``), or None where the command does not say its batch."""
    streams = getattr(args, "batch_size", None) or getattr(args, "max_sentences", None)
    length = getattr(args, "tokens_per_sample", None) or args.max_positions
    if not streams or not length:
        return None
    per_token = train_flops_per_token(args.encoder_layers, args.encoder_embed_dim, args.encoder_ffn_embed_dim,
                                      int(length), vocab, float(args.mask_prob))
    return per_token * int(streams) * int(length)


@register_model(MODEL_NAME)
class XlingMLMModel(FairseqEncoderModel):
    @staticmethod
    def add_args(parser):
        parser.add_argument("--encoder-layers", type=int)
        parser.add_argument("--encoder-embed-dim", type=int)
        parser.add_argument("--encoder-ffn-embed-dim", type=int)
        parser.add_argument("--encoder-attention-heads", type=int)
        parser.add_argument("--activation-fn", choices=["gelu", "relu"])
        parser.add_argument("--dropout", type=float)
        parser.add_argument("--attention-dropout", type=float)
        parser.add_argument("--max-positions", type=int)
        parser.add_argument("--separate-embeddings", action="store_true",
                            help="token + positional embeddings (and tied softmax) per language")
        parser.add_argument("--shared-positions", action="store_true",
                            help="with --separate-embeddings: one positional embedding for all languages")
        parser.add_argument("--separate-layers", type=int, metavar="K",
                            help="Transformer layers 1..K per language")
        # XLM's model where it differs from BERT's (xling.pretrain.encoder); absent: BERT's
        parser.add_argument("--language-embeddings", action="store_true",
                            help="a learnt embedding per language added to every token (XLM's --use_lang_emb)")
        parser.add_argument("--mlm-head", choices=["bert", "xlm"],
                            help="bert: dense + activation + LayerNorm before the tied softmax; xlm: the tied softmax")
        parser.add_argument("--layer-norm-eps", type=float)
        parser.add_argument("--activation-dropout", type=float, help="dropout after the FFN's activation")
        parser.add_argument("--param-init", choices=["bert", "xlm", "xlm_768", "bert_xavier_attention"],
                            help="bert: fairseq's N(0, 0.02); xlm: XLM's; xlm_768: XLM's with the embeddings at "
                                 "768^-1/2 whatever the width; bert_xavier_attention: N(0, 0.02) "
                                 "but torch's xavier q/k/v (this pipeline's models before it followed fairseq)")
        parser.add_argument("--vocab-multiple", type=int, metavar="N",
                            help="embedding and softmax rows padded to a multiple of N (default 1: none)")
        parser.add_argument("--compile-encoder", choices=SETTINGS, default="off",
                            help="torch.compile the encoder's training loss (auto: on a GPU)")

    @classmethod
    def build_model(cls, args, task):
        base_architecture(args)
        if args.max_positions is None:
            args.max_positions = args.tokens_per_sample
        vocab_masks = None
        if getattr(args, "language_vocab_mask", False):
            vocab_masks = torch.from_numpy(np.stack(task.language_vocabs))
        encoder = XlingMLMEncoder(args, task.source_dictionary, len(task.languages), vocab_masks)
        device = "cuda" if torch.cuda.is_available() and not getattr(args, "cpu", False) else "cpu"
        setting = getattr(args, "compile_encoder", None) or "off"
        flops = step_flops(args, len(task.source_dictionary))
        if compile_wanted(setting, device, flops):
            why_not = compile_unavailable(device)
            if why_not:
                logger.warning("torch.compile unavailable (%s): the encoder runs eagerly", why_not)
            else:
                encoder.compile_loss()
                logger.info("the encoder's training loss runs through torch.compile (compiled at its first step)")
        elif setting == "auto" and device == "cuda":
            logger.info("a step of %.2g model FLOPs, below the %.0e that pay for torch.compile: the encoder "
                        "runs eagerly (--compile-encoder on compiles it)", flops, MIN_STEP_FLOPS)
        return cls(encoder)

    def forward(self, src_tokens, src_lengths=None, src_lang_id=None, masked_tokens=None,
                features_only=False, return_all_hiddens=False, src_lang=None, padded=None,
                masked_index=None, masked_target=None, **kwargs):
        return self.encoder(src_tokens, src_lengths=src_lengths, src_lang_id=src_lang_id,
                            masked_tokens=masked_tokens, features_only=features_only,
                            return_all_hiddens=return_all_hiddens, src_lang=src_lang, padded=padded,
                            masked_index=masked_index, masked_target=masked_target)

    def max_positions(self):
        return self.encoder.max_positions()


# the model's store_true options
SWITCHES = ("separate_embeddings", "shared_positions", "language_embeddings")


@register_model_architecture(MODEL_NAME, MODEL_NAME)
def base_architecture(args):
    """The paper's model (3.1, config/config.yaml's ``model:``): what the command line leaves unset
    takes its value; a missing ``--activation-dropout`` is the config's null, the layers' dropout.
    fairseq leaves a model option the command line omits out of ``args`` (argparse.SUPPRESS), so
    an absent switch is off, whatever the config says."""
    paper = vars(paper_model_args())
    for key, value in paper.items():
        if key in SWITCHES:
            setattr(args, key, bool(getattr(args, key, False)))
        elif getattr(args, key, None) is None:
            dropout = getattr(args, "dropout", None)
            setattr(args, key, dropout if key == "activation_dropout" and dropout is not None else value)
