"""bench/bench_pretrain.py runs both engines through its protocol (first steps apart, warm-up
blocks, at least 5 alternating timed blocks) on a tiny model, and its --json result plans the
budget (python -m xling.cluster.budget --rate-from). No timing is asserted: speed is the
benchmark's to report."""

from __future__ import annotations

import json

import pytest
import torch

from support import repo_module
from xling.cluster.rates import rate_from_benchmark


def load_bench():
    return repo_module.load("bench/bench_pretrain.py")


# Sep Emb also takes a batch a stream short before timing, as an epoch's last one; the shared model
# the transformers reference beside the plain step, in bf16, with the A/B switches a window measures
AB = ["--transformers", "--precision", "bf16", "--sdpa", "math", "--adamw", "foreach"]


@pytest.mark.parametrize("sep_emb", [False, True])
def test_benchmark_protocol_and_json_for_the_budget(tmp_path, sep_emb):
    bench = load_bench()
    out = tmp_path / "bench.json"
    argv = ["--layers", "1", "--dim", "32", "--heads", "2", "--ffn", "64", "--tokens-per-sample", "32",
            "--batch", "4", "--vocab-per-language", "100", "--steps", "2", "--blocks", "5",
            "--max-warmup-blocks", "2", "--json", str(out), "--data", str(tmp_path / "corpus")]
    result = bench.main(argv + (["--sep-emb", "--remainder-batch"] if sep_emb else AB))
    assert result["remainder_batch"] == sep_emb
    rec = json.loads(out.read_text())
    engines = ["fairseq", "plain"] + ([] if sep_emb else ["transformers"])
    assert rec["engines"] == engines and rec["precision"] == ("fp32" if sep_emb else "bf16")
    assert rec["ab"] == ({"sdpa": "default", "adamw": "fused", "compile_mode": "default"} if sep_emb
                         else {"sdpa": "math", "adamw": "foreach", "compile_mode": "default"})
    assert rec["ratio_fairseq_over_plain"] == pytest.approx(result["ratio_fairseq_over_plain"])
    # every engine within the device's rounding of the float64 model, in fp32 and the run's precision
    agree = rec["agreement"]
    assert agree["ok"] and list(agree["fp32"]["apart"]) == engines
    for prec in dict.fromkeys(["fp32", rec["precision"]]):
        assert 0 < agree[prec]["rounding"]["position"] and set(agree[prec]["apart"]) == set(engines)
        assert all(a["mean"] <= agree[prec]["bound"]["mean"] for a in agree[prec]["apart"].values())
    assert all(a["position"] <= agree["fp32"]["bound"]["position"] for a in agree["fp32"]["apart"].values())
    for engine in engines:
        rates = rec["blocks_tokens_per_s"][engine]
        assert len(rates) == 5 and all(r > 0 for r in rates)
        assert rec["stats"][engine]["min"] <= rec["tokens_per_s"][engine] <= rec["stats"][engine]["max"]
    tps = rec["tokens_per_s"]
    assert rec["ratio_fairseq_over_plain"] == pytest.approx(tps["fairseq"] / tps["plain"])
    assert rec["warmup"]["blocks"] <= 2 and rec["warmup"]["first_steps_s"]["fairseq"] > 0
    assert rec["vocab_rows"] % 64 == 0 and rec["vocab_rows"] >= rec["vocab"]
    # the same model on every side
    assert all(rec[f"params_{e}"] == rec["params_fairseq"] for e in engines)
    if not sep_emb:
        assert rec["ratio_fairseq_over_transformers"] == pytest.approx(tps["fairseq"] / tps["transformers"])
    rate = rate_from_benchmark(out)
    assert rate.flops_per_s == pytest.approx(rec["achieved_flops_per_s"]) and "cpu" in rate.basis
    # a second run reuses the corpus written for the same sizes
    stamp = (tmp_path / "corpus" / "dict.txt").stat().st_mtime_ns
    bench.main(argv + ["--blocks", "5"])
    assert (tmp_path / "corpus" / "dict.txt").stat().st_mtime_ns == stamp


TINY = ["--layers", "1", "--dim", "32", "--heads", "2", "--ffn", "64", "--tokens-per-sample", "32", "--batch", "4",
        "--vocab-per-language", "100", "--steps", "2", "--blocks", "5", "--max-warmup-blocks", "2"]


@pytest.mark.parametrize("fault", ["a part computed otherwise", "a loss that is not finite",
                                   "a reference without a layer norm", "a reference with a weight off"])
def test_engines_that_do_not_compute_one_model_stop_the_benchmark_before_any_rate(tmp_path, monkeypatch, capsys,
                                                                                   fault):
    """Every engine starts from the same weights and its losses on the first batches must lie
    within the device's rounding of the float64 model's (support.rounding) before a block is
    timed: a plain model one LayerNorm bias of which is off by 0.05, or one that computes NaN, or a
    transformers reference without its last layer's second LayerNorm, or with one weight off by
    1%, stops it with no rate."""
    bench = load_bench()
    copy_weights, reference = bench.copy_weights, bench.TransformersMLM

    def off(encoder, plain):
        copy_weights(encoder, plain)
        with torch.no_grad():
            if fault == "a part computed otherwise":
                plain.blocks[0].ln2.bias.add_(0.05)
            elif fault == "a loss that is not finite":
                plain.bias.fill_(float("nan"))

    class Broken(reference):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            layer = self.bert.encoder.layer[-1]
            if fault == "a reference without a layer norm":
                layer.output.LayerNorm = torch.nn.Identity()
            elif fault == "a reference with a weight off":
                with torch.no_grad():
                    layer.intermediate.dense.weight[0, 0] *= 1.01

    monkeypatch.setattr(bench, "copy_weights", off)
    monkeypatch.setattr(bench, "TransformersMLM", Broken)
    with pytest.raises(SystemExit, match="do not compute the same model") as stop:
        bench.main(TINY + ["--data", str(tmp_path / "corpus"), "--json", str(tmp_path / "b.json"), "--transformers"])
    broken = "transformers" if "reference" in fault else "plain"
    assert f"{broken}'s" in str(stop.value) and f"{'plain' if broken == 'transformers' else 'transformers'}'s" not in \
        str(stop.value) and "fairseq's" not in str(stop.value)
    assert "tokens/s" not in capsys.readouterr().out and not (tmp_path / "b.json").exists()


def test_the_transformers_reference_refuses_a_model_bert_cannot_hold(tmp_path):
    with pytest.raises(SystemExit, match="BERT has no per-language tables"):
        load_bench().main(TINY + ["--data", str(tmp_path / "corpus"), "--sep-emb", "--transformers"])
