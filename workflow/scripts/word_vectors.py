"""Snakemake script of rule word_vectors (Figure 4): one monolingual model's whole-word embedding
rows and its per-layer contextual word vectors (xling.analysis.run.run_word_vectors).

input:  <lang>_checkpoint/_dictionary/_bpe = the monolingual model; text = its BPE training text
params: lang, sentences, max_words, max_seq_len, batch_size
output: embedding, embedding_words, contextual, contextual_words
"""

from pathlib import Path

from _setup import log_line, model_spec, run_logged, torch_device

from xling.analysis.run import run_word_vectors


def main(sm) -> dict:
    p = sm.params
    out = {k: Path(sm.output[k]) for k in ("embedding", "embedding_words", "contextual", "contextual_words")}
    return run_word_vectors(model_spec(sm, p.lang, p.lang), Path(sm.input.text), int(p.sentences),
                            int(p.max_words), out, max_seq_len=int(p.max_seq_len), batch_size=int(p.batch_size),
                            device=torch_device(sm), log=log_line)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
