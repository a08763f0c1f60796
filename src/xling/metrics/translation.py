"""Scores of unsupervised token translation (Liu et al. 2020, Section 4.2.2, Tables 2 and 3):
convert rate and BLEU-1.

Tokens are whatever the model reads and predicts (m-BERT's WordPiece pieces in the paper). A
sentence is given either as a sequence of tokens or as one string of tokens joined by spaces;
a string is split on whitespace, never iterated character by character.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from sacrebleu.metrics import BLEU


def _tokens(sentence: str | Sequence[str]) -> Sequence[str]:
    return sentence.split() if isinstance(sentence, str) else sentence


def vocabulary_of(texts_tokenised: Iterable[str | Sequence[str]]) -> set[str]:
    """V_lang: the set of tokens of a language's text (Table 3's |V_lang|)."""
    return {tok for sentence in texts_tokenised for tok in _tokens(sentence)}


def convert_rate(outputs: Iterable[str | Sequence[str]], src_vocab: set[str], tgt_vocab: set[str]) -> float:
    """Share of the output tokens that changed language (0-1), over all tokens of all sentences:

        #(y in V_t - V_s) / (#y - #(y in V_s & V_t))

    Tokens of both vocabularies say nothing about the language, so they are left out of both
    terms; tokens of neither count in the denominator only (not converted). An output made only
    of shared tokens (or empty) leaves the rate undefined: ValueError."""
    converted = total = shared = 0
    for sentence in outputs:
        for tok in _tokens(sentence):
            total += 1
            in_src, in_tgt = tok in src_vocab, tok in tgt_vocab
            shared += in_src and in_tgt
            converted += in_tgt and not in_src
    if total == shared:
        raise ValueError(f"convert_rate: undefined, all {total} output tokens are in both vocabularies")
    return converted / (total - shared)


def bleu1(hypotheses: Sequence[str | Sequence[str]], references: Sequence[str | Sequence[str]]) -> float:
    """Corpus BLEU with unigrams only (0-100, as Table 2), one reference per hypothesis.

    Clipped unigram precision over the corpus times the brevity penalty exp(1 - ref/hyp) when the
    hypotheses are shorter. sacrebleu computes it with ``tokenize="none"``: both sides are already
    tokenised (the model's pieces joined by spaces, the references tokenised the same way by the
    caller), and sacrebleu's default 13a tokeniser would split punctuation off the pieces again;
    case is kept; no smoothing (which cannot matter with one n-gram order)."""
    if len(hypotheses) != len(references):
        raise ValueError(f"bleu1: {len(hypotheses)} hypotheses but {len(references)} references")
    if not hypotheses:
        raise ValueError("bleu1 of an empty corpus is undefined")

    def text(sentence: str | Sequence[str]) -> str:
        return " ".join(_tokens(sentence))

    # force: the text is tokenised on purpose; sacrebleu would warn on every call that it looks so
    metric = BLEU(max_ngram_order=1, tokenize="none", lowercase=False, smooth_method="none", force=True)
    return float(metric.corpus_score([text(h) for h in hypotheses], [[text(r) for r in references]]).score)
