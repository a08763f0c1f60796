"""A real one-machine SLURM cluster (Debian's slurm-wlm + munge) started by hand in a temp dir.

Used by the SLURM tests and CI: it needs root and no systemd. Everything it writes (config, state,
spool, logs, munge key and socket, pid files) lives under one directory, the daemons listen on free
ports, and `stop()` ends only the daemons whose pid files it wrote, then every process a job of this
cluster started (found through /proc, see `job_process_tree`), so two harnesses (or a site SLURM) on
the same machine do not interfere and no job step outlives the cluster. Lessons baked in: munge's run dir does not
exist without systemd, no cgroups (proctrack/linuxproc, task/none), no accounting (the executor
plugin must then use `squeue`, and MinJobAge must stay above its status-check threshold), node line
taken from `slurmd -C`.

CLI: scripts/slurm_cluster.sh {start,stop,status} DIR   (start prints `export SLURM_CONF=...`), which runs
`python -m support.local_slurm` with tests/ on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from support.apt import apt_install
from xling.errors import InputError

# Binaries the harness needs, and the Debian packages that provide them.
REQUIRED_BINARIES = {
    "slurmctld": "slurmctld",
    "slurmd": "slurmd",
    "sbatch": "slurm-client",
    "squeue": "slurm-client",
    "scontrol": "slurm-client",
    "munged": "munge",
}
APT_PACKAGES = ("slurm-wlm", "munge")
MUNGE_USER = "munge"
# Inside a job the SLURM plugin's jobstep strips every SLURM_* variable (SLURM_CONF included)
# before its nested `srun`, so clients there find the config only at a default place. They look
# at SLURM_CONF, then /etc/slurm/slurm.conf, then this file (slurmd's configless cache): the
# harness links it to its own slurm.conf while running, leaving /etc alone.
SITE_CONF = Path("/etc/slurm/slurm.conf")
CONFIGLESS_LINK = Path("/run/slurm/conf/slurm.conf")
# SLURM's own processes inside a job, which need the daemons to shut down cleanly.
SLURM_TOOLS = frozenset({"slurmstepd", "srun", "salloc", "sbatch", "sattach"})
# Kept well above 3 x slurm-init-seconds-before-status-checks (the plugin's squeue threshold) so
# finished jobs stay visible to `squeue --states=all` long enough for Snakemake to see their state.
MIN_JOB_AGE_S = 600


class SlurmHarnessError(RuntimeError):
    """The local SLURM could not be installed, configured or started (message says which step)."""


def is_root() -> bool:
    return os.geteuid() == 0


# --------------------------------------------------------------------------------------------
# Pure helpers (tested without root)


def parse_node_line(text: str, source: str = "slurmd -C") -> dict[str, str]:
    """Parse the `NodeName=... CPUs=... RealMemory=...` line printed by `slurmd -C`."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.startswith("NodeName="):
            fields = dict(tok.split("=", 1) for tok in line.split() if "=" in tok)
            for key in ("NodeName", "CPUs", "RealMemory"):
                if key not in fields:
                    raise InputError(source, lineno, f"a {key}= field in the node line", line)
            return fields
    raise InputError(source, None, "a line starting with 'NodeName='", text.strip()[:80] or "(empty)")


def node_definition(node: dict[str, str], gpus: int = 0, mem_reserve_mb: int = 512, cpus: int | None = None) -> str:
    """The slurm.conf NodeName line: the hardware `slurmd -C` saw, minus a little memory for the OS.

    ``gpus`` > 0 declares fake GPU GRES (null-device files) so `--gpus=N` requests are
    scheduled and accounted on a machine without GPUs, which exercises the profile's GPU mapping."""
    keys = ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore")
    parts = [f"NodeName={node['NodeName']}"]
    if cpus is None:
        parts += [f"{k}={node[k]}" for k in keys if k in node]
    else:
        # Declared CPUs instead of the real ones (slurm.conf then needs config_overrides): lets
        # tests whose jobs mostly sleep run side by side on a 2-core machine.
        parts += [f"CPUs={cpus}", "Boards=1", "SocketsPerBoard=1", f"CoresPerSocket={cpus}", "ThreadsPerCore=1"]
    mem = max(256, int(node["RealMemory"]) - mem_reserve_mb)
    parts.append(f"RealMemory={mem}")
    if gpus > 0:
        parts.append(f"Gres=gpu:{gpus}")
    parts.append("State=UNKNOWN")
    return " ".join(parts)


