"""A bundle's report rebuilt and compared with the report it carries (xling.report.rebuild), and the
published bundles: intact, carrying their report, and the very tables the docs quote.

The whole rebuild (Snakemake's report from the bundle alone) runs on the slice:
tests/test_workflow.py::test_a_bundle_rebuilds_every_table_and_figure_without_any_upstream_job."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from xling.errors import InputError
from xling.report import rebuild
from xling.report.bundle import check_bundle, shipped_config, write_bundle

REPO = Path(__file__).resolve().parents[1]
CFG = {"run_name": "t", "bundle": None, "model": {"dim": 8}}
RESULT = "results/t/finetune/default/en-fr/seed1/ner/result.json"
REPORT = {"results/t/report/table1.md": "| Model | NER |\n| Default | 12.5 |\n",
          "results/t/report/figure3.csv": "setting,ner\ndefault,12.5\n"}


@pytest.fixture
def made(tmp_path, monkeypatch):
    """A finished run's bundle (one result, its report carried) and its config beside it."""
    monkeypatch.chdir(tmp_path)
    for name, text in {RESULT: '{"tgt_test": 12.5}\n', **REPORT}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    write_bundle([RESULT], "bundle.tar.gz", CFG, tmp_path, report=list(REPORT))
    (tmp_path / "bundle.config.yaml").write_text(yaml.safe_dump(CFG))
    return tmp_path


def rebuilt(workdir: Path, changes: dict[str, str | None]) -> None:
    """``workdir`` as a rebuild leaves it: the carried report, with ``changes`` (None: not written)."""
    for name, text in {**REPORT, **changes}.items():
        if text is not None:
            (workdir / name).parent.mkdir(parents=True, exist_ok=True)
            (workdir / name).write_text(text)


def test_every_carried_file_is_compared_and_each_difference_named(made, tmp_path_factory):
    bundle = rebuild.load_bundle(made / "bundle.tar.gz", made / "bundle.config.yaml")
    same = tmp_path_factory.mktemp("same")
    rebuilt(same, {})
    result = rebuild.compare_report(bundle, same)
    assert result.ok and result.identical == sorted(REPORT)

    other = tmp_path_factory.mktemp("other")
    rebuilt(other, {"results/t/report/table1.md": "| Model | NER |\n| Default | 12.6 |\n",
                    "results/t/report/figure3.csv": None})
    result = rebuild.compare_report(bundle, other)
    assert not result.ok
    assert result.differ == ["results/t/report/table1.md"] and result.missing == ["results/t/report/figure3.csv"]


def test_the_command_says_fail_naming_the_file_and_exits_non_zero(made, monkeypatch, capsys):
    """main() as `make check-bundle` runs it; Snakemake's report replaced by what it would write."""
    outcome = {}

    def fake_rebuild(archive, configfile, workdir, cores):
        rebuilt(workdir, outcome)
        return rebuild.subprocess.CompletedProcess([], 0, "", "")

    monkeypatch.setattr(rebuild, "rebuild", fake_rebuild)
    assert rebuild.main(["bundle.tar.gz"]) == 0
    assert capsys.readouterr().out.startswith("PASS: bundle.tar.gz")

    outcome["results/t/report/figure3.csv"] = "setting,ner\ndefault,12.4\n"
    assert rebuild.main(["bundle.tar.gz", "--workdir", str(made / "kept")]) == 1
    out = capsys.readouterr().out
    assert "results/t/report/figure3.csv: differs from the bundle's" in out
    assert out.splitlines()[-1].startswith("FAIL: bundle.tar.gz") and "1 of 2 report files" in out
    assert (made / "kept/results/t/report/figure3.csv").is_file()  # kept where it was asked for


def test_a_failed_report_run_fails_the_check(made, monkeypatch, capsys):
    monkeypatch.setattr(rebuild, "rebuild",
                        lambda *a: rebuild.subprocess.CompletedProcess([], 1, "", "MissingInputException"))
    assert rebuild.main(["bundle.tar.gz"]) == 1
    assert "FAIL: `snakemake report` from bundle.tar.gz exited with 1" in capsys.readouterr().err


def test_a_bundle_without_its_report_or_config_is_one_clear_error(made, capsys):
    write_bundle([RESULT], "bare.tar.gz", CFG, made)
    with pytest.raises(InputError, match="bare.tar.gz: expected a bundle that carries its report"):
        rebuild.load_bundle(made / "bare.tar.gz", made / "bundle.config.yaml")
    assert rebuild.main(["bare.tar.gz"]) == 2
    assert "bare.config.yaml: expected the bundle's config" in capsys.readouterr().err
    shutil.copy(made / "bundle.config.yaml", made / "bare.config.yaml")
    assert rebuild.main(["bare.tar.gz"]) == 2
    assert "expected a bundle that carries its report" in capsys.readouterr().err


PUBLISHED = sorted(REPO.glob("results-published/*/bundle.tar.gz"))


@pytest.mark.parametrize("archive", PUBLISHED, ids=lambda p: p.parent.name)
def test_a_published_bundle_is_intact_and_carries_its_report(archive):
    cfg = yaml.safe_load(shipped_config(archive).read_text(encoding="utf-8"))
    bundle = check_bundle(archive, cfg)
    assert bundle.manifest["run_name"] == archive.parent.name == cfg["run_name"]
    assert any(name.endswith("/report/figure3.csv") for name in bundle.report)


@pytest.mark.slow
@pytest.mark.parametrize("archive", PUBLISHED, ids=lambda p: p.parent.name)
def test_a_published_bundle_rebuilds_its_report_byte_for_byte(archive, tmp_path, capsys):
    """`make check-bundle BUNDLE=<archive>`: the report from the bundle alone, in a fresh directory,
    is the report its run wrote, every carried table and figure CSV (about 12 s a bundle)."""
    code = rebuild.main([str(archive), "--cores", "1", "--workdir", str(tmp_path / "rebuilt")])
    out = capsys.readouterr()
    assert code == 0 and out.out.splitlines()[-1].startswith("PASS"), out.out + out.err[-3000:]


# the docs' copies of a published run's report: docs page -> (the run, its report file)
DOCS_COPIES = {"docs/demo_full_table1.md": ("demo_full", "table1.md"),
               "docs/demo_full_findings.md": ("demo_full", "findings.md"),
               "docs/real_table1.md": ("real", "table1.md"),
               "docs/real_findings.md": ("real", "findings.md")}


@pytest.mark.parametrize("page", sorted(DOCS_COPIES))
def test_the_docs_quote_the_published_reports(page):
    """What docs/demo.md and docs/real.md link as a run's Table 1 and findings is its published
    bundle's report, byte for byte."""
    run, name = DOCS_COPIES[page]
    archive = REPO / "results-published" / run / "bundle.tar.gz"
    bundle = check_bundle(archive, yaml.safe_load(shipped_config(archive).read_text(encoding="utf-8")))
    assert bundle.report_bytes()[f"results/{run}/report/{name}"] == (REPO / page).read_bytes()
