"""The bounds the GPU tests hold their runs to (tests/test_gpu.py), on the CPU: each passes what a
correct run gives and fails what a broken one would. The export's bound (support.export_compare)
is shown on a perturbed export in test_export_huggingface."""

from __future__ import annotations

import pytest

import support.curves as curves

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
