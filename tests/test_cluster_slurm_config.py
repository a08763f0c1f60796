"""Profiles, resource mapping and the local-SLURM config writer (no root, no daemons)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from support import local_slurm as ls
from support.slurm_run import PROFILES_DIR, REPO_ROOT, parse_submissions, snakemake_command
from xling import config as xcfg
from xling.cluster.resources import rule_resources, rule_threads
from xling.errors import ConfigError, InputError

SLURMD_C = ("NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=24105\n"
            "UpTime=0-00:07:49\n")


def load_profile(name: str) -> dict:
    return yaml.safe_load((PROFILES_DIR / name / "config.yaml").read_text())


# --- slurmd -C / slurm.conf -------------------------------------------------------------------


def test_parse_node_line_reads_fields():
    node = ls.parse_node_line(SLURMD_C)
    assert node["NodeName"] == "vm"
    assert node["CPUs"] == "2" and node["RealMemory"] == "24105"


@pytest.mark.parametrize("text", ["", "UpTime=1\n", "NodeName=vm CPUs=2\n"])
def test_parse_node_line_rejects_bad_output(text):
    with pytest.raises(InputError, match="slurmd -C"):
        ls.parse_node_line(text)


def test_node_definition_reserves_memory_and_declares_gpus():
    node = ls.parse_node_line(SLURMD_C)
    line = ls.node_definition(node, gpus=2, mem_reserve_mb=100)
    fields = dict(t.split("=", 1) for t in line.split())
    assert fields["RealMemory"] == str(24105 - 100)
    assert fields["Gres"] == "gpu:2"
    assert fields["CoresPerSocket"] == "2"
    assert "Gres" not in ls.node_definition(node, gpus=0)


def test_declared_cpus_override_the_detected_ones(tmp_path):
    node = ls.parse_node_line(SLURMD_C)
    fields = dict(t.split("=", 1) for t in ls.node_definition(node, cpus=8).split())
    cores = int(fields["SocketsPerBoard"]) * int(fields["CoresPerSocket"]) * int(fields["ThreadsPerCore"])
    assert fields["CPUs"] == "8" and cores == 8
    kw = dict(cluster_name="t", control_host="vm", node_line="NodeName=vm", node_name="vm", ctld_port=1,
              slurmd_port=2, root=tmp_path, munge_socket=tmp_path / "s")
    assert "SlurmdParameters=config_overrides" in ls.slurm_conf_text(config_overrides=True, **kw)
    assert "config_overrides" not in ls.slurm_conf_text(**kw)


def test_slurm_conf_has_the_keys_a_cgroupless_accountingless_node_needs(tmp_path):
    node = ls.parse_node_line(SLURMD_C)
    text = ls.slurm_conf_text(
        cluster_name="t", control_host="vm", node_line=ls.node_definition(node, 1), node_name="vm",
        ctld_port=7001, slurmd_port=7002, root=tmp_path, munge_socket=tmp_path / "m.sock", gpus=1,
    )
    conf = dict(line.split("=", 1) for line in text.splitlines() if not line.startswith(("NodeName", "PartitionName")))
    assert conf["ProctrackType"] == "proctrack/linuxproc"
    assert conf["TaskPlugin"] == "task/none"
    assert conf["SelectType"] == "select/cons_tres"
    assert conf["SelectTypeParameters"] == "CR_Core_Memory"
    assert conf["AccountingStorageType"] == "accounting_storage/none"
    assert conf["AuthInfo"] == f"socket={tmp_path / 'm.sock'}"
    assert conf["GresTypes"] == "gpu"
    assert conf["SlurmctldPort"] == "7001" and conf["SlurmdPort"] == "7002"
    # every path the daemons write is inside the harness dir
    for key in ("StateSaveLocation", "SlurmdSpoolDir", "SlurmctldPidFile", "SlurmdPidFile", "SlurmctldLogFile"):
        assert Path(conf[key]).is_relative_to(tmp_path), key
    # squeue must still list finished jobs when the plugin polls (3 x init seconds of the test profile)
    test_profile = load_profile("slurm-test")
    assert int(conf["MinJobAge"]) >= 3 * test_profile["slurm-init-seconds-before-status-checks"]
    assert int(conf["MinJobAge"]) >= 3 * 40  # and for the plugin's default init interval


def test_gres_conf_one_line_per_gpu_file(tmp_path):
    files = [tmp_path / "g0", tmp_path / "g1"]
    lines = ls.gres_conf_text("vm", files).splitlines()
    assert lines == [f"NodeName=vm Name=gpu File={files[0]}", f"NodeName=vm Name=gpu File={files[1]}"]
    assert ls.gres_conf_text("vm", []) == ""


def test_read_pid_and_pid_alive(tmp_path):
    pf = tmp_path / "x.pid"
    assert ls.read_pid(pf) is None
    pf.write_text(f"{os.getpid()}\n")
    assert ls.read_pid(pf) == os.getpid()
    assert ls.pid_alive(os.getpid())
    pf.write_text("")  # created, not yet written: a daemon starting on a loaded machine
    assert ls.read_pid(pf) is None
    pf.write_text("garbage")
    with pytest.raises(InputError, match="process id"):
        ls.read_pid(pf)


def test_stale_pid_file_of_another_process_is_not_a_daemon(tmp_path):
    """stop() kills only what running() reports: a pid file naming some other live process (a
    reused pid) must not count, or stop() would kill an unrelated process."""
    cluster = ls.LocalSlurm(tmp_path)
    (tmp_path / "run").mkdir()
    cluster.ctld_pidfile.write_text(f"{os.getpid()}\n")  # alive, but it is python, not slurmctld
    assert ls.process_name(os.getpid()) != "slurmctld"
    assert cluster.running() == {"munged": None, "slurmctld": None, "slurmd": None}
    cluster.stop()  # nothing to stop; this process survives
    assert ls.pid_alive(os.getpid())


def test_stop_ends_the_processes_of_its_jobs_and_nothing_else(tmp_path):
    """stop() ends every process a job of its cluster started (SLURM_JOB_ID and this cluster's
    SLURM_CONF, or a descendant of such a process, even with SLURM_* stripped, as the plugin's
    jobstep does before its srun), and leaves alone a client of the cluster (SLURM_CONF but no
    job), a job of another cluster, and the caller."""
    import subprocess
    import time

    cluster = ls.LocalSlurm(tmp_path)
    base = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    job_env = dict(base, SLURM_CONF=str(cluster.conf), SLURM_JOB_ID="7")
    # a job: a batch shell, a child that lost its SLURM_* variables, a grandchild in its own session
    job = subprocess.Popen(
        ["bash", "-c", "env -u SLURM_CONF -u SLURM_JOB_ID bash -c 'setsid sleep 301 & sleep 302' & sleep 300"],
        env=job_env,
    )
    client = subprocess.Popen(["sleep", "303"], env=dict(base, SLURM_CONF=str(cluster.conf)))
    other = subprocess.Popen(["sleep", "304"],
                             env=dict(base, SLURM_CONF=str(tmp_path / "other.conf"), SLURM_JOB_ID="7"))
    found, expected = [], ["bash", "bash", "sleep", "sleep", "sleep"]
    try:
        # until every process has exec'd its program: `setsid` is one for a moment before `sleep 301`
        deadline = time.monotonic() + 10
        while sorted(p.comm for p in cluster.job_processes()) != expected and time.monotonic() < deadline:
            time.sleep(0.05)
        found = cluster.job_processes()
        assert sorted(p.comm for p in found) == expected, found
        assert {client.pid, other.pid, os.getpid()}.isdisjoint(p.pid for p in found)
        cluster.stop(grace_s=1)
        assert job.wait(timeout=5) is not None
        assert cluster.job_processes() == []
        assert not any(ls.pid_alive(p.pid) and ls.read_proc(p.pid) == p for p in found)
        assert client.poll() is None and other.poll() is None and ls.pid_alive(os.getpid())
    finally:
        for p in found:  # on failure, leave no sleeper behind
            if ls.read_proc(p.pid) == p:
                os.kill(p.pid, 9)
        for proc in (job, client, other):
            proc.kill()
            proc.wait()


# --- resources ---------------------------------------------------------------------------------

PAPER_CONFIG = xcfg.load(REPO_ROOT / "config" / "config.yaml")


def test_pretrain_resources_from_paper_config():
    spec = PAPER_CONFIG["rule_resources"]["pretrain"]
    res = rule_resources(PAPER_CONFIG, "pretrain")
    assert res["gpu"] == spec["gpus"] and res["nodes"] == 1
    assert res["cpus_per_task"] == spec["cpus"] == rule_threads(PAPER_CONFIG, "pretrain")
    assert res["mem_mb"] == spec["mem_mb"] and res["runtime"] == spec["runtime"]
    assert "tasks" not in res  # would become --ntasks-per-gpu


def test_cpu_rules_request_no_gpu_and_nulls_are_dropped():
    for family, spec in PAPER_CONFIG["rule_resources"].items():
        res = rule_resources(PAPER_CONFIG, family)
        assert ("gpu" in res) == (spec["gpus"] > 0), family
        assert "slurm_partition" not in res and "slurm_account" not in res  # null in the paper config


def test_site_and_family_overrides():
    cfg = {
        "cluster": {"slurm_partition": "gpu", "slurm_account": "proj1", "gpu_model": "v100"},
        "rule_resources": {
            "finetune": {"cpus": 5, "mem_mb": 1000, "runtime": 10, "gpus": 1, "slurm_partition": "short"},
            "report": {"cpus": 1, "mem_mb": 100, "runtime": 5, "gpus": 0, "slurm_extra": "--qos=low"},
        },
    }
    xcfg.fill_defaults(cfg)  # as validation does for the workflow
    ft = rule_resources(cfg, "finetune")
    assert ft["slurm_partition"] == "short" and ft["slurm_account"] == "proj1" and ft["gpu_model"] == "v100"
    rep = rule_resources(cfg, "report")
    assert rep["slurm_partition"] == "gpu" and rep["slurm_extra"] == "--qos=low"
    assert "gpu_model" not in rep and "gpu" not in rep


@pytest.mark.parametrize(
    "spec, match",
    [
        ({"cpus": 1, "mem_mb": 1, "runtime": 1}, "missing gpus"),
        ({"cpus": 0, "mem_mb": 1, "runtime": 1, "gpus": 0}, "at least 1"),
        ({"cpus": 1, "mem_mb": "1G", "runtime": 1, "gpus": 0}, "non-negative integer"),
        ({"cpus": 1, "mem_mb": 1, "runtime": 1, "gpus": True}, "non-negative integer"),
    ],
)
def test_bad_resource_specs(spec, match):
    with pytest.raises(ConfigError, match=match):
        rule_resources({"rule_resources": {"x": spec}}, "x")
    with pytest.raises(ConfigError, match="no entry"):
        rule_resources({"rule_resources": {}}, "x")


# --- profiles ----------------------------------------------------------------------------------


def _plugin_option_names() -> set[str]:
    from dataclasses import fields

    from snakemake_executor_plugin_slurm import ExecutorSettings

    return {"slurm-" + f.name.replace("_", "-") for f in fields(ExecutorSettings)}


def _snakemake_option_names() -> set[str]:
    from snakemake.cli import get_argument_parser

    parser = get_argument_parser()
    return {opt.lstrip("-") for action in parser._actions for opt in action.option_strings if opt.startswith("--")}


@pytest.mark.parametrize("name", ["slurm", "slurm-test", "local"])
def test_profile_keys_are_real_options(name):
    profile = load_profile(name)
    known = _plugin_option_names() | _snakemake_option_names()
    unknown = sorted(k for k in profile if k not in known)
    assert not unknown, f"profiles/{name}: unknown options {unknown}"


def test_slurm_profile_settings():
    p = load_profile("slurm")
    assert p["executor"] == "slurm"
    assert p["slurm-requeue"] is True and p["retries"] >= 1
    assert p["slurm-status-command"] in ("sacct", "squeue")
    t = load_profile("slurm-test")
    assert t["slurm-status-command"] == "squeue"
    assert "slurm-account" not in t and "slurm_account" not in str(t.get("default-resources", ""))


def test_local_profile_limits_gpu_resource():
    p = load_profile("local")
    assert "executor" not in p or p["executor"] == "local"
    assert p["resources"]["gpu"] >= 0


def test_bare_profile_name_resolves_from_repo_root(tmp_path, monkeypatch):
    """Snakemake 9 looks up a bare `--profile NAME` in the cwd, then the user and site config dirs
    (never in ./profiles/): the repo-root link `slurm -> profiles/slurm` makes the README's
    `snakemake --profile slurm all` work. Checked with Snakemake's own resolver."""
    from snakemake.cli import get_profile_dir

    (tmp_path / "profiles").symlink_to(PROFILES_DIR)
    monkeypatch.chdir(tmp_path)
    found = get_profile_dir("slurm")
    assert found is None or Path(found[0]).resolve() != (PROFILES_DIR / "slurm").resolve()
    (tmp_path / "slurm").symlink_to("profiles/slurm")
    found_dir, found_file = get_profile_dir("slurm")
    assert Path(found_file).resolve() == (PROFILES_DIR / "slurm" / "config.yaml").resolve()


