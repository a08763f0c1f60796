"""Liu et al. 2020's static baselines: word2vec and GloVe trained on the same tokenised text as the MLMs."""

from xling.static.cooccurrence import build_vocab, cooccurrence
from xling.static.glove import GloveFit, fit_glove, glove_loss, glove_weight, train_glove
from xling.static.word2vec import train_word2vec

__all__ = [
    "GloveFit",
    "build_vocab",
    "cooccurrence",
    "fit_glove",
    "glove_loss",
    "glove_weight",
    "train_glove",
    "train_word2vec",
]
