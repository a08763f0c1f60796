"""Snakemake script for the `anchors_table` rule: markdown anchor counts of every setting and pair.

input:  the anchors.json files, in the order of params.entries
params: entries = [[pair, setting label], ...] aligned with input
output: md = the markdown table
"""

from pathlib import Path

try:
    import _setup  # noqa: F401
except ImportError:
    pass

from xling.bpe import anchors_report
from xling.io import atomic_write


def main(sm) -> None:
    entries = [(pair, label, Path(p)) for (pair, label), p in zip(sm.params.entries, sm.input)]
    with atomic_write(sm.output.md) as fh:
        fh.write(anchors_report(entries))


if "snakemake" in globals():
    main(snakemake)  # noqa: F821