def slurm_conf_text(
    *,
    cluster_name: str,
    control_host: str,
    node_line: str,
    node_name: str,
    ctld_port: int,
    slurmd_port: int,
    root: Path,
    munge_socket: Path,
    gpus: int = 0,
    partition: str = "debug",
    def_mem_per_cpu: int = 500,
    config_overrides: bool = False,
) -> str:
    """slurm.conf for a single-node cluster whose every path lives under ``root``."""
    lines = [
        f"ClusterName={cluster_name}",
        f"SlurmctldHost={control_host}",
        f"SlurmctldPort={ctld_port}",
        f"SlurmdPort={slurmd_port}",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={munge_socket}",
        # No systemd/cgroups on CI machines: track processes through /proc, no task binding.
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        f"DefMemPerCPU={def_mem_per_cpu}",
        "AccountingStorageType=accounting_storage/none",
        "JobAcctGatherType=jobacct_gather/none",
        "JobCompType=jobcomp/none",
        "MpiDefault=none",
        "SchedulerType=sched/backfill",
        "SwitchType=switch/none",
        "ReturnToService=2",
        f"MinJobAge={MIN_JOB_AGE_S}",
        # Fast turnaround for tests: prompt kills and requeues.
        "KillWait=2",
        "InactiveLimit=0",
        "SchedulerParameters=sched_interval=2",
        f"StateSaveLocation={root / 'state'}",
        f"SlurmdSpoolDir={root / 'spool'}",
        f"SlurmctldPidFile={root / 'run' / 'slurmctld.pid'}",
        f"SlurmdPidFile={root / 'run' / 'slurmd.pid'}",
        f"SlurmctldLogFile={root / 'log' / 'slurmctld.log'}",
        f"SlurmdLogFile={root / 'log' / 'slurmd.log'}",
        "SlurmctldDebug=info",
        "SlurmdDebug=info",
    ]
    if gpus > 0:
        lines.append("GresTypes=gpu")
    if config_overrides:
        # trust the node line over what slurmd detects (declared CPUs above the real count)
        lines.append("SlurmdParameters=config_overrides")
    lines.append(node_line)
    lines.append(f"PartitionName={partition} Nodes={node_name} Default=YES MaxTime=INFINITE State=UP")
    return "\n".join(lines) + "\n"


def gres_conf_text(node_name: str, gpu_files: list[Path]) -> str:
    # slurmd ignores count-only gpu GRES (reports 0 and the node drains): each GPU needs a
    # device file; the harness points them at null-device nodes it creates.
    return "".join(f"NodeName={node_name} Name=gpu File={f}\n" for f in gpu_files)


def free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers kill(0): treat it as gone.
    try:
        fields = Path(f"/proc/{pid}/stat").read_text()
        return fields.rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except FileNotFoundError:
        return ""


def read_pid(path: Path) -> int | None:
    """The pid in ``path``; None while there is none yet (no file, or a daemon has created the
    file but not yet written it: seen on a loaded machine)."""
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    if not text:
        return None
    if not re.fullmatch(r"\d+", text):
        raise InputError(path, 1, "a process id", text)
    return int(text)


@dataclass(frozen=True)
class ProcInfo:
    """One live (non-zombie) process, as /proc shows it."""

    pid: int
    ppid: int
    start: int  # clock ticks after boot (/proc/<pid>/stat field 22): tells a reused pid apart
    comm: str
    slurm_conf: str | None  # SLURM_CONF in its environment, if any
    slurm_job_id: str | None  # SLURM_JOB_ID in its environment, if any


