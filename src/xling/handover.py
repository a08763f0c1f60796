"""Move an unfinished run to another checkout (``python -m xling.handover drain|pack|unpack``).

A long run (``make demo-full``) that has to stop before its end resumes with the same command
only where its files are. To resume it in another checkout (another machine, a fresh clone, a
cluster's scratch space), ``pack`` writes one archive with what the rest of the run reads and what
Snakemake needs to see the finished part as finished, and ``unpack`` puts it back:

- every input of the jobs a dry run still plans, and every input of the targets; where a job of a
  folder-reading rule reads the file that stands for its folder, the whole folder (``shared_space``
  reads the interval checkpoints beside the ``done.json`` it declares; a pretraining reads the
  binarised data beside the ``dict.txt`` it declares);
- the run's logs and benchmark files (the compute ledger and the bundle read the latter), and
  Snakemake's metadata records (the params, code and input each finished file was made with);
- each tracked file's modification time with its content's sha256: Snakemake reruns a job whose
  outputs are older than its script, and a fresh checkout makes every script new, so ``unpack``
  gives each tracked file whose content is unchanged the time it had when the run made its files.
  A file whose content changed keeps its new time, and the jobs it concerns run again.

What no planned job reads is left out: the checkpoints of models whose consumers have all run
(tens of MB a model), the downloads and corpora behind finished data. Snakemake does not remake a
missing file that no job it has to run needs, so the resumed run plans the same jobs; ``unpack``
checks that with a dry run against the plan recorded in the archive and says which jobs differ.
``drain`` runs, before a pack, the planned jobs whose inputs all exist except those of the held
rules (pretraining), so that fewer checkpoints have consumers left and the archive stays small.

Snakemake's own archive (``--archive``) packs the code and the inputs of a workflow, not a run's
intermediate state, so it does not do this.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xling.download.fetch import sha256_file
from xling.errors import InputError
from xling.io import atomic_write

MANIFEST = "handover.json"
METADATA = ".snakemake/metadata"
# the rules drain holds back by default: each starts a model that would need carrying
TRAINING_RULES = ("pretrain", "pretrain_mono", "liu_pretrain")
# rule -> the declared inputs that stand for the folder its jobs read ("*": any rule's): shared_space
# reads a pretraining folder's interval checkpoints (workflow/rules/analysis.smk's
# shared_space_inputs), a pretraining the binarised data beside its dictionary
# (workflow/rules/pretrain.smk), every reader of a BPE manifest the codes it names beside it
# (workflow/rules/bpe.smk); the ledger's and the targets' done.json are read alone
FOLDER_READERS: dict[str, tuple[str, ...]] = {
    "shared_space": ("done.json",),
    "pretrain": ("dict.txt",),
    "pretrain_mono": ("dict.txt",),
    "liu_pretrain": ("dict.txt",),
    "*": ("bpe.json",),
}

_RULE = re.compile(r"^(?:local)?(?:rule|checkpoint) (\S+):$")
_FIELD = re.compile(r"^    (\w[\w-]*): (.*)$")


@dataclass(frozen=True)
class PlannedJob:
    """One job of a dry run: its rule and its files as Snakemake printed them."""

    rule: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


def parse_dry_run(text: str) -> list[PlannedJob]:
    """The jobs a ``snakemake -n`` printed (its job blocks: ``rule name:`` then indented fields)."""
    jobs: list[PlannedJob] = []
    rule: str | None = None
    fields: dict[str, str] = {}

    def close() -> None:
        if rule is not None:
            jobs.append(PlannedJob(rule, _paths(fields.get("input", "")), _paths(fields.get("output", ""))))

    for line in text.splitlines():
        head = _RULE.match(line)
        if head:
            close()
            rule, fields = head.group(1), {}
            continue
        field = _FIELD.match(line)
        if rule is not None and field:
            fields[field.group(1)] = field.group(2)
        elif rule is not None and not line.startswith("    "):
            close()
            rule, fields = None, {}
    close()
    return jobs


def _paths(value: str) -> tuple[str, ...]:
    return tuple(p for p in (s.strip() for s in value.split(", ")) if p)


def split_at_dashes(words: list[str]) -> tuple[list[str], list[str]]:
    """The words before the first ``--`` and those after it (all before, none after, if none)."""
    cut = words.index("--") if "--" in words else len(words)
    return words[:cut], words[cut + 1:]


def dry_run(snakemake: list[str], cwd: Path) -> list[PlannedJob]:
    """The jobs ``snakemake`` (a command line, without -n) would run in ``cwd``."""
    options, targets = split_at_dashes(snakemake)
    after = ["--", *targets] if "--" in snakemake else []
    proc = subprocess.run([*options, "-n", *after], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"handover: the dry run failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}"
                         f"{proc.stderr[-2000:]}")
    text = proc.stdout + "\n" + proc.stderr
    jobs = parse_dry_run(text)
    total = re.search(r"^total\s+(\d+)$", text, re.M)  # Snakemake's job stats, when it plans any
    if len(jobs) != (int(total.group(1)) if total else 0):
        raise SystemExit(f"handover: read {len(jobs)} job blocks in the dry run, but its job stats say "
                         f"{total.group(1) if total else 0}: its output has a form this reader does not know")
    return jobs


def run_dirs(run: str) -> tuple[str, str, str]:
    """The run's results, logs and benchmarks folders (workflow/rules/common.smk's R, LOGS, BENCH)."""
    return f"results/{run}", f"logs/{run}", f"benchmarks/{run}"


def needed_paths(plan: list[PlannedJob], run: str, root: Path,
                 folder_readers: dict[str, tuple[str, ...]] = FOLDER_READERS) -> list[str]:
    """The files and folders under the run's folders that the planned jobs read, as paths
    relative to ``root``; the file ``folder_readers`` names for a job's rule brings its folder
    (a pretraining folder whose checkpoints it reads, a data folder beside its dictionary)."""
    prefixes = tuple(d + "/" for d in run_dirs(run))
    produced = {out for job in plan for out in job.outputs}
    found: set[str] = set()
    for job in plan:
        for path in job.inputs:
            if not path.startswith(prefixes) or path in produced:
                continue
            whole = Path(path).name in folder_readers.get(job.rule, ()) + folder_readers.get("*", ())
            where = Path(path).parent if whole else Path(path)
            if not (root / where).exists():
                raise SystemExit(f"handover: {path}, an input of a planned {job.rule} job, does not exist "
                                 f"and no planned job makes it")
            found.add(str(where))
    # a folder already carried carries what is inside it
    kept = sorted(found)
    return [p for p in kept if not any(p.startswith(q + "/") for q in kept if q != p)]


def tracked_files(root: Path) -> dict[str, dict[str, Any]]:
    """Each tracked file of the checkout: its content's sha256 and its modification time."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    out: dict[str, dict[str, Any]] = {}
    for name in filter(None, names.decode().split("\0")):
        path = root / name
        if path.is_file() and not path.is_symlink():
            out[name] = {"sha256": sha256_file(path), "mtime_ns": path.stat().st_mtime_ns}
    return out


