"""Snakemake script of rule report: Table 1, the paper-vs-reproduction table and Figure 3 from the
fine-tuning result.json files (no GPU, no model)."""

import _setup  # noqa: F401  (puts src/ on sys.path for per-rule conda envs)

from pathlib import Path

from xling.report import build_report

snakemake = globals()["snakemake"]  # injected by Snakemake's script directive

p = snakemake.params
build_report(
    results=[Path(x) for x in snakemake.input.results],
    out_dir=Path(snakemake.output.table1_md).parent,
    settings=list(p.settings),
    labels=dict(p.labels),
    pairs=list(p.pairs),
    tasks=list(p.tasks),
    top_k=int(p.top_k),
    baseline=p.baseline,
    source=p.source,
    note=p.note or None,
    unavailable={task: dict(cells) for task, cells in dict(p.get("unavailable", {})).items()},
)
