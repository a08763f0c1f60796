"""Snakemake script for the `binarize` and `binarize_mono` rules (xling.binarize).

input:  manifest = <bpe dir>/bpe.json (the .bpe files live beside it)
params: languages (ordered), variants (code-switched copies of the training text, default 1)
output: shared_dict = <bin dir>/dict.txt (the other outputs live beside it)
"""

from pathlib import Path

try:
    import _setup  # noqa: F401
except ImportError:
    pass

from xling.binarize import binarize
from xling.preprocess.logs import log_result  # one JSON summary line in the rule's log


def main(sm) -> None:
    info = binarize(Path(sm.input.manifest).parent, Path(sm.output.shared_dict).parent, list(sm.params.languages),
                    workers=sm.threads, variants=int(sm.params.get("variants", 1)))
    log_result(sm, {"dict": str(sm.output.shared_dict), **info})


if "snakemake" in globals():
    main(snakemake)  # noqa: F821
