"""Snakemake script of rule anchors_table: the anchor counts of every setting and pair
(xling.bpe.anchors_report).

input:  the anchors.json files, in the order of params.entries
params: entries = [[pair, setting label], ...] aligned with input
output: the markdown table (anchors_md)
"""

from pathlib import Path

from _setup import run_logged

from xling.bpe import anchors_report
from xling.io import atomic_write


def main(sm) -> None:
    entries = [(pair, label, Path(p)) for (pair, label), p in zip(sm.params.entries, sm.input)]
    with atomic_write(sm.output[0]) as fh:
        fh.write(anchors_report(entries))


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