def test_repo_root_slurm_link_when_present():
    link = REPO_ROOT / "slurm"
    if not link.exists():
        pytest.skip("repo-root link `slurm -> profiles/slurm` missing (ln -s profiles/slurm slurm)")
    assert link.resolve() == (PROFILES_DIR / "slurm").resolve()


# --- runner ------------------------------------------------------------------------------------


def test_parse_submissions():
    out = (
        "Job 1 has been submitted with SLURM jobid 17 (log: /w/logs/slurm/rule_prep/17.log).\n"
        "noise\nJob 2 has been submitted with SLURM jobid 18 (log: /w/logs/slurm/rule_train/a/18.log).\n"
    )
    jobs = parse_submissions(out)
    assert [(j.snakemake_jobid, j.slurm_jobid, j.rule) for j in jobs] == [(1, "17", "prep"), (2, "18", "train")]
    assert jobs[1].log == Path("/w/logs/slurm/rule_train/a/18.log")


def test_snakemake_command_runs_under_timeout_kill():
    cmd = snakemake_command(["t1"], "c.yaml", ["--forcerun", "t1"], timeout_s=30)
    assert cmd[:4] == ["timeout", "-k", "10", "30"]
    assert cmd[-2:] == ["--", "t1"]
    assert cmd.count("--profile") == 2


