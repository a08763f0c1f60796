"""The docs' commands as a user copies them: every shell block of README.md and docs/*.md runs as
written from a checkout (each `snakemake` as a dry run, `snakemake -n <same arguments>`), in a
directory that mirrors the repository, after the quick start; the blocks that cannot run here say
why (SKIPPED). The YAML examples validate against the schema and pass the planner's checks; the
outputs the docs print (the budget tables, the planning errors) are what the code prints; every
`make <target>` and `python -m <module>` the text names exists."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from support import repo_module
from xling import config as xcfg
from xling.cluster import budget
from xling.config import REPO
from xling.errors import ConfigError

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    lang: str
    text: str

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def code_blocks() -> list[Block]:
    out = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
            out.append(Block(path, text[: m.start()].count("\n") + 1, m.group(1), m.group(2)))
    return out


SHELL = [b for b in code_blocks() if b.lang in ("bash", "sh", "shell")]

# Shell blocks the test does not run, by a string they contain, and why
SKIPPED = {
    "make demo     #": "the quick start itself (make demo: 17 minutes of training; make test: this suite)",
    "make wheelhouse": "needs a package index and a GPU node to copy to (tests/test_wheelhouse.py builds one)",
    "scripts/slurm_cluster.sh start": "needs root and SLURM's daemons (the `slurm`-marked tests run this harness)",
    "--report results/demo/report.html": "needs a finished `make demo`: Snakemake's report reads its outputs",
    "probes/regime_xlm.yaml": "the regime probe itself: eight models and their fine-tunings, hours on 2 cores "
                              "(tests/test_probe_regime.py checks what it reads and writes)",
    "probes/regime_length_width.yaml": "the length/width probe: 15 models over three seeds and their fine-tunings, "
                                       "hours on 2 cores (tests/test_probe_regime.py checks what it reads and writes)",
    "bench/bench_demo_jobs.py": "times make demo-full's jobs alone and two at once, minutes on an idle machine "
                                "after demo-full's upstream (tests/test_bench_demo_jobs.py checks how it reads "
                                "a job's log)",
    "huggingface-cli download": "fetches public checkpoints from the Hugging Face hub (no network here; "
                                "tests/test_analysis_external.py plans the rows on local stand-ins)",
    "make demo-real      #": "the real-language study: hours on 2 cores, and its mirror fetches FreeDict's packages "
                             "from deb.debian.org (tests/test_workflow_real_plan.py plans it)",
    "xling.handover pack": "packs a run stopped halfway (make demo-full's is hours of training); "
                           "tests/test_handover.py packs, unpacks and plans a toy workflow stopped halfway",
    "gpu_node_wheels.sh demo": "downloads make demo's ~33 MiB of wheels for the GPU machine, minutes (the same "
                               "script's tests group runs here: docs/benchmarks.md's block above it)",
}
# YAML examples checked by a test of their own, and why
YAML_ELSEWHERE = {"external_models:": "its directories are the reader's copies of public checkpoints: "
                                      "tests/test_analysis_external.py validates and plans it with stand-ins "
                                      "under the same names"}
# Shell blocks run for real (seconds, and a dry run cannot show them working), and what they need
# in the working directory first
RUN = {"--config bundle=bundle.tar.gz --cores 2 report": "the published demo bundle as bundle.tar.gz"}
# Commands a test of their own runs for real, so a block's run here leaves them out, and which test
CHECKED_ELSEWHERE = {"make check-bundle": "tests/test_report_rebuild.py rebuilds each published bundle's "
                                          "report and compares it byte for byte (the same code, ~12 s each)"}
# Placeholders the docs write for a value the reader picks
PLACEHOLDERS = {"<hp_id>": lambda cfg: xcfg.hp_id(xcfg.grid_cells(cfg["finetune"]["xnli"])[0])}
# Python blocks that are excerpts, not programs
EXCERPTS = {
    "class SubwordTokenizer:": "docs/ARCHITECTURE.md's outline of the package's interfaces",
    'threads: rule_threads(config, "pretrain")': "two directives of a rule, as the rule files write them",
}


def skip_reason(block: Block) -> str | None:
    return next((why for key, why in SKIPPED.items() if key in block.text), None)


def test_the_blocks_left_out_are_few_and_each_says_why():
    skipped = [b for b in SHELL if skip_reason(b)]
    assert len(SHELL) >= 10 and len(skipped) == len(SKIPPED)  # one block each
    for key in (*SKIPPED, *RUN, *EXCERPTS, *YAML_ELSEWHERE, *CHECKED_ELSEWHERE):  # no entry outlives its block
        assert any(key in b.text for b in code_blocks()), f"no block holds {key!r} any more"


# Left out of the mirror: the runs' outputs, the checkout's venv and git, and the folders the GPU
# machine's preparation writes (docs/benchmarks.md's `scripts/gpu_node_wheels.sh tests .whl` runs
# here for real: linked, it would rewrite the wheels a developer prepared in the checkout)
PREPARED = (".whl", ".whl-demo", ".anchors")
NOT_MIRRORED = {"results", "logs", "benchmarks", ".snakemake", ".git", ".venv", ".pytest_cache", *PREPARED}


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    """A directory that is the checkout (every top-level entry linked) as a fresh clone has it."""
    root = tmp_path_factory.mktemp("checkout")
    for entry in REPO.iterdir():
        if entry.name not in NOT_MIRRORED:
            (root / entry.name).symlink_to(entry)
    before = _prepared(REPO)
    yield root
    assert _prepared(REPO) == before, "a docs command changed the checkout's .whl or .anchors"


def _prepared(checkout: Path) -> dict[str, int]:
    """The files of the checkout's PREPARED folders with their modification times."""
    return {str(p): p.stat().st_mtime_ns for name in PREPARED for p in sorted((checkout / name).glob("*"))}


