"""bench/bench_pretrain.py runs both engines through its protocol (first steps apart, warm-up
blocks, at least 5 alternating timed blocks) on a tiny model, and its --json result plans the
budget (python -m xling.cluster.budget --rate-from). No timing is asserted: speed is the
benchmark's to report."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch

from xling.cluster.rates import rate_from_benchmark

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bench_pretrain.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_pretrain", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("sep_emb", [False, True])
def test_benchmark_protocol_and_json_for_the_budget(tmp_path, sep_emb):
    bench = load_bench()
    out = tmp_path / "bench.json"
    argv = ["--layers", "1", "--dim", "32", "--heads", "2", "--ffn", "64", "--tokens-per-sample", "32",
            "--batch", "4", "--vocab-per-language", "100", "--steps", "2", "--blocks", "5",
            "--max-warmup-blocks", "2", "--json", str(out), "--data", str(tmp_path / "corpus")]
    # Sep Emb also takes a batch a stream short before timing, as an epoch's last one
    result = bench.main(argv + (["--sep-emb", "--remainder-batch"] if sep_emb else []))
    assert result["remainder_batch"] == sep_emb
    rec = json.loads(out.read_text())
    assert rec["ratio_fairseq_over_plain"] == pytest.approx(result["ratio_fairseq_over_plain"])
    for engine in ("fairseq", "plain"):
        rates = rec["blocks_tokens_per_s"][engine]
        assert len(rates) == 5 and all(r > 0 for r in rates)
        assert rec["stats"][engine]["min"] <= rec["tokens_per_s"][engine] <= rec["stats"][engine]["max"]
    tps = rec["tokens_per_s"]
    assert rec["ratio_fairseq_over_plain"] == pytest.approx(tps["fairseq"] / tps["plain"])
    assert rec["warmup"]["blocks"] <= 2 and rec["warmup"]["first_steps_s"]["fairseq"] > 0
    assert rec["vocab_rows"] % 64 == 0 and rec["vocab_rows"] >= rec["vocab"]
    # the same model on both sides
    assert rec["params_fairseq"] == rec["params_plain"]
    rate = rate_from_benchmark(out)
    assert rate.flops_per_s == pytest.approx(rec["achieved_flops_per_s"]) and "cpu" in rate.basis
    # a second run reuses the corpus written for the same sizes
    stamp = (tmp_path / "corpus" / "dict.txt").stat().st_mtime_ns
    bench.main(argv + ["--blocks", "5"])
    assert (tmp_path / "corpus" / "dict.txt").stat().st_mtime_ns == stamp


TINY = ["--layers", "1", "--dim", "32", "--heads", "2", "--ffn", "64", "--tokens-per-sample", "32", "--batch", "4",
        "--vocab-per-language", "100", "--steps", "2", "--blocks", "5", "--max-warmup-blocks", "2"]


@pytest.mark.parametrize("fault", ["a part computed otherwise", "a loss that is not finite"])
def test_engines_that_do_not_compute_one_model_stop_the_benchmark_before_any_rate(tmp_path, monkeypatch, capsys,
                                                                                   fault):
    """Both engines start from the same weights and their losses on the first batches must agree
    (in fp32 each predicted position's, to 1e-3 nats) before a block is timed: a plain model one
    LayerNorm bias of which is off by 0.05, or one that computes NaN, stops it with no rate."""
    bench = load_bench()
    copy_weights = bench.copy_weights

    def off(encoder, plain):
        copy_weights(encoder, plain)
        with torch.no_grad():
            if fault == "a part computed otherwise":
                plain.blocks[0].ln2.bias.add_(0.05)
            else:
                plain.bias.fill_(float("nan"))

    monkeypatch.setattr(bench, "copy_weights", off)
    with pytest.raises(SystemExit, match="do not compute the same model"):
        bench.main(TINY + ["--data", str(tmp_path / "corpus"), "--json", str(tmp_path / "b.json")])
    assert "tokens/s" not in capsys.readouterr().out and not (tmp_path / "b.json").exists()
