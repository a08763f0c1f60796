"""Snakemake script of rule analysis_words (Figure 4): MUSE word translation between two
monolingual models' word vectors, and fastText's, after Procrustes alignment
(xling.analysis.run.run_word_alignment).

input:  <lang>_<embedding|embedding_words|contextual|contextual_words> of both languages (rule
        word_vectors); fasttext_<lang> = wiki.<lang>.vec; muse_train, muse_test
params: pair (src-tgt), fasttext_rows, norm_steps, csls_k
output: result = the pair's JSON (P@1 both ways: embeddings, every layer, fastText)
"""

from pathlib import Path

from _setup import log_line, run_logged

from xling.analysis.run import run_word_alignment

KINDS = ("embedding", "embedding_words", "contextual", "contextual_words")


def main(sm) -> dict:
    p = sm.params
    langs = p.pair.split("-")
    res = run_word_alignment(
        p.pair, {lang: {k: Path(sm.input[f"{lang}_{k}"]) for k in KINDS} for lang in langs},
        {lang: Path(sm.input[f"fasttext_{lang}"]) for lang in langs},
        (Path(sm.input.muse_train), Path(sm.input.muse_test)), int(p.fasttext_rows), int(p.norm_steps),
        int(p.csls_k), Path(sm.output.result), log=log_line)
    return {"p_at_1_embedding": res["embedding"]["mlm"]["forward"]["p_at_1"]}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
