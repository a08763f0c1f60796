"""Per-rule cluster resources from config/config.yaml, in the names Snakemake and
snakemake-executor-plugin-slurm 2.8 understand.

config:
    cluster:        {slurm_partition, slurm_account, gpu_model, [slurm_extra]}   # site-wide, null = unset
    rule_resources: {<family>: {cpus, mem_mb, runtime, gpus, [slurm_partition, slurm_account,
                                 gpu_model, slurm_extra, nodes]}}                # per rule family

A rule uses it as
    threads: rule_threads(config, "pretrain")
    resources: **rule_resources(config, "pretrain")

Mapping (what the plugin turns each key into on the sbatch line):
    cpus      -> threads and cpus_per_task     (--cpus-per-task)
    mem_mb    -> mem_mb                        (--mem, MB)
    runtime   -> runtime                       (-t, minutes)
    gpus      -> gpu (only when > 0)           (--gpus=N, or --gpus=<gpu_model>:N); the resource is
                 named `gpu` because that is the only GPU name the submitting plugin reads, and
                 the local profile limits the same name (`resources: gpu=N`)
              -> nodes: 1 for GPU jobs         (--nodes=1: all of a pretraining job's GPUs on one
                 node; fairseq spawns one process per GPU inside the single task)
    slurm_partition / slurm_account / gpu_model / slurm_extra: passed through when not null;
                 per-family values override the site-wide `cluster:` ones.
`tasks` is never set: on a GPU job the plugin turns it into --ntasks-per-gpu, which would start
one copy of the job per GPU.
"""

from __future__ import annotations

from typing import Any, Mapping

from xling.errors import ConfigError

REQUIRED_KEYS = ("cpus", "mem_mb", "runtime", "gpus")
PASS_THROUGH = ("slurm_partition", "slurm_account", "gpu_model", "slurm_extra")


def _family(config: Mapping[str, Any], family: str) -> Mapping[str, Any]:
    table = config.get("rule_resources") or {}
    if family not in table:
        raise ConfigError(f"rule_resources: no entry for rule family {family!r} (have: {sorted(table)})")
    spec = table[family]
    missing = [k for k in REQUIRED_KEYS if k not in spec]
    if missing:
        raise ConfigError(f"rule_resources.{family}: missing {', '.join(missing)}")
    for key in REQUIRED_KEYS:
        value = spec[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"rule_resources.{family}.{key}: expected a non-negative integer, got {value!r}")
    if spec["cpus"] < 1:
        raise ConfigError(f"rule_resources.{family}.cpus: expected at least 1, got {spec['cpus']}")
    return spec


def rule_threads(config: Mapping[str, Any], family: str) -> int:
    """Threads for a rule of ``family`` (= CPUs of its SLURM job; clipped to --cores locally)."""
    return int(_family(config, family)["cpus"])


def rule_resources(config: Mapping[str, Any], family: str, cpus: int | None = None) -> dict[str, Any]:
    """Snakemake `resources:` of a rule of ``family`` (see the module docstring for the mapping);
    ``cpus``: for a rule that uses fewer cores than its family (a one-thread rule asks for one)."""
    spec = _family(config, family)
    site = config.get("cluster") or {}
    res: dict[str, Any] = {
        "cpus_per_task": int(spec["cpus"] if cpus is None else cpus),
        "mem_mb": int(spec["mem_mb"]),
        "runtime": int(spec["runtime"]),
    }
    gpus = int(spec["gpus"])
    for key in PASS_THROUGH:
        value = spec.get(key, site.get(key))
        if value is None or value == "":
            continue
        if key == "gpu_model" and gpus == 0:
            continue  # a model without a count would make the plugin ask for one GPU
        res[key] = str(value)
    if gpus > 0:
        res["gpu"] = gpus
        res["nodes"] = int(spec["nodes"])
    return res
