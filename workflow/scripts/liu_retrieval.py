"""Snakemake script of rules liu_retrieval and liu_retrieval_mbert: MRR from the source language's
words to each other language's for one model and data size, or for m-BERT
(xling.liu.retrieval_job.run_liu_retrieval).

input:  checkpoint + dictionary (an MLM), vectors (word2vec, GloVe) or model = m-BERT's files;
        text_<lang> = BPE training texts (m-BERT: tokenised sample lines); dict_<lang> = MUSE
        dictionaries source -> lang
params: kind (mlm | static | mbert), src, langs (retrieved), meta (model, size), sentences,
        max_words, max_seq_len, batch_size
output: result = JSON
"""

from pathlib import Path

from _setup import log_line, run_logged, torch_device

from xling.liu.retrieval_job import run_liu_retrieval


def main(sm) -> dict:
    p = sm.params
    if p.kind == "mlm":
        model = {"kind": "mlm", "checkpoint": sm.input.checkpoint, "dictionary": sm.input.dictionary}
    elif p.kind == "mbert":
        model = {"kind": "mbert", "files": {Path(f).name: Path(f) for f in sm.input.model}}
    else:
        model = {"kind": "static", "vectors": sm.input.vectors}
    texts = {lang: Path(sm.input[f"text_{lang}"]) for lang in [p.src, *p.langs]}
    dictionaries = {lang: Path(sm.input[f"dict_{lang}"]) for lang in p.langs}
    res = run_liu_retrieval(model, texts, dictionaries, p.src, int(p.sentences), int(p.max_words),
                            Path(sm.output.result), dict(p.meta), max_seq_len=int(p.max_seq_len),
                            batch_size=int(p.batch_size), device=torch_device(sm), log=log_line)
    return {lang: [round(m, 4) for m in v["mrr"]] for lang, v in res["languages"].items()}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
