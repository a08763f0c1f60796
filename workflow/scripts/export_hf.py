"""Snakemake script of rule export_hf: one pretrained model as a transformers checkpoint with its
tokenizer, of raw text where the model has one BPE (xling.export.export_model).

input:  checkpoint, dictionary (dict.txt of pretraining), bpe (bpe.json)
params: tokenize (language -> tokeniser settings of its corpus), info (recorded with the export)
output: the export directory
"""

from pathlib import Path

from _setup import run_logged

from xling.export import export_model


def main(sm) -> dict:
    i = sm.input
    record = export_model(Path(i.checkpoint), Path(i.dictionary), Path(i.bpe), Path(sm.output[0]),
                          tokenize=sm.params.tokenize, info=sm.params.info)
    return {**{k: record[k] for k in ("format", "languages", "vocab_size", "layers", "dim")},
            "tokenizer": record["tokenizer"]["input"]}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
