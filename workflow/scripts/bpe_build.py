"""Snakemake script for the `bpe` and `bpe_mono` rules: learn + apply BPE (xling.bpe.build_bpe).

input:  named `<lang>_<split>` (split in train/valid/test) -> tokenised text
params: mode (joint | per_language | per_language_prefixed), merges, languages (ordered),
        min_frequency (optional, default 2)
output: manifest = <bpe dir>/bpe.json (the other outputs live beside it)
"""

from pathlib import Path

try:
    import _setup  # noqa: F401 - puts src/ on sys.path in per-rule environments
except ImportError:
    pass

from xling.bpe import build_bpe
from xling.preprocess.logs import log_result  # one JSON summary line in the rule's log


def main(sm) -> None:
    texts = {lang: {split: Path(sm.input[f"{lang}_{split}"]) for split in ("train", "valid", "test")}
             for lang in sm.params.languages}
    out_dir = Path(sm.output.manifest).parent
    m = build_bpe(out_dir, sm.params.mode, int(sm.params.merges), texts, workers=sm.threads,
                  min_frequency=int(sm.params.get("min_frequency", 2)))
    log_result(sm, {"bpe_dir": str(out_dir), "mode": m["mode"], "merges_learnt": m["merges_learnt"],
                    "anchors": m.get("anchors", {}).get("shared")})


if "snakemake" in globals():
    main(snakemake)  # noqa: F821 - injected by Snakemake
