"""Snakemake script of rules bpe and bpe_mono: learn and apply BPE (xling.bpe.build_bpe).

input:  <lang>_<split> (split in train/valid/test) = tokenised text
params: mode (joint | per_language | per_language_prefixed), merges, languages (ordered);
        sample (rule bpe) = the xling.bpe.JointSample fields of joint codes, or None: the whole train splits
output: manifest = <bpe dir>/bpe.json (the codes and .bpe texts beside it)
"""

from pathlib import Path

from _setup import run_logged

from xling.bpe import JointSample, build_bpe


def main(sm) -> dict:
    texts = {lang: {split: Path(sm.input[f"{lang}_{split}"]) for split in ("train", "valid", "test")}
             for lang in sm.params.languages}
    out_dir = Path(sm.output.manifest).parent
    sample = sm.params.get("sample")
    m = build_bpe(out_dir, sm.params.mode, int(sm.params.merges), texts, workers=sm.threads,
                  sample=JointSample(**sample) if sample else None)
    return {"bpe_dir": str(out_dir), "mode": m["mode"], "merges_learnt": m["merges_learnt"],
            "anchors": m.get("anchors", {}).get("shared"), "sample": m.get("sample")}


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