# --- the real workflow declares its resources ----------------------------------------------------

# Run in a subprocess (Snakemake keeps global state): every rule of the workflow as Snakemake
# parsed it, whether it runs in the main process, and which resources the rule itself declares.
LIST_RULES = r"""
import json, sys
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings
with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
    wf = api.workflow(
        resource_settings=ResourceSettings(), config_settings=ConfigSettings(configfiles=[Path(sys.argv[1])]),
        snakefile=Path("Snakefile"), workdir=Path("."),
    )._workflow
    rules = [
        {"rule": r.name, "local": bool(r.norun or r.name in wf._localrules),
         "resources": sorted(k for k in r.resources if not k.startswith("_") and k != "tmpdir"),
         "threads": r.resources["_cores"].value, "cpus": getattr(r.resources.get("cpus_per_task"), "value", None)}
        for r in wf.rules
    ]
print("RULES=" + json.dumps(rules))
"""


@pytest.mark.parametrize("configfile", ["config/demo.yaml", "config/config.yaml"])
def test_every_workflow_rule_declares_cluster_resources(tmp_path, configfile):
    """Every rule that does work is a cluster job declaring its own memory, runtime and CPUs (the
    profile's default-resources are only a fallback) and reserving the cores it uses (the paper
    config's families have 4-40 CPUs); only resource-free aggregation rules (no shell/script/run)
    run in the main Snakemake process, so nothing GPU-bound ever does."""
    import json
    import subprocess
    import sys

    if not (REPO_ROOT / "Snakefile").exists():
        pytest.skip("Snakefile missing")
    for entry in REPO_ROOT.iterdir():  # a private view of the repo: Snakemake writes .snakemake/
        if entry.name not in ("results", "logs", ".snakemake", ".git"):
            (tmp_path / entry.name).symlink_to(entry)
    proc = subprocess.run(
        [sys.executable, "-c", LIST_RULES, configfile], cwd=tmp_path, capture_output=True, text=True,
        timeout=300,
    )
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RULES=")), None)
    assert proc.returncode == 0 and line, proc.stdout[-3000:] + proc.stderr[-3000:]
    rules = json.loads(line[len("RULES="):])
    assert rules
    for r in rules:
        if r["local"]:
            assert "gpu" not in r["resources"], f"local rule {r['rule']} declares a GPU"
            continue
        missing = [k for k in ("mem_mb", "runtime", "cpus_per_task") if k not in r["resources"]]
        assert not missing, f"rule {r['rule']} declares no {missing}"
        # a job reserves the cores it uses: a one-thread rule does not hold its family's four
        assert r["cpus"] == r["threads"], f"rule {r['rule']}: {r['threads']} thread(s) but {r['cpus']} CPUs reserved"


def test_workflow_scripts_read_the_gpu_resource_by_its_declared_name():
    """Rules declare the GPU count as resource `gpu` (the only name the SLURM plugin turns into
    --gpus, and the pool the local profile limits). A script reading `gpus` gets nothing and would
    silently train on CPU inside a GPU job."""
    import re

    def reads(name):
        return re.compile(rf"""resources\.{name}\b|resources\s*,\s*["']{name}["']"""
                          rf"""|resources(?:\.get\(|\[)\s*["']{name}["']""")

    wrong, right = reads("gpus"), reads("gpu")
    scripts = sorted((REPO_ROOT / "workflow" / "scripts").glob("*.py"))
    scripts += sorted((REPO_ROOT / "workflow").rglob("*.smk"))
    # a line that reads `gpus` only as a fallback after `gpu` is fine
    offenders = [f"{p.relative_to(REPO_ROOT)}:{i}" for p in scripts
                 for i, line in enumerate(p.read_text().splitlines(), 1)
                 if wrong.search(line) and not right.search(line)]
    assert not offenders, f"read resource `gpu`, not `gpus`: {offenders}"
