"""Targets a user can find: `python -m xling.targets` lists every named target of the config with
what it builds and the jobs `snakemake -n <target>` plans; a misspelt target name is answered
with the closest real ones before Snakemake's generic "No rule to produce"."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from xling.config import REPO
from xling.targets import format_targets, list_targets, suggestions, unknown_target_message

NAMES = ["all", "liu2020", "table1_row_default", "table1_row_sep_emb", "table1_row_sep_emb_l1_3",
         "table1_row_sep_emb_l1_6", "table1_pair_en_fr", "wu2020_figure4", "wu2020_figure6", "wu2020_figure7"]


def test_the_closest_names_and_the_family_of_a_misspelt_target():
    close, pattern, parts = suggestions("table1_row_sep_embb", NAMES)
    assert close[0] == "table1_row_sep_emb" and pattern == "table1_row_<setting>"
    assert parts == ["default", "sep_emb", "sep_emb_l1_3", "sep_emb_l1_6"]
    close, pattern, parts = suggestions("wu2020_figure9", NAMES)
    assert pattern == "wu2020_figure<N>" and parts == ["4", "6", "7"] and set(close) <= set(NAMES)
    assert suggestions("liu2021", NAMES)[0] == ["liu2020"]
    assert suggestions("xyzzy", NAMES) == ([], None, [])
    msg = unknown_target_message("table1_pair_en_ru", NAMES)
    assert "no target 'table1_pair_en_ru'" in msg and "table1_pair_<src>_<tgt> here: en_fr." in msg
    assert "make targets" in msg


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
           "-n", "--cores", "1", "--configfile", str(REPO / "config" / "demo.yaml"), "--", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_a_misspelt_target_gets_the_closest_names_not_snakemakes_generic_error(tmp_path):
    for wrong, right in (("table1_row_sep_embb", "table1_row_sep_emb"), ("wu2020_figure9", "wu2020_figure8")):
        proc = snakemake(tmp_path, wrong)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 1, out[-2000:]
        assert f"Error: no target {wrong!r} in this workflow and config. Closest: {right}" in out
        assert "No rule to produce" not in out and "Traceback" not in out and 'File "' not in out
    assert not (tmp_path / "results").exists()


def test_every_named_target_is_listed_with_the_jobs_its_dry_run_plans(tmp_path):
    targets, config = list_targets([REPO / "config" / "demo.yaml"], REPO / "Snakefile", tmp_path)
    by_name = {t.name: t for t in targets}
    assert config["run_name"] == "demo"
    named = {"all", "liu2020", "report", "bundle", "table1_pair_en_fr", "section5_external",
             *(f"table1_row_{s}" for s in config["settings"]), *(f"wu2020_figure{n}" for n in "45678")}
    assert named <= set(by_name) and {by_name[n].section for n in named} == {"papers", "ablations"}
    assert "table1_pair_en_ru" not in by_name  # the demo trains en-fr only
    # each count is the dry run's own total for that target
    for name in ("table1_row_sep_emb", "wu2020_figure6"):
        proc = snakemake(tmp_path, name)
        assert proc.returncode == 0, proc.stderr[-2000:]
        total = int(re.search(r"^total\s+(\d+)$", proc.stdout, re.M).group(1))
        assert by_name[name].jobs == by_name[name].planned == total
    assert by_name["all"].jobs > by_name["table1_row_sep_emb"].jobs > 0
    assert by_name["section5_external"].jobs == 1  # the demo names no external checkpoint: the target alone
    text = format_targets(targets)
    lines = {line.split()[0]: line for line in text.splitlines() if line.startswith("  ")}
    assert set(lines) == named  # one line each; the single steps only with steps=True
    assert "results/demo/report/rows/sep_emb.md" in lines["table1_row_sep_emb"]
    assert f"{by_name['all'].jobs} jobs" in lines["all"]
    assert len(format_targets(targets, steps=True).splitlines()) > len(text.splitlines())