def read_proc(pid: int) -> ProcInfo | None:
    """The process ``pid``, or None if it is gone, a zombie or unreadable."""
    try:
        stat_text = Path(f"/proc/{pid}/stat").read_text()
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:  # gone (ENOENT/ESRCH) or another user's process seen without root (EACCES)
        return None
    comm = stat_text[stat_text.find("(") + 1 : stat_text.rfind(")")]
    fields = stat_text[stat_text.rfind(")") + 2 :].split()
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    env = {}
    for item in environ.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep and key in (b"SLURM_CONF", b"SLURM_JOB_ID"):
            env[key.decode()] = value.decode(errors="replace")
    return ProcInfo(pid, int(fields[1]), int(fields[19]), comm, env.get("SLURM_CONF"), env.get("SLURM_JOB_ID"))


def process_table() -> dict[int, ProcInfo]:
    table = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (info := read_proc(int(entry.name))) is not None:
            table[info.pid] = info
    return table


def _same_file(value: str, conf: Path) -> bool:
    if value == str(conf):
        return True
    try:
        return Path(value).resolve() == conf.resolve()
    except (OSError, RuntimeError):
        return False


def job_process_tree(
    table: dict[int, ProcInfo], conf: Path, roots: tuple[int, ...] = (), job_id: str | None = None
) -> set[int]:
    """Pids of the processes that jobs of the cluster configured by ``conf`` started.

    Marked: a job's processes (SLURM_JOB_ID set and SLURM_CONF naming ``conf``: slurmstepd puts
    both in every task's environment) and the cluster's slurmstepds (they inherit slurmd's
    SLURM_CONF). Then every descendant of a marked process or of ``roots`` (slurmd), which catches
    what the plugin's jobstep starts after stripping SLURM_* from its environment. The roots
    themselves, and the caller and its ancestors, are never included. With ``job_id``: only that
    job's processes and their descendants (no slurmstepds: their environment names no job)."""
    def ours(p: ProcInfo) -> bool:
        if p.slurm_conf is None:
            return False
        if job_id is not None:
            mark = p.slurm_job_id == job_id
        else:
            mark = p.slurm_job_id is not None or p.comm == "slurmstepd"
        return mark and _same_file(p.slurm_conf, conf)

    marked = {p.pid for p in table.values() if ours(p)}
    children: dict[int, list[int]] = {}
    for p in table.values():
        children.setdefault(p.ppid, []).append(p.pid)
    found, todo = set(), [*marked, *(c for r in roots for c in children.get(r, ()))]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    protected, pid = set(roots), os.getpid()
    while pid > 1 and pid not in protected:
        protected.add(pid)
        pid = table[pid].ppid if pid in table else 0
    return found - protected


# --------------------------------------------------------------------------------------------
# The harness


