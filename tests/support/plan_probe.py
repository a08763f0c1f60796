"""Plan the workflow as ``snakemake -n`` does, in a fresh interpreter, and report what planning
imported and every pretraining job as Snakemake sees it (tests/test_workflow_planning.py).

    python -m support.plan_probe OUT.json WORKDIR [CONFIGFILE ...]

OUT.json: ``{"imported": [torch, fairseq, scipy and sacremoses modules loaded by planning], "jobs": [{rule, done,
threads, gpus, params, tracked}], "rules": {rule: [jobs, digest of their params]}}``;
``tracked`` is what Snakemake stores and compares for a job's params (the sorted reprs of their
values), ``params`` the values themselves; ``rules`` covers every job of the plan, each rule's
jobs' outputs and tracked params in one digest.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PRETRAIN_RULES = ("pretrain", "pretrain_mono", "liu_pretrain")
# what no plan needs, and what it would cost to import: torch 3 s, fairseq 4 s more, scipy 1 s,
# sacremoses 0.2 s (a tenth of the demo's dry run)
HEAVY = ("torch", "fairseq", "scipy", "sacremoses")


def plan(workdir: Path, configfiles: list[Path]) -> list:
    """Every job of targets ``all`` and ``liu2020``, planned as a dry run in ``workdir``."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        OutputSettings,
        ResourceSettings,
        StorageSettings,
    )

    with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
        wapi = api.workflow(
            resource_settings=ResourceSettings(cores=2),
            config_settings=ConfigSettings(configfiles=configfiles),
            storage_settings=StorageSettings(),
            snakefile=REPO / "Snakefile",
            workdir=workdir,
        )
        wapi.dag(DAGSettings(targets={"all", "liu2020"})).execute_workflow(pseudo_executor="dryrun")
        return list(wapi._workflow.dag.jobs)


def pretraining_jobs(jobs: list) -> list[dict]:
    out = []
    for job in jobs:
        if job.rule.name not in PRETRAIN_RULES:
            continue
        params = dict(job.params.items())
        out.append({
            "rule": job.rule.name,
            "done": str(job.output[0]),
            "threads": int(job.threads),
            "gpus": int(job.resources.get("gpu", 0) or 0),
            "params": params,
            "tracked": tracked(job),
        })
    return sorted(out, key=lambda j: j["done"])


def tracked(job) -> list[str]:
    """A job's params as Snakemake records them to decide a rerun: the sorted reprs of their values."""
    return sorted(repr(v) for v in dict(job.params.items()).values())


def rule_digests(jobs: list) -> dict[str, list]:
    """Rule -> [its jobs, a digest of their outputs and tracked params]."""
    by_rule: dict[str, list] = {}
    for job in jobs:
        by_rule.setdefault(job.rule.name, []).append([sorted(map(str, job.output)), tracked(job)])
    return {rule: [len(entries), hashlib.sha256(json.dumps(sorted(entries)).encode()).hexdigest()]
            for rule, entries in sorted(by_rule.items())}


def main(argv: list[str]) -> int:
    out, workdir, *configs = argv
    jobs = plan(Path(workdir).resolve(), [Path(c).resolve() for c in configs])
    imported = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
    record = {"imported": imported, "jobs": pretraining_jobs(jobs), "rules": rule_digests(jobs)}
    Path(out).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
