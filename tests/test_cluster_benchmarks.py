"""Totals of Snakemake's benchmark files per stage (the compute a run used)."""

from __future__ import annotations

import pytest

from xling.cluster.benchmarks import main, read_benchmark, summarise
from xling.errors import InputError

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def write(path, s, rss, cpu):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{s}\t0:00:00\t{rss}\t1\t1\t1\t0\t0\t0\t{cpu}\n")


def test_per_stage_sums_and_peaks(tmp_path, capsys):
    write(tmp_path / "pretrain/default/en-fr.tsv", 3600, 900.5, 7200)
    write(tmp_path / "pretrain/mono/en.tsv", 1800, 1200.0, 1800)
    write(tmp_path / "finetune/default/en-fr/ner/bs32.tsv", 60, 300, "NA")  # not measured: counts as 0
    rows = {r.stage: r for r in summarise(tmp_path)}
    assert (rows["pretrain"].jobs, rows["pretrain"].wall_s, rows["pretrain"].cpu_s) == (2, 5400, 9000)
    assert rows["pretrain"].max_rss_mb == 1200.0 and rows["finetune"].cpu_s == 0
    assert main([str(tmp_path)]) == 0
    assert "| pretrain | 2 | 1.50 | 2.50 | 1,200 |" in capsys.readouterr().out


def test_a_file_that_is_not_a_benchmark_names_itself(tmp_path):
    bad = tmp_path / "bpe" / "x.tsv"
    bad.parent.mkdir()
    bad.write_text("a\tb\n1\t2\n")
    with pytest.raises(InputError, match=r"x\.tsv:1.*max_rss"):
        read_benchmark(bad)