@dataclass
class LocalSlurm:
    """One-node SLURM under ``root``. ``gpus``: fake GPU GRES to declare on the node, so jobs that
    request GPUs are scheduled (and their GPU count checked) on a machine without GPUs. ``cpus``:
    CPUs to declare instead of the real count (None = what `slurmd -C` sees)."""

    root: Path
    gpus: int = 0
    cpus: int | None = None
    partition: str = "debug"
    cluster_name: str = "xlingtest"
    log: list[str] = field(default_factory=list)

    def __post_init__(self):
        self.root = Path(self.root).resolve()
        self.conf = self.root / "etc" / "slurm.conf"
        # munged runs as the munge user, which cannot enter private temp dirs (pytest's are 0700):
        # its files go to a directory of its own under /tmp, recorded here so stop() finds it.
        self.munge_dir_record = self.root / "munge_dir"
        self.ctld_pidfile = self.root / "run" / "slurmctld.pid"
        self.slurmd_pidfile = self.root / "run" / "slurmd.pid"

    @property
    def munge_dir(self) -> Path:
        if not self.munge_dir_record.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            self.munge_dir_record.write_text(tempfile.mkdtemp(prefix="xling-munge-") + "\n")
        return Path(self.munge_dir_record.read_text().strip())

    @property
    def munge_socket(self) -> Path:
        return self.munge_dir / "munge.socket"

    @property
    def munge_pidfile(self) -> Path:
        return self.munge_dir / "munged.pid"

    # -- environment -------------------------------------------------------------------------
    @property
    def env(self) -> dict[str, str]:
        """Environment for SLURM clients (sbatch, squeue, snakemake) talking to this cluster."""
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.conf)
        return env

    def _run(self, cmd: list[str], check: bool = True, **kw) -> subprocess.CompletedProcess:
        kw.setdefault("env", self.env)
        proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
        self.log.append(f"$ {' '.join(cmd)} -> {proc.returncode}\n{proc.stdout}{proc.stderr}")
        if check and proc.returncode != 0:
            raise SlurmHarnessError(
                f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}"
            )
        return proc

    # -- install -----------------------------------------------------------------------------
    @staticmethod
    def missing_binaries() -> list[str]:
        return [b for b in REQUIRED_BINARIES if shutil.which(b) is None]

    def install(self) -> None:
        """apt-get install slurm-wlm and munge when a binary is missing (idempotent)."""
        if not self.missing_binaries():
            return
        if not is_root():
            raise SlurmHarnessError("installing slurm-wlm/munge needs root")
        proc = apt_install(APT_PACKAGES, self.log)
        if proc.returncode != 0:
            raise SlurmHarnessError(f"{' '.join(proc.args)} failed ({proc.returncode}): "
                                    f"{proc.stderr.strip() or proc.stdout.strip()}")
        if self.missing_binaries():
            raise SlurmHarnessError(f"still missing after install: {self.missing_binaries()}")

    # -- configure ---------------------------------------------------------------------------
    def configure(self) -> None:
        for sub in ("etc", "state", "spool", "log", "run"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        node = parse_node_line(self._run(["slurmd", "-C"]).stdout)
        name = node["NodeName"]
        text = slurm_conf_text(
            cluster_name=self.cluster_name,
            control_host=name,
            node_line=node_definition(node, self.gpus, cpus=self.cpus),
            node_name=name,
            ctld_port=free_port(),
            slurmd_port=free_port(),
            root=self.root,
            munge_socket=self.munge_socket,
            gpus=self.gpus,
            partition=self.partition,
            config_overrides=self.cpus is not None and self.cpus != int(node["CPUs"]),
        )
        self.conf.write_text(text)
        gpu_files = [self.root / "dev" / f"fakegpu{i}" for i in range(self.gpus)]
        if gpu_files:
            gpu_files[0].parent.mkdir(exist_ok=True)
            for f in gpu_files:
                if not f.exists():
                    # Character device with /dev/null's numbers: harmless if anything opens it.
                    os.mknod(f, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            (self.conf.parent / "gres.conf").write_text(gres_conf_text(name, gpu_files))
        # Empty cgroup.conf keeps slurmd from probing cgroup mounts it will not use.
        (self.conf.parent / "cgroup.conf").write_text("")
        self.node_name = name

    # -- start/stop --------------------------------------------------------------------------
    def _start_munge(self) -> None:
        uid = pwd.getpwnam(MUNGE_USER)
        self.munge_dir.mkdir(parents=True, exist_ok=True)
        key = self.munge_dir / "munge.key"
        if not key.exists():
            key.write_bytes(os.urandom(1024))
        for p in (self.munge_dir, key):
            os.chown(p, uid.pw_uid, uid.pw_gid)
        os.chmod(self.munge_dir, 0o700)
        os.chmod(key, 0o600)
        # munged refuses to run as root and wants its dirs owned by its user; --force accepts the
        # temp dir's world-writable ancestors (/tmp).
        self._run(
            [
                "runuser", "-u", MUNGE_USER, "--", "munged", "--force",
                f"--socket={self.munge_socket}",
                f"--key-file={key}",
                f"--pid-file={self.munge_pidfile}",
                f"--log-file={self.munge_dir / 'munged.log'}",
                f"--seed-file={self.munge_dir / 'munged.seed'}",
            ]
        )
        self._wait(lambda: self.munge_socket.exists(), 10, "munged socket")
        # slurmd (root) and clients must reach the socket inside the munge-owned dir.
        os.chmod(self.munge_dir, 0o755)

    def start(self, timeout_s: float = 60, wait_for_other_s: float = 300) -> None:
        """Install if needed, configure, start munged, slurmctld and slurmd; wait for `idle`.
        ``wait_for_other_s``: how long to wait for another harness on this machine to stop."""
        if not is_root():
            raise SlurmHarnessError("starting a local SLURM needs root")
        self.install()
        self._claim_default_conf(wait_for_other_s)
        try:
            self.configure()
            self._start_munge()
            # -c: clear saved state (fresh cluster); daemons daemonise and write their pid files.
            self._run(["slurmctld", "-c", "-f", str(self.conf)])
            self._wait(lambda: read_pid(self.ctld_pidfile) is not None, 15, "slurmctld pid file")
            self._run(["slurmd", "-f", str(self.conf), "-N", self.node_name])
            self._wait(lambda: read_pid(self.slurmd_pidfile) is not None, 15, "slurmd pid file")
            self._wait(self.is_idle, timeout_s, "node state idle")
        except BaseException:
            # A half-started cluster would hold the config link and its daemons would outlive
            # the caller, who has no harness to stop: undo here.
            self.stop()
            raise

    def _default_conf_holder(self) -> Path | None:
        """The config another live cluster has linked at CONFIGLESS_LINK, or None when it is free
        (absent, ours, or left behind by a harness whose slurmctld is gone)."""
        if not (CONFIGLESS_LINK.is_symlink() or CONFIGLESS_LINK.exists()):
            return None
        if not CONFIGLESS_LINK.is_symlink():
            return CONFIGLESS_LINK  # a real file: some other SLURM's cache, never ours to remove
        target = Path(os.readlink(CONFIGLESS_LINK))
        if target == self.conf or LocalSlurm(target.parent.parent).running()["slurmctld"] is None:
            return None
        return target

    def _claim_default_conf(self, wait_s: float) -> None:
        if SITE_CONF.exists():
            raise SlurmHarnessError(
                f"{SITE_CONF} exists (a site SLURM?): jobs' nested srun would read it instead of "
                "the test cluster's config; run the SLURM tests on a machine without one"
            )
        # Another harness (a concurrent test run) holds the link: wait for it to stop.
        deadline = time.monotonic() + wait_s
        while (holder := self._default_conf_holder()) is not None:
            if time.monotonic() > deadline:
                raise SlurmHarnessError(f"{CONFIGLESS_LINK} is in use ({holder}): another SLURM runs here")
            time.sleep(1)
        if CONFIGLESS_LINK.is_symlink():
            CONFIGLESS_LINK.unlink()
        CONFIGLESS_LINK.parent.mkdir(parents=True, exist_ok=True)
        CONFIGLESS_LINK.symlink_to(self.conf)

    def _release_default_conf(self) -> None:
        if CONFIGLESS_LINK.is_symlink() and Path(os.readlink(CONFIGLESS_LINK)) == self.conf:
            CONFIGLESS_LINK.unlink()

    def node_state(self) -> str:
        proc = self._run(["sinfo", "-h", "-N", "-o", "%T"], check=False)
        return proc.stdout.strip() if proc.returncode == 0 else ""

    def is_idle(self) -> bool:
        return self.node_state() == "idle"

    def _wait(self, cond, timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if cond():
                return
            time.sleep(0.25)
        raise SlurmHarnessError(f"timed out after {timeout_s:.0f}s waiting for {what}; {self.diagnostics()}")

    def stop(self, grace_s: float = 3.0) -> None:
        """Stop the daemons this harness started (by their pid files only), newest first, then end
        every process its jobs started (SIGTERM, SIGKILL after ``grace_s``): slurmstepd and its
        tasks do not die with slurmd, and a job step left running would outlive the cluster."""
        # A daemon that has created its pid file but not yet written it (a start that failed
        # early) is still found: give it a moment.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(
            pf.exists() and read_pid(pf) is None for pf in (self.ctld_pidfile, self.slurmd_pidfile)
        ):
            time.sleep(0.1)
        daemons = self.running()
        # Before slurmd goes: its children are found through it while it lives.
        jobs = self._job_processes(roots=tuple(p for p in (daemons["slurmd"],) if p is not None))
        for name, pid in reversed(list(daemons.items())):
            if pid is None:
                continue
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 10
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if pid_alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        try:
            # With the daemons gone no job starts again; end what the jobs left (the config link
            # still held, so a SLURM_CONF naming it counts as ours).
            self._end_processes(jobs, grace_s)
        finally:
            self._release_default_conf()
            if self.munge_dir_record.exists() and self.running()["munged"] is None:
                shutil.rmtree(self.munge_dir, ignore_errors=True)
                self.munge_dir_record.unlink()

    def _job_processes(self, roots: tuple[int, ...] = (), job_id: str | None = None) -> dict[int, ProcInfo]:
        table = process_table()
        return {pid: table[pid] for pid in job_process_tree(table, self.conf, roots, job_id)}

    def job_processes(self, job_id: str | None = None) -> list[ProcInfo]:
        """Live processes started by this cluster's jobs (slurmstepds included), or by one job."""
        return sorted(self._job_processes(job_id=job_id).values(), key=lambda p: p.pid)

    def _end_processes(self, known: dict[int, ProcInfo], grace_s: float, timeout_s: float = 15.0) -> None:
        """SIGTERM the job processes (``known`` plus any found by a fresh scan, each round: a dying
        job may still fork), SIGKILL what is left after ``grace_s``, until none is alive."""
        known = dict(known)
        termed: set[int] = set()
        t0 = time.monotonic()
        while True:
            table = process_table()
            for pid in job_process_tree(table, self.conf):
                known.setdefault(pid, table[pid])
            # the same process still (not a reused pid) and not a zombie
            alive = [pid for pid, p in known.items() if pid in table and table[pid].start == p.start]
            if not alive:
                return
            elapsed = time.monotonic() - t0
            if elapsed > timeout_s:
                raise SlurmHarnessError(
                    "job processes survived SIGKILL: "
                    + ", ".join(f"{pid} ({known[pid].comm})" for pid in sorted(alive))
                )
            # slurmstepd and srun outlast SIGTERM (they try to reach the gone daemons): once only
            # they are left, the jobs' own processes have ended and there is no grace to wait out
            kill_now = elapsed >= grace_s or all(known[pid].comm in SLURM_TOOLS for pid in alive)
            for pid in alive:
                if kill_now or pid not in termed:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL if kill_now else signal.SIGTERM)
                    termed.add(pid)
            time.sleep(0.1)

    def running(self) -> dict[str, int | None]:
        """Live daemons of this harness by name (munged, slurmctld, slurmd), from its pid files."""
        out = {}
        munge_pid = self.munge_pidfile if self.munge_dir_record.exists() else None
        for name, pf in (("munged", munge_pid), ("slurmctld", self.ctld_pidfile), ("slurmd", self.slurmd_pidfile)):
            pid = read_pid(pf) if pf is not None else None
            # A stale pid file may name a reused pid: only a live process of that name counts.
            out[name] = pid if pid is not None and pid_alive(pid) and process_name(pid) == name else None
        return out

    def diagnostics(self) -> str:
        tails = []
        logs = [self.root / "log" / "slurmctld.log", self.root / "log" / "slurmd.log"]
        if self.munge_dir_record.exists():
            logs.append(self.munge_dir / "munged.log")
        for f in logs:
            if f.exists():
                tails.append(f"--- {f.name}:\n" + "\n".join(f.read_text(errors="replace").splitlines()[-15:]))
        return "daemons " + str(self.running()) + "\n" + "\n".join(tails)

    def __enter__(self) -> "LocalSlurm":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["start", "stop", "status"])
    ap.add_argument("dir", type=Path, help="directory holding the cluster's config, state and logs")
    ap.add_argument("--gpus", type=int, default=0, help="fake GPU GRES to declare (default 0)")
    ap.add_argument("--cpus", type=int, default=None, help="CPUs to declare (default: the real count)")
    args = ap.parse_args(argv)
    cluster = LocalSlurm(args.dir, gpus=args.gpus, cpus=args.cpus)
    if args.action == "start":
        try:
            cluster.start()
        except SlurmHarnessError as e:
            cluster.stop()
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(f"export SLURM_CONF={cluster.conf}")
    elif args.action == "stop":
        cluster.stop()
    else:
        print(cluster.diagnostics())
        return 0 if all(cluster.running().values()) else 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
