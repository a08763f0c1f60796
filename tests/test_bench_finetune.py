"""bench/bench_finetune.py at a tiny size: the grid job, jobs of one cell and the best single step
start from the same weights and agree on the first batches' losses before any block is timed,
each within the device's rounding of the float64 single step (support.rounding), and a
benchmark whose engines do not agree stops with no rate. No timing is asserted."""

from __future__ import annotations

import json

import pytest
import torch

from support import repo_module

TINY = ["--layers", "1", "--dim", "32", "--heads", "2", "--ffn", "64", "--vocab", "200", "--steps", "2", "--rounds",
        "5", "--dev-examples", "8", "--startup-runs", "0", "--tasks", "ner", "--batches", "16"]


def load_bench():
    return repo_module.load("bench/bench_finetune.py")


def test_the_engines_agree_and_each_row_has_its_rates(tmp_path):
    out = tmp_path / "ft.json"
    load_bench().main(TINY + ["--json", str(out)])
    [row] = json.loads(out.read_text())["rows"]
    assert (row["task"], row["batch_size"], row["cells"]) == ("ner", 16, 3)
    agree = row["agreement"]
    assert agree["ok"] and agree["batches"] == agree["rounding_batches"] == 2  # the 2 batches the blocks train on
    # every cell of the grid and the grid of one, batch by batch, within the bound the single step's
    # own rounding gives (measured: fp32 on this CPU, ~1e-7 of a loss near 2)
    assert agree["precision"] == "fp32" and 0 <= agree["rounding"] < 1e-5
    assert [len(b) for b in agree["losses"]["grid"]] == [3, 3]
    assert [len(b) for b in agree["losses"]["one_cell"]] == [1, 1]
    for engine in ("grid", "one_cell", "single_best"):
        assert all(a <= b for a, b in zip(agree[f"{engine}_apart"], agree["bound"], strict=True))
    assert set(row["examples_per_s"]) == {"grid", "one_cell", "single_best"}
    assert all(v > 0 for v in row["examples_per_s"].values())


@pytest.mark.parametrize("fault", ["another head", "a head weight off by 1%", "a loss that is not finite"])
def test_engines_that_do_not_train_the_same_cells_stop_the_benchmark(tmp_path, monkeypatch, capsys, fault):
    bench = load_bench()
    grid_runner = bench.grid_runner

    def off(setup, settings, cells=None):
        runner = grid_runner(setup, settings, cells)
        if cells is None:  # the grid: its head starts elsewhere, or computes NaN
            with torch.no_grad():
                for name, t in runner.model.head_weights.items():
                    if fault == "a loss that is not finite":
                        t.fill_(float("nan"))
                    else:
                        t.mul_(1.5 if fault == "another head" else 1.01)
        return runner

    monkeypatch.setattr(bench, "grid_runner", off)
    with pytest.raises(SystemExit, match="do not train the same cells"):
        bench.main(TINY + ["--json", str(tmp_path / "ft.json")])
    assert "cell-ex/s" not in capsys.readouterr().out and not (tmp_path / "ft.json").exists()