def _commit(root: Path) -> str:
    proc = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else "unknown"


def pack(archive: Path, run: str, snakemake: list[str], root: Path,
         folder_readers: dict[str, tuple[str, ...]] = FOLDER_READERS) -> dict[str, Any]:
    """Write ``archive`` (a .tar.gz, through a temporary file) for resuming ``run`` elsewhere."""
    plan = dry_run(snakemake, root)
    if not plan:
        raise SystemExit("handover: the dry run plans nothing: the run has finished, publish its bundle instead")
    paths = needed_paths(plan, run, root, folder_readers)
    paths += [d for d in run_dirs(run)[1:] if (root / d).is_dir()]
    if (root / METADATA).is_dir():
        paths.append(METADATA)
    manifest = {
        "run": run,
        "commit": _commit(root),
        "snakemake": snakemake,
        "planned": sorted(out for job in plan for out in job.outputs),
        "planned_jobs": len(plan),
        "carried": sorted(paths),
        "tracked": tracked_files(root),
    }
    with atomic_write(archive, "wb") as fh, tarfile.open(fileobj=fh, mode="w:gz") as tar:
        data = json.dumps(manifest, indent=1, sort_keys=True).encode()
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        for path in sorted(paths):
            tar.add(root / path, arcname=path)  # a folder with all it holds, times kept
    return manifest


def read_manifest(archive: Path) -> dict[str, Any]:
    """The manifest ``pack`` wrote first in ``archive`` (one error naming the file if it is not one)."""
    try:
        with tarfile.open(archive, "r:gz") as tar:
            member = tar.extractfile(MANIFEST)
            if member is None:
                raise KeyError(MANIFEST)
            return json.loads(member.read())
    except (tarfile.TarError, KeyError, OSError, EOFError, json.JSONDecodeError) as err:
        raise InputError(archive, None, f"a handover archive (a .tar.gz with {MANIFEST} first)",
                         str(err)) from err


def unpack(archive: Path, root: Path, force: bool = False) -> tuple[dict[str, Any], list[str]]:
    """Put ``archive``'s files back under ``root``; returns the manifest and the tracked files whose
    content changed since the pack (their times are left as they are)."""
    manifest = read_manifest(archive)
    results = root / run_dirs(manifest["run"])[0]
    if results.exists() and not force:
        raise SystemExit(f"handover: {results} exists; unpacking would mix two runs' files "
                         "(move it away, or --force to lay the archive's files over it)")
    with tarfile.open(archive, "r:gz") as tar:
        members = [m for m in tar.getmembers() if m.name != MANIFEST]
        for m in members:
            if m.name.startswith("/") or ".." in Path(m.name).parts:
                raise InputError(archive, None, "paths inside the checkout", m.name)
        tar.extractall(root, members=members, filter="tar")
    changed = []
    for name, rec in manifest["tracked"].items():
        path = root / name
        if not path.is_file():
            continue
        if sha256_file(path) == rec["sha256"]:
            os.utime(path, ns=(path.stat().st_atime_ns, int(rec["mtime_ns"])))
        else:
            changed.append(name)
    return manifest, changed


