"""Bad input to the workflow as a user meets it: one message (the key or file, what was expected,
what to pass), with no traceback of the workflow's code; the licensed-data notice names the
directory to fill and says each reason once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from xling.config import REPO
from xling.download.licensed import unavailable_ner_targets
from xling.report.bundle import write_bundle


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
           "-n", "--cores", "1", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def assert_one_message(proc: subprocess.CompletedProcess) -> str:
    """Status 1, and no line of a traceback: neither Python's nor the one Snakemake prints for an
    exception raised in a workflow file."""
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-3000:]
    assert "Traceback" not in out and 'File "' not in out and ".smk" not in out, out[-3000:]
    assert "WorkflowError" not in out and "Exception" not in out, out[-3000:]
    return out


def test_a_bad_config_is_one_message_naming_the_keys(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("settings:\n  default: {bpe: jiont}\nmodel: {layer: 8}\n")
    out = assert_one_message(snakemake(tmp_path, "--configfile", str(bad), "--", "all"))
    assert "Error: invalid configuration:" in out
    assert "config key 'settings.default.bpe': 'jiont' is not allowed" in out and "unknown key(s) 'layer'" in out
    assert f"config files, merged in this order: {REPO / 'config' / 'config.yaml'}, {bad}" in out
    assert not (tmp_path / "results").exists()


def test_a_bundle_of_another_config_names_the_file_to_pass_and_every_key(tmp_path):
    """A bundle made with another config: refused before any job, with every key that differs (not
    cut short) and the config file shipped beside the archive as the one to pass."""
    archive = tmp_path / "shipped" / "bundle.tar.gz"
    archive.parent.mkdir()
    write_bundle([], archive, {"run_name": "other", "bundle": None}, tmp_path)
    (archive.parent / "bundle.config.yaml").write_text("run_name: other\n")
    out = assert_one_message(snakemake(tmp_path, "--configfile", str(REPO / "config/demo.yaml"),
                                       "--config", f"bundle={archive}", "--", "report"))
    line = next(x for x in out.splitlines() if x.startswith("Error: "))
    assert line.startswith(f"Error: {archive}: expected a bundle made with the config it is used with")
    keys = line.split("keys ", 1)[1].split(" differ", 1)[0].split(", ")
    assert {"run_name", "pairs", "settings", "testbed"} <= set(keys) and "..." not in line
    assert line.endswith(f"Pass the config shipped beside it: --configfile {archive.parent / 'bundle.config.yaml'}")


def test_a_pretraining_job_past_its_runtime_is_one_message(tmp_path):
    short = tmp_path / "short.yaml"
    short.write_text("rule_resources:\n  pretrain: {cpus: 40, mem_mb: 400000, runtime: 2880, gpus: 8}\n")
    out = assert_one_message(snakemake(tmp_path, "--configfile", str(short), "--", "all"))
    assert "Error: pretraining jobs cannot finish within their runtime:" in out and "> runtime 48 h" in out


@pytest.fixture
def levow_config(tmp_path):
    return {
        "pairs": ["en-fr", "en-zh"],
        "finetune": {"tasks": ["ner"], "ner": {"datasets": {"zh": "levow"}}},
        "licensed": {
            "conll2003_en": {"path": None, "files": ["eng.train", "eng.testa"], "how": "Get CoNLL-2003 from clips."},
            "levow_zh": {"path": str(tmp_path / "levow"), "files": ["train.txt", "test.txt"],
                         "how": "Get Levow from SIGHAN."},
        },
    }


def test_the_licensed_data_notice_names_the_directory_and_says_each_reason_once(tmp_path, levow_config):
    (tmp_path / "levow").mkdir()
    (tmp_path / "levow" / "train.txt").write_text("x")
    [(lang, why)] = unavailable_ner_targets(levow_config).items()
    assert lang == "zh" and why.count("(levow)") == 1 and why.count("levow_zh: ") == 1
    assert why.startswith("its data (levow) need the licensed corpora levow_zh, conll2003_en. ")
    # a directory given but incomplete: named, with what it lacks and where the files go
    levow = tmp_path / "levow"
    assert (f"levow_zh: {levow} (licensed.levow_zh.path) lacks test.txt. Get Levow from SIGHAN. "
            f"Put them in {levow}.") in why
    # no directory yet: what to set
    assert ("conll2003_en: licensed.conll2003_en.path is not set. Get CoNLL-2003 from clips. Put eng.train, "
            "eng.testa in a directory and set licensed.conll2003_en.path to it.") in why
    assert "this directory" not in why


def test_the_paper_configs_notice_on_a_dry_run(tmp_path):
    """The paper config without the licensed corpora plans, and says once per pair what to do."""
    proc = snakemake(tmp_path, "--", "table1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [line] = [x for x in (proc.stdout + proc.stderr).splitlines() if "left out of this run" in x]
    assert line.startswith("NER en-zh is left out of this run: its data (levow) need the licensed corpora")
    assert line.count("NER for pair") == 0 and "this directory" not in line
    assert "Put train.txt, test.txt in a directory and set licensed.levow_zh.path to it." in line
