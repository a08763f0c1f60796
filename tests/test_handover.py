"""Moving an unfinished run to another checkout (xling.handover): a toy workflow run halfway,
packed, unpacked into a fresh clone, and planned there as it was planned before the pack."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from xling.errors import InputError
from xling.handover import (
    PlannedJob,
    compare_plans,
    dry_run,
    main,
    needed_paths,
    pack,
    parse_dry_run,
    read_manifest,
    unpack,
)

pytestmark = pytest.mark.slow  # the tests run Snakemake on a toy workflow (a few seconds a call)

# A model (a big checkpoint beside its done.json) with one consumer that reads its folder, data for
# a second job, and a report that reads the model's done.json alone (as the compute ledger does):
# every step a script, so that a fresh checkout's new script times would rerun them.
SNAKEFILE = """
rule all:
    input: "results/toy/report.txt"

rule model:
    output: "results/toy/model/done.json", "results/toy/model/checkpoint.bin"
    script: "scripts/step.py"

rule consumer:
    input: "results/toy/model/done.json"
    output: "results/toy/consumer.txt"
    script: "scripts/step.py"

rule data:
    output: "results/toy/data.txt"
    script: "scripts/step.py"

rule late:
    input: "results/toy/data.txt"
    output: "results/toy/late.txt"
    script: "scripts/step.py"

rule report:
    input: "results/toy/consumer.txt", "results/toy/late.txt", "results/toy/model/done.json"
    output: "results/toy/report.txt"
    script: "scripts/step.py"
"""
STEP = """
from pathlib import Path
for out in snakemake.output:
    Path(out).write_bytes(b"x" * (200_000 if out.endswith(".bin") else 10))
"""
DRY_RUN = """Building DAG of jobs...
Job stats:
job      count
-----  -------
all          1
total        1

[Tue Dec  1 20:22:16 2026]
localrule late:
    input: results/toy/data.txt
    output: results/toy/late.txt
    jobid: 2
    reason: Missing output files: results/toy/late.txt
    resources: tmpdir=/tmp

rule report:
    input: results/toy/consumer.txt, results/toy/late.txt
    output: results/toy/report.txt
    jobid: 1

localrule all:
    input: results/toy/report.txt
    jobid: 0