def compare_plans(recorded: list[str], now: list[PlannedJob]) -> tuple[list[str], list[str]]:
    """Outputs planned now and not at the pack, and planned at the pack and not now."""
    planned = {out for job in now for out in job.outputs}
    return sorted(planned - set(recorded)), sorted(set(recorded) - planned)


def drain(snakemake: list[str], root: Path, hold: tuple[str, ...]) -> int:
    """Run the planned jobs whose inputs all exist, except the ``hold`` rules', tier by tier,
    until none is ready; returns how many jobs ran."""
    ran = 0
    while True:
        ready = [job for job in dry_run(snakemake, root) if job.outputs and job.rule not in hold
                 and all((root / p).exists() for p in job.inputs)]
        if not ready:
            return ran
        targets = sorted({out for job in ready for out in job.outputs})
        proc = subprocess.run([*split_at_dashes(snakemake)[0], "--", *targets], cwd=root)
        if proc.returncode != 0:
            raise SystemExit(f"handover: the drain's snakemake failed (exit {proc.returncode})")
        ran += len(ready)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m xling.handover", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack", help="write the archive of an unfinished run; after --, the run's snakemake command")
    p.add_argument("archive", type=Path)
    p.add_argument("--run", required=True, help="the config's run_name (results/<run>/)")
    p.add_argument("--folder-readers", nargs="*", type=_rule_file, metavar="RULE=FILE",
                   default=[(rule, name) for rule, names in FOLDER_READERS.items() for name in names],
                   help="a rule (* for any) whose jobs read the whole folder of the FILE they declare")
    u = sub.add_parser("unpack", help="lay an archive's files into this checkout and check the plan")
    u.add_argument("archive", type=Path)
    u.add_argument("--force", action="store_true")
    u.add_argument("--no-check", action="store_true", help="skip the dry run against the recorded plan")
    d = sub.add_parser("drain", help="run what is ready except training, before a pack; after --, the command")
    d.add_argument("--hold", nargs="*", default=list(TRAINING_RULES))
    words = list(sys.argv[1:] if argv is None else argv)
    # the run's snakemake command follows the first --, untouched (it may hold options and a -- of its own)
    own, snakemake = split_at_dashes(words)
    args = ap.parse_args(own)
    root = Path.cwd()
    try:
        if args.cmd == "pack":
            manifest = pack(args.archive, args.run, _command(snakemake), root, _readers(args.folder_readers))
            size = args.archive.stat().st_size / 2**20
            print(f"{args.archive}: {size:.1f} MiB, {len(manifest['carried'])} paths, "
                  f"{manifest['planned_jobs']} jobs left (commit {manifest['commit'][:7]})")
        elif args.cmd == "unpack":
            manifest, changed = unpack(args.archive, root, args.force)
            print(f"{args.archive}: {len(manifest['carried'])} paths of run {manifest['run']} "
                  f"(packed at {manifest['commit'][:7]}); tracked files changed since: {len(changed)}")
            for name in changed:
                print(f"  changed: {name}")
            if not args.no_check:
                extra, gone = compare_plans(manifest["planned"], dry_run(manifest["snakemake"], root))
                for out in extra:
                    print(f"  planned now, not at the pack: {out}")
                for out in gone:
                    print(f"  planned at the pack, not now: {out}")
                if extra or gone:
                    print(f"handover: the plan differs from the pack's ({len(extra)} more, {len(gone)} fewer "
                          "outputs): a changed file above, or a file the archive lacks", file=sys.stderr)
                    return 1
                print(f"the plan is the pack's: {manifest['planned_jobs']} jobs; resume with the run's command")
        else:
            print(f"{drain(_command(snakemake), root, tuple(args.hold))} jobs ran")
    except InputError as err:
        print(f"handover: {err}", file=sys.stderr)
        return 2
    return 0


def _rule_file(word: str) -> tuple[str, str]:
    rule, sep, name = word.partition("=")
    if not (sep and rule and name):
        raise argparse.ArgumentTypeError(f"{word!r}: expected RULE=FILE (for example shared_space=done.json)")
    return rule, name


def _readers(pairs: list[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for rule, name in pairs:
        out[rule] = out.get(rule, ()) + (name,)
    return out


def _command(words: list[str]) -> list[str]:
    if not words:
        raise SystemExit("handover: give the run's snakemake command after --")
    return words


if __name__ == "__main__":
    sys.exit(main())
