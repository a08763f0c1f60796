"""Run (a slice of) a Snakemake workflow through the project's SLURM profile and report which
SLURM jobs it submitted. Used by tests/test_cluster_slurm*.py against support.local_slurm, and usable
by hand against any SLURM whose clients are on PATH.

Snakemake always runs under `timeout -k`: with a status command that cannot see the jobs (sacct
without slurmdbd) the SLURM plugin waits forever and ignores SIGTERM.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

REPO_ROOT = Path(__file__).resolve().parents[2]  # tests/support/slurm_run.py -> the repository
PROFILES_DIR = REPO_ROOT / "profiles"
# The real cluster profile, then the overrides for the one-machine test SLURM.
TEST_PROFILES = (PROFILES_DIR / "slurm", PROFILES_DIR / "slurm-test")

# "Job 3 has been submitted with SLURM jobid 17 (log: /x/.snakemake/slurm_logs/rule_a/17.log)."
SUBMITTED_RE = re.compile(r"Job (?P<sm>\d+) has been submitted with SLURM jobid (?P<id>\d+) \(log: (?P<log>[^)]+)\)")
RULE_FROM_LOG_RE = re.compile(r"/(?:rule|group)_(?P<rule>[^/]+)/")


@dataclass(frozen=True)
class SubmittedJob:
    snakemake_jobid: int
    slurm_jobid: str
    log: Path
    rule: str


@dataclass
class SlurmRun:
    """Outcome of one Snakemake invocation."""

    command: list[str]
    returncode: int
    output: str  # stdout and stderr interleaved, as a user would see them
    jobs: list[SubmittedJob] = field(default_factory=list)

    @property
    def timed_out(self) -> bool:
        return self.returncode in (124, 137)

    def jobs_of(self, rule: str) -> list[SubmittedJob]:
        return [j for j in self.jobs if j.rule == rule]


def parse_submissions(output: str) -> list[SubmittedJob]:
    """The SLURM jobs the executor plugin reported submitting, in order."""
    jobs = []
    for m in SUBMITTED_RE.finditer(output):
        log = Path(m.group("log"))
        rule = RULE_FROM_LOG_RE.search(str(log))
        jobs.append(SubmittedJob(int(m.group("sm")), m.group("id"), log, rule.group("rule") if rule else ""))
    return jobs


def snakemake_command(
    targets: Sequence[str],
    configfile: str | Path | None = None,
    extra_args: Iterable[str] = (),
    *,
    snakefile: str | Path | None = None,
    profiles: Sequence[str | Path] = TEST_PROFILES,
    timeout_s: int = 150,
) -> list[str]:
    cmd = ["timeout", "-k", "10", str(timeout_s), sys.executable, "-m", "snakemake"]
    if snakefile is not None:
        cmd += ["--snakefile", str(snakefile)]
    for p in profiles:
        cmd += ["--profile", str(p)]
    if configfile is not None:
        cmd += ["--configfile", str(configfile)]
    cmd += list(extra_args)
    # "--" keeps targets apart from list-valued options such as --forcerun.
    return cmd + ["--", *targets] if targets else cmd


def run_workflow_on_slurm(
    targets: Sequence[str],
    configfile: str | Path | None = None,
    extra_args: Iterable[str] = (),
    *,
    workdir: str | Path = REPO_ROOT,
    snakefile: str | Path | None = None,
    profiles: Sequence[str | Path] = TEST_PROFILES,
    env: Mapping[str, str] | None = None,
    timeout_s: int = 150,
    background: bool = False,
):
    """Run Snakemake on ``targets`` from ``workdir`` through ``profiles`` (default: the real SLURM
    profile plus the test overrides). ``env`` must point the SLURM clients at the cluster
    (LocalSlurm.env). Returns a SlurmRun, or with ``background`` the Popen (finish it with
    ``finish_run``)."""
    cmd = snakemake_command(
        targets, configfile, extra_args, snakefile=snakefile, profiles=profiles, timeout_s=timeout_s
    )
    run_env = dict(env if env is not None else os.environ)
    # Jobs run `python -m snakemake` with this interpreter; keep its venv first on PATH for them.
    run_env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{run_env.get('PATH', '')}"
    # Output goes to a file, not a pipe: a background run nobody reads must not block on a full pipe.
    log = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
    proc = subprocess.Popen(cmd, cwd=workdir, env=run_env, stdout=log, stderr=subprocess.STDOUT, text=True)
    proc.command, proc.output_file = cmd, log  # type: ignore[attr-defined]
    if background:
        return proc
    return finish_run(proc)


def finish_run(proc: subprocess.Popen) -> SlurmRun:
    """Wait for a run started with ``background=True`` and collect its outcome."""
    proc.wait()
    log = proc.output_file  # type: ignore[attr-defined]
    log.seek(0)
    out = log.read()
    log.close()
    return SlurmRun(proc.command, proc.returncode, out, parse_submissions(out))  # type: ignore[attr-defined]


def squeue_states(env: Mapping[str, str], job_ids: Iterable[str]) -> dict[str, str]:
    """State of each job as squeue reports it (finished jobs stay listed for MinJobAge)."""
    ids = list(job_ids)
    if not ids:
        return {}
    out = subprocess.run(
        ["squeue", "--states=all", "--noheader", "--format=%i|%T", "--jobs", ",".join(ids)],
        capture_output=True, text=True, env=dict(env), check=True,
    ).stdout
    return dict(line.split("|", 1) for line in out.split() if "|" in line)
