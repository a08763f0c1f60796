"""Snakemake script of rule backtranslate: Figure 7's en′, the pivot column of XNLI-15way
translated back into English (xling.analysis.backtranslate).

input:  way15 = the extracted XNLI-15way archive; model = the MT model's files (download rules)
params: pivot, rows, beams, batch_size, max_new_tokens
output: output[0] = one English sentence per 15-way row
"""

import json
import sys
from pathlib import Path

from _setup import run_logged  # also puts src/ on sys.path for per-rule conda envs

import torch

from xling.analysis.backtranslate import run_backtranslation


def main(sm) -> None:
    p = sm.params
    torch.set_num_threads(max(1, int(sm.threads)))
    device = "cuda" if int(sm.resources.get("gpu", 0) or 0) > 0 and torch.cuda.is_available() else "cpu"
    files = {Path(f).name: Path(f) for f in sm.input.model}
    stats = run_backtranslation(Path(sm.input.way15), p.pivot, int(p.rows), files, Path(sm.output[0]),
                                batch_size=int(p.batch_size), num_beams=int(p.beams),
                                max_new_tokens=int(p.max_new_tokens), device=device,
                                log=lambda msg: print(msg, file=sys.stderr, flush=True))
    print(json.dumps(stats), file=sys.stderr)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
