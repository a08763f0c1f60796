"""The demo's slice: the repository's Snakefile on the tiny testbed, reduced to one (setting, pair,
task) and Figures 4-6 of that pair, run once per test session and shared by the end-to-end tests
(tests/conftest.py's ``slice_run``, ``slice_report_run`` and ``slice_copy``).

The shared run is read-only: a test that only reads its outputs or dry-runs on it uses it as it is;
a test that runs jobs on it works on a copy (``link_copy``) whose result files are hard links to
the shared run's (Snakemake replaces an output, it never rewrites one in place) and whose
``.snakemake/`` is a real copy (every run writes its metadata). ``Snapshot`` checks at the end of
the session that no test changed the shared run after all.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from xling.config import REPO

SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def snakemake(workdir: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    cmd = [*SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), *args]
    # no PYTHONPATH: the workflow puts the checkout's src/ on the path itself (workflow/scripts/_setup.py)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def job_counts(output: str) -> dict[str, int]:
    """Rule -> jobs, from the "Job stats" table of a dry run's output."""
    table = output.split("Job stats:", 1)[1]
    counts = {}
    for line in table.splitlines()[3:]:
        m = re.match(r"^(\S+)\s+(\d+)$", line.strip())
        if not m:
            break
        counts[m.group(1)] = int(m.group(2))
    return counts


# The demo on the tiny testbed, reduced to what one (setting, pair, task) job needs
SLICE_CONFIG = {
    "run_name": "slice",
    # tiny, but with enough NER sentences for a tagger to learn the entities
    "testbed": {"scale": "tiny", "seed": 7, "wiki_sentences": 1500, "ner_train": 600, "ner_dev": 100,
                "ner_test": 100},
    "download": {"mirror": "results/slice/testbed/mirror"},
    "licensed": {"conll2003_en": {"path": "results/slice/testbed/mirror/licensed/conll2003"},
                 "levow_zh": {"path": "results/slice/testbed/mirror/licensed/levow"}},
    "pairs": ["en-fr"],
    "monolingual": {"languages": ["en", "fr"]},
    "analysis": {"align_sentences": 100, "transfer": {"tasks": ["ner"], "layers": [2], "rows": 100}},
    "preprocess": {"valid_lines": 50, "test_lines": 50, "shards": 2},
    "pretrain": {"batch_size_per_gpu": 32, "streams_per_epoch_per_gpu": 40 * 32, "max_epoch": 1,
                 "warmup_updates": 20},
    "finetune": {"tasks": ["ner"], "ner": {"epochs": 3}},
}

SLICE_TARGETS = ["results/slice/finetune/default/en-fr/seed1/ner/bs32_lr0.0005/seed1/result.json",
                 "results/slice/analysis/retrieval/en-fr.json", "results/slice/hf/default/en-fr"]
# Figures 4 and 5 of the slice's pair (built by the slice run; the rerun test leaves them out)
FIGURE_TARGETS = ["results/slice/analysis/words/en-fr.json", "results/slice/analysis/transfer/ner/en-fr/L2.json"]


def slice_configs(workdir: Path) -> list[str]:
    """The config files of the slice run in ``workdir``: the demo's, then the slice's overlay."""
    return [str(REPO / "config" / "demo.yaml"), str(workdir / "slice.yaml")]


def run_slice(workdir: Path) -> list[str]:
    """testbed -> download (mirror) -> extract/tokenise/split -> BPE -> binarise -> fairseq MLM ->
    NER fine-tuning, Figure 6's job, the transformers export of the bilingual model and Figures 4
    and 5 of the pair, in ``workdir``; returns its config files. Raises with Snakemake's output
    when the run fails."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "slice.yaml").write_text(yaml.safe_dump(SLICE_CONFIG))
    configs = slice_configs(workdir)
    proc = snakemake(workdir, "--cores", "2", "--configfile", *configs, "--", *SLICE_TARGETS, *FIGURE_TARGETS,
                     timeout=1200)
    if proc.returncode != 0:
        raise RuntimeError(f"the slice run failed in {workdir}:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return configs


# The report stage on top of the slice (`bundle report`): every Table 1 row of the demo pretrained
# and fine-tuned on the slice's pair, Section 5's jobs, the tables and figures, the bundle; without
# Liu et al.; the slice's 15-way file has 100 rows
REPORT_OVERLAY = {"liu2020": {"languages": []}, "analysis": {"cka_sentences": 100, "shared_space": {"rows": 100}}}


def run_report(workdir: Path) -> list[str]:
    """Runs `bundle report` in ``workdir``, a finished slice; returns its config files (the slice's
    and the report's overlay). Raises with Snakemake's output when the run fails."""
    (workdir / "report.yaml").write_text(yaml.safe_dump(REPORT_OVERLAY))
    configs = report_configs(workdir)
    proc = snakemake(workdir, "--cores", "2", "--configfile", *configs, "--", "bundle", "report", timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"`bundle report` failed in {workdir}:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return configs


def report_configs(workdir: Path) -> list[str]:
    return [*slice_configs(workdir), str(workdir / "report.yaml")]


# Snakemake's own bookkeeping of a working directory, which a copy does not take and a test may
# change: the lock of a running Snakemake, markers of jobs under way, the logs of earlier
# invocations, the cache of file states a dry run leaves
NOT_COPIED = (".snakemake/locks", ".snakemake/incomplete", ".snakemake/log", ".snakemake/iocache")


def link_copy(src: Path, dst: Path) -> None:
    """``dst``: the finished run in ``src`` as a working directory of its own, in a fraction of a
    second and (almost) no disk: every file a hard link to the original (``cp -al``), except those
    under ``.snakemake/`` and ``benchmarks/``, which are copied (Snakemake rewrites its metadata
    files and a rerun job's benchmark file in place).
    Modification times are kept, so Snakemake sees the copy as finished as the original."""

    def skip(*paths: str):
        def ignore(directory: str, names: list[str]) -> set[str]:
            rel = Path(directory).relative_to(src)
            return {n for n in names if (rel / n).as_posix() in paths}

        return ignore

    def link(a: str, b: str) -> None:
        # Snakemake writes a rerun job's benchmark file in place: a link would change the original
        if Path(a).relative_to(src).parts[0] == "benchmarks":
            shutil.copy2(a, b)
        else:
            os.link(a, b)

    shutil.copytree(src, dst, symlinks=True, copy_function=link, ignore=skip(".snakemake"))
    if (src / ".snakemake").is_dir():
        shutil.copytree(src / ".snakemake", dst / ".snakemake", symlinks=True, ignore=skip(*NOT_COPIED))


class Snapshot:
    """Every file of a working directory with its inode, size and modification time (outside
    Snakemake's own bookkeeping, ``NOT_COPIED``): ``changes()`` names the files added, removed,
    replaced or rewritten since."""

    def __init__(self, root: Path):
        self.root = root
        self.files = self._scan()

    def _scan(self) -> dict[str, tuple[int, int, int]]:
        out = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            rel = Path(dirpath).relative_to(self.root)
            dirnames[:] = [d for d in dirnames if (rel / d).as_posix() not in NOT_COPIED]
            for name in filenames:
                st = os.lstat(os.path.join(dirpath, name))
                out[(rel / name).as_posix()] = (st.st_ino, st.st_size, st.st_mtime_ns)
        return out

    def changes(self) -> list[str]:
        now = self._scan()
        return sorted(name for name in self.files.keys() | now.keys() if self.files.get(name) != now.get(name))