def shim(directory: Path, dry: bool) -> Path:
    """A stand-in for the quick start's .venv (`make` targets find it as VENV): its `snakemake` is
    this Python's, dry-running when ``dry``, its `python` this Python, marked installed."""
    (directory / "bin").mkdir(parents=True, exist_ok=True)
    for name, run in (("snakemake", f" -m snakemake {'-n ' if dry else ''}"), ("python", " ")):
        exe = directory / "bin" / name
        exe.write_text(f"#!/bin/sh\nexec {sys.executable}{run}\"$@\"\n")
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    (directory / ".xling-installed").touch()  # scripts/bootstrap.sh: nothing to install
    return directory


def commands(block: Block) -> list[str]:
    """The block's commands, each with its continuation lines; a block with a heredoc is one."""
    paper = xcfg.load(REPO / "config" / "config.yaml")
    script = block.text
    for key, value in PLACEHOLDERS.items():
        script = script.replace(key, value(paper))
    if "<<" in script:
        return [script]
    joined = re.sub(r"\\\n\s*", " ", script)
    return [line for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


_DRY_RUNS: dict[str, subprocess.CompletedProcess] = {}  # a command several pages give is run once


def key(command: str) -> str:
    """A command without its comment and spacing (what it runs)."""
    return command if "<<" in command else shlex.join(shlex.split(command, comments=True))


def run(command: str, cwd: Path, dry: bool) -> subprocess.CompletedProcess:
    if dry and key(command) in _DRY_RUNS:
        return _DRY_RUNS[key(command)]
    venv = shim(cwd.parent / f"venv_{'dry' if dry else 'real'}", dry)
    env = {**os.environ, "PATH": f"{venv / 'bin'}:{Path(sys.executable).parent}:{os.environ['PATH']}",
           "VENV": str(venv)}
    proc = subprocess.run(["bash", "-eo", "pipefail", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=1200)
    if dry:
        _DRY_RUNS[key(command)] = proc
    return proc


@pytest.mark.slow
@pytest.mark.parametrize("block", [b for b in SHELL if not skip_reason(b)], ids=lambda b: b.id)
def test_the_shell_block_runs_as_written(block, mirror, tmp_path):
    real = next((k for k in RUN if k in block.text), None)
    cwd = mirror
    if real:  # a working directory of its own, with what the block expects in it
        cwd = tmp_path / "checkout"
        shutil.copytree(mirror, cwd, symlinks=True)
        for name in ("bundle.tar.gz", "bundle.config.yaml"):
            shutil.copy(REPO / "results-published" / "demo" / name, cwd / name)
    for command in commands(block):
        if any(key(command).startswith(k) for k in CHECKED_ELSEWHERE):
            continue
        proc = run(command, cwd, dry=not real)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, f"{block.id}:\n{command}\n{out[-4000:]}"
        assert "Traceback" not in out, out[-4000:]
        if key(command).startswith("make refit"):  # forced: the config's fine-tuning rules (+ pretrain), no other
            rules = set(re.search(r"^    forced:\n\s+(.*)$", proc.stdout, re.M).group(1).split(", "))
            assert rules and all(r.startswith("finetune") or (r == "pretrain" and "RETRAIN=1" in command)
                                 for r in rules), rules
        if key(command) == "snakemake --profile slurm all":
            # the count the README quotes for `all` on the paper config is this dry run's
            total = int(re.search(r"^total\s+(\d+)$", proc.stdout, re.M).group(1))
            readme = (REPO / "README.md").read_text(encoding="utf-8")
            assert re.search(r"`snakemake -n all` plans (\d+) jobs", readme).group(1) == str(total)
    if real:
        assert (cwd / "report.html").stat().st_size > 0 and (cwd / "results/demo/report/table1.md").is_file()


def heredoc_yaml() -> list[tuple[str, str]]:
    """(block id, text) of every YAML example: ```yaml blocks and YAML heredocs of shell blocks."""
    out = [(b.id, b.text) for b in code_blocks() if b.lang in ("yaml", "yml")]
    for b in SHELL:
        for m in re.finditer(r"<<'?YAML'?\n(.*?)^YAML$", b.text, re.S | re.M):
            out.append((b.id, m.group(1)))
    return out


@pytest.mark.parametrize("where,text", heredoc_yaml(), ids=[w for w, _ in heredoc_yaml()])
def test_every_yaml_example_validates_and_passes_the_planner(where, text, tmp_path):
    elsewhere = next((why for k, why in YAML_ELSEWHERE.items() if k in text), None)
    if elsewhere:
        pytest.skip(elsewhere)
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(text)
    assert isinstance(yaml.safe_load(text), dict), where
    cfg = xcfg.load(REPO / "config" / "config.yaml", overlay)  # the schema, defaults filled in
    budget.check_pretrain_runtime(cfg)


def test_the_budget_tables_the_docs_print_are_the_budgets_output(capsys, monkeypatch):
    """docs/cluster.md's two tables are what the commands it gives print, from the repository root."""
    monkeypatch.chdir(REPO)
    text = (REPO / "docs" / "cluster.md").read_text(encoding="utf-8")
    blocks = {b.text.splitlines()[0]: b.text for b in code_blocks() if b.lang == "" and b.path.name == "cluster.md"}
    assert budget.main([]) == 0
    plan = capsys.readouterr().out
    assert blocks[plan.splitlines()[0]] == plan
    # the measured plan: the command the text gives, with its files
    command = re.search(r"`(python -m xling\.cluster\.budget --rate-from [^`]+)` plans:", text).group(1).split()
    assert budget.main(command[3:]) == 0
    table = capsys.readouterr().out.split("\n\n", 1)[1]
    assert blocks["| stage | jobs | GPUs/job | hours/job | GPU-hours | basis |"] == table


def test_the_readmes_budget_is_what_its_command_writes(monkeypatch):
    """The README's budget section is scripts/budget_readme.py's output for the command its first
    line names (the measured files are named there, relative to the checkout)."""
    monkeypatch.chdir(REPO)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    begin = re.search(r"<!-- budget: generated by (python scripts/budget_readme\.py [^;]+); a test compares -->",
                      readme)
    assert begin, "the README's budget begins with the command that wrote it"
    end = readme.index("<!-- /budget -->") + len("<!-- /budget -->") + 1
    module = repo_module.load("scripts/budget_readme.py")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert module.main(shlex.split(begin.group(1))[2:]) == 0
    assert readme[begin.start():end] == printed.getvalue(), "regenerate: " + begin.group(1)


def test_the_planning_errors_the_docs_print_are_the_planners():
    by_first = {b.text.splitlines()[0]: b for b in code_blocks() if b.lang == ""}
    shown = by_first["Error: invalid configuration:"].text.splitlines()
    paper = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    bad = {**paper, "settings": {**paper["settings"], "default": {**paper["settings"]["default"], "bpe": "jiont"}}}
    with pytest.raises(ConfigError) as err:
        xcfg.validate(bad)
    assert f"Error: {err.value}".splitlines() == shown[:-1]
    assert shown[-1].startswith("  config files, merged in this order: ")  # as the workflow adds it
    shown = by_first["Error: pretraining jobs cannot finish within their runtime:"].text.splitlines()
    cfg = xcfg.load(REPO / "config" / "config.yaml")
    cfg["rule_resources"]["pretrain"]["runtime"] = 3 * 24 * 60  # "here with a 3-day runtime"
    with pytest.raises(ConfigError) as err:
        budget.check_pretrain_runtime(cfg)
    assert f"Error: {err.value}".splitlines()[:2] == shown[:2] and shown[2].strip() == "..."


def test_every_make_target_and_module_the_text_names_exists():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.M))
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for name in re.findall(r"`make ([a-z][\w-]*)[^`]*`", text):
            assert name in targets, f"{path.name}: make {name}"
        for module in re.findall(r"python -m ([\w.]+)", text):
            assert importlib.util.find_spec(module), f"{path.name}: python -m {module}"


PYTHON = [b for b in code_blocks() if b.lang == "python"]


@pytest.mark.parametrize("block", PYTHON, ids=lambda b: b.id)
def test_the_python_blocks_run(block, monkeypatch):
    excerpt = next((why for key, why in EXCERPTS.items() if key in block.text), None)
    if excerpt:
        pytest.skip(f"an excerpt: {excerpt}")
    export = REPO / "results/demo/hf/default/en-fr"
    if "results/demo/hf/" in block.text and not (export / "tokenization_xling.py").is_file():
        pytest.skip("needs a finished `make demo` (its export of the Default model)")
    monkeypatch.chdir(REPO)
    exec(compile(block.text, block.id, "exec"), {})
