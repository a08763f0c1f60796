"""Evaluation metrics of the zero-shot tasks: pure functions, scored as the paper reports them.

- accuracy (XNLI), span-level F1 with the paper's BIO repair (NER), LAS/UAS as CoNLL 2018 (parsing).
"""

from xling.metrics.classification import accuracy
from xling.metrics.ner import repair_bio, span_f1, spans
from xling.metrics.parsing import AttachmentScores, attachment_scores, read_conllu_words, score_conllu_files

__all__ = [
    "accuracy",
    "repair_bio",
    "span_f1",
    "spans",
    "AttachmentScores",
    "attachment_scores",
    "read_conllu_words",
    "score_conllu_files",
]