Job stats:
"""


def test_the_dry_run_text_is_read_job_by_job():
    jobs = parse_dry_run(DRY_RUN)
    assert [j.rule for j in jobs] == ["late", "report", "all"]
    assert jobs[1].inputs == ("results/toy/consumer.txt", "results/toy/late.txt")
    assert jobs[1].outputs == ("results/toy/report.txt",)
    assert jobs[2].outputs == ()


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


# the run's command; the fixture's first run named two of its files instead of all
CMD = [sys.executable, "-m", "snakemake", "--cores", "1", "all"]


def _toy_run(tmp_path: Path, *made: str) -> Path:
    """A checkout of the toy workflow (a git repository) whose run made ``made`` and their inputs."""
    src = tmp_path / "src"
    (src / "scripts").mkdir(parents=True)
    (src / "Snakefile").write_text(SNAKEFILE)
    (src / "scripts" / "step.py").write_text(STEP)
    _git(src, "init", "-q")
    _git(src, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "toy")
    subprocess.run([*CMD[:-1], *made], cwd=src, check=True, capture_output=True)
    return src


@pytest.fixture(scope="module")
def packed(tmp_path_factory) -> tuple[Path, Path, dict]:
    """A run that made the model, its consumer and the data (late and report are left), packed:
    its checkout, the archive and the manifest. Each test unpacks into a clone of its own."""
    tmp = tmp_path_factory.mktemp("halfway")
    src = _toy_run(tmp, "results/toy/consumer.txt", "results/toy/data.txt")
    archive = tmp / "toy.tar.gz"
    return src, archive, pack(archive, "toy", CMD, src)


def _fresh_clone(src: Path, dst: Path) -> None:
    _git(dst.parent, "clone", "-q", str(src), dst.name)
    # a checkout made later: every tracked file newer than the run's outputs
    later = time.time() + 60
    for name in ("Snakefile", "scripts/step.py"):
        os.utime(dst / name, (later, later))


def test_a_packed_run_resumes_in_a_fresh_clone_with_the_same_plan(packed, tmp_path: Path):
    halfway, archive, manifest = packed
    assert sorted(manifest["planned"]) == ["results/toy/late.txt", "results/toy/report.txt"]
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
    # what the rest reads is carried, the checkpoint whose consumer has run is not
    assert {"results/toy/data.txt", "results/toy/consumer.txt", "results/toy/model/done.json"} <= names
    assert "results/toy/model/checkpoint.bin" not in names

    dst = tmp_path / "dst"
    _fresh_clone(halfway, dst)
    assert {out for job in dry_run(CMD, dst) for out in job.outputs} >= {"results/toy/model/done.json"}
    _, changed = unpack(archive, dst)
    assert changed == []
    assert compare_plans(manifest["planned"], dry_run(CMD, dst)) == ([], [])
    subprocess.run(CMD, cwd=dst, check=True, capture_output=True)
    assert (dst / "results/toy/report.txt").is_file()
    assert not (dst / "results/toy/model/checkpoint.bin").exists()  # never remade


def test_without_the_scripts_times_the_clone_would_rerun_the_finished_part(packed, tmp_path: Path):
    halfway, archive, manifest = packed
    dst = tmp_path / "dst"
    _fresh_clone(halfway, dst)
    unpack(archive, dst)
    later = time.time() + 120
    os.utime(dst / "scripts" / "step.py", (later, later))  # as a checkout after the pack leaves it
    extra, _ = compare_plans(manifest["planned"], dry_run(CMD, dst))
    assert "results/toy/consumer.txt" in extra and "results/toy/model/done.json" in extra


def test_a_changed_script_keeps_its_time_and_is_named(packed, tmp_path: Path):
    halfway, archive, _ = packed
    dst = tmp_path / "dst"
    _fresh_clone(halfway, dst)
    (dst / "scripts" / "step.py").write_text(STEP + "# changed\n")
    _, changed = unpack(archive, dst)
    assert changed == ["scripts/step.py"]


def test_unpacking_over_a_run_or_a_non_archive_is_refused(packed, tmp_path: Path):
    halfway, archive, _ = packed
    with pytest.raises(SystemExit, match="results/toy exists"):
        unpack(archive, halfway)
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(archive.read_bytes()[:100])
    with pytest.raises(InputError, match="bad.tar.gz: expected a handover archive"):
        read_manifest(bad)
    assert json.loads(json.dumps(read_manifest(archive)))["run"] == "toy"


def test_a_model_whose_consumer_is_left_travels_whole(tmp_path: Path):
    src = _toy_run(tmp_path, "results/toy/model/done.json")
    archive = tmp_path / "toy.tar.gz"
    manifest = pack(archive, "toy", CMD, src, folder_readers={"consumer": ("done.json",)})
    assert "results/toy/model" in manifest["carried"]
    with tarfile.open(archive) as tar:
        assert "results/toy/model/checkpoint.bin" in tar.getnames()  # read beside the done.json


def test_the_command_line_packs_and_unpacks_with_the_plan_checked(packed, tmp_path: Path, monkeypatch, capsys):
    halfway, archive = packed[0], tmp_path / "toy.tar.gz"
    monkeypatch.chdir(halfway)
    # the run's command after the first --, a -- of its own inside it
    assert main(["pack", str(archive), "--run", "toy", "--", *CMD[:-1], "--", "all"]) == 0
    assert "3 jobs left" in capsys.readouterr().out
    dst = tmp_path / "dst"
    _fresh_clone(halfway, dst)
    monkeypatch.chdir(dst)
    assert main(["unpack", str(archive)]) == 0
    assert "the plan is the pack's: 3 jobs" in capsys.readouterr().out
    (dst / "results/toy/data.txt").unlink()  # an archive that lacks a file the rest reads
    assert main(["unpack", str(archive), "--force"]) == 0  # laid again: the file is back
    (dst / "results/toy/consumer.txt").unlink()
    monkeypatch.setattr("xling.handover.unpack", lambda *a, **k: (read_manifest(archive), []))
    assert main(["unpack", str(archive), "--force"]) == 1
    assert "planned now, not at the pack: results/toy/consumer.txt" in capsys.readouterr().out


def test_a_pretraining_left_to_run_carries_the_data_beside_its_dictionary(tmp_path: Path):
    # the pipeline's pretraining declares bin/<setting>/<pair>/dict.txt and reads the binarised
    # shards beside it (a resumed demo-full failed on a missing en/valid.bin without them)
    data = tmp_path / "results/toy/bin/default/en-fr"
    (data / "en").mkdir(parents=True)
    (data / "dict.txt").write_text("a 1\n")
    (data / "en" / "valid.bin").write_bytes(b"x")
    plan = [PlannedJob("pretrain", ("results/toy/bin/default/en-fr/dict.txt",), ("results/toy/m/done.json",)),
            PlannedJob("finetune_grid_ner", ("results/toy/bin/default/en-fr/dict.txt",), ("results/toy/ner.json",))]
    assert needed_paths(plan, "toy", tmp_path) == ["results/toy/bin/default/en-fr"]
    # a fine-tuning reads the dictionary alone
    assert needed_paths(plan[1:], "toy", tmp_path) == ["results/toy/bin/default/en-fr/dict.txt"]


def test_any_reader_of_a_bpe_manifest_carries_the_codes_beside_it(tmp_path: Path):
    # bpe.json names its codes files by their names in its folder (a resumed fine-tuning failed on
    # a missing codes.en without them)
    bpe = tmp_path / "results/toy/bpe/no_anchors/en-fr"
    bpe.mkdir(parents=True)
    (bpe / "bpe.json").write_text('{"codes": {"en": "codes.en"}}')
    (bpe / "codes.en").write_text("a b\n")
    manifest = "results/toy/bpe/no_anchors/en-fr/bpe.json"
    plan = [PlannedJob("finetune_grid_parsing", (manifest,), ("results/toy/p.json",))]
    assert needed_paths(plan, "toy", tmp_path) == ["results/toy/bpe/no_anchors/en-fr"]


def test_a_folder_reader_not_written_rule_equals_file_is_refused(capsys):
    with pytest.raises(SystemExit):
        main(["pack", "x.tar.gz", "--run", "toy", "--folder-readers", "shared_space", "--", "snakemake"])
    assert "expected RULE=FILE" in capsys.readouterr().err
