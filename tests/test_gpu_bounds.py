"""The bounds the GPU tests hold their runs to (tests/test_gpu.py), on the CPU: each passes what a
correct run gives and fails what a broken one would. The rounding bound of every agreement check
(support.rounding) against its definition; the export's use of it (support.export_compare) is
shown on a perturbed export in test_export_huggingface, the benchmarks' in test_bench_*."""

from __future__ import annotations

import pytest
import torch

import support.curves as curves
import support.rounding as rounding

# the tiny job's English perplexity at each of its 20 validations on the CPU in fp32, curves.LEARN
# on write_toy_data(n_train=100, n_valid=100, seed=3, successors=2), pretraining seeds 1 and 2
SEED1 = [117.8, 92.9, 86.1, 81.3, 81.8, 77.3, 76.2, 82.6, 75.4, 67.9, 64.9, 56.8, 53.4, 52.5, 49.3, 50.3, 48.5, 47.0,
         47.9, 48.5]
SEED2 = [115.3, 102.1, 94.8, 91.8, 88.1, 83.6, 85.1, 79.6, 77.7, 70.1, 62.6, 58.9, 55.5, 53.2, 52.6, 50.2, 49.3, 48.0,
         48.6, 48.2]
UNIFORM = 136.0


def test_a_run_that_learns_as_the_cpu_follows_its_curve():
    curves.assert_follows(SEED2, SEED1, UNIFORM)


@pytest.mark.parametrize("broken", [
    [117.8] * 20,  # no update takes effect (a loss scaler that skips every step)
    [x * 1.25 for x in SEED1],  # learns, but a quarter worse at every validation
    SEED1[:10] + [x * 1.3 for x in SEED1[10:]],  # diverges halfway
    SEED1[:-1],  # stopped a validation early
])
def test_a_run_that_does_not_learn_as_the_cpu_fails(broken):
    with pytest.raises(AssertionError):
        curves.assert_follows(broken, SEED1, UNIFORM)


def test_a_run_that_follows_a_cpu_run_that_learnt_nothing_fails():
    """Both curves flat near the uniform guess: the corpus was not learnt, whatever the devices."""
    flat = [UNIFORM * 0.95] * 20
    with pytest.raises(AssertionError, match="uniform guess"):
        curves.assert_follows(flat, flat, UNIFORM)


# --- the agreement checks' bound (support.rounding), against its definition -------------------------

def test_the_rounding_bound_is_its_definition():
    assert rounding.rounding_bound(2e-4, 10.0) == pytest.approx(rounding.ROUNDINGS * 2e-4 + rounding.FLOOR * 10.0)
    assert rounding.rounding_bound(0.0, 3.0, roundings=2, floor=0.5) == 1.5
    a, b = torch.tensor([1.0, -2.0, 3.0]), torch.tensor([1.5, -2.0, 2.0], dtype=torch.float64)
    assert rounding.rounding(a, b) == 1.0 and rounding.mean_rounding(a, b) == pytest.approx(0.5)
    for bad in ((-1e-3, 1.0), (1e-3, -1.0), (float("nan"), 1.0)):
        with pytest.raises(ValueError, match="non-negative"):
            rounding.rounding_bound(*bad)
    with pytest.raises(ValueError, match=r"\(3,\) result against a \(2,\) reference"):
        rounding.rounding(a, b[:2])


def test_another_float32_computation_lies_within_the_measured_rounding_and_a_wrong_one_does_not():
    """One float32 product's rounding, measured against float64, bounds another float32 computation
    of the same product (summed in another order); the product with one weight off by 0.1% is
    outside it."""
    gen = torch.Generator().manual_seed(0)
    x, w = torch.randn(64, 512, generator=gen), torch.randn(512, 256, generator=gen)
    exact = x.double() @ w.double()
    measured = rounding.rounding(x @ w, exact)
    assert 0 < measured < 1e-3  # float32's, not zero and not large
    bound = rounding.rounding_bound(measured, float(exact.abs().max()))
    other_order = sum(x[:, k : k + 64] @ w[k : k + 64] for k in range(0, 512, 64))
    assert rounding.rounding(other_order, exact) <= bound
    off = w.clone()
    off[0, 0] *= 1.001
    assert rounding.rounding(x @ off, exact) > bound
