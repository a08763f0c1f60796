"""Snakemake script of rule backtranslate: Figure 7's en′, the pivot column of XNLI-15way
translated back into English (xling.analysis.backtranslate).

input:  way15 = the extracted XNLI-15way archive; model = the MT model's files (download rules)
params: pivot, rows, beams, batch_size, max_new_tokens
output: output[0] = one English sentence per 15-way row
"""

from pathlib import Path

from _setup import log_line, run_logged, torch_device

from xling.analysis.backtranslate import run_backtranslation


def main(sm) -> dict:
    p = sm.params
    files = {Path(f).name: Path(f) for f in sm.input.model}
    return run_backtranslation(Path(sm.input.way15), p.pivot, int(p.rows), files, Path(sm.output[0]),
                               batch_size=int(p.batch_size), num_beams=int(p.beams),
                               max_new_tokens=int(p.max_new_tokens), device=torch_device(sm), log=log_line)


run_logged(snakemake, main)  # noqa: F821 - injected by Snakemake
