"""The bound every agreement check of the benchmarks and the GPU tests holds a computation to: the
rounding the device itself makes, measured, never a tolerance guessed on one device.

A check has an exact reference: the model in float64 (on the CPU or on the device itself). The
device's rounding is how far one computation of the model in the run's precision, on that
device, lands from it (:func:`rounding`: the largest difference; :func:`mean_rounding`: the mean
absolute one, for a check of a mean). Another computation of the same model in the same
precision (another engine, another kernel, another device's path) rounds as much again in other
places, so it passes when it lies within ``ROUNDINGS`` times that measured rounding of the
reference, plus a floor for a rounding that happens to be zero (``FLOOR`` times the reference's
magnitude: float32 against float64). A model computed otherwise (a weight off, a layer missing)
parts from the reference by far more: tests/test_bench_pretrain.py, tests/test_bench_finetune.py
and tests/test_export_huggingface.py show each check fail so on the CPU.

Checks whose fp32 comparison is exact up to the order of operations use TF32 off instead (the
GPU tests' ``exact_fp32`` fixture); docs/benchmarks.md lists which check uses which."""

from __future__ import annotations

import torch

ROUNDINGS = 4  # how many roundings of the reference's own size another computation may carry
FLOOR = 1e-6  # relative to the reference's magnitude: float32 against float64


def rounding(got: torch.Tensor, exact: torch.Tensor) -> float:
    """The largest absolute difference of ``got`` from ``exact`` (compared in float64)."""
    if got.shape != exact.shape:
        raise ValueError(f"rounding of a {tuple(got.shape)} result against a {tuple(exact.shape)} reference")
    return float((got.double() - exact.double()).abs().max()) if got.numel() else 0.0


def mean_rounding(got: torch.Tensor, exact: torch.Tensor) -> float:
    """The mean absolute difference of ``got`` from ``exact``: what a mean of them can be off by,
    whatever the signs (the difference of the means could cancel to nothing by chance)."""
    if got.shape != exact.shape:
        raise ValueError(f"rounding of a {tuple(got.shape)} result against a {tuple(exact.shape)} reference")
    return float((got.double() - exact.double()).abs().mean()) if got.numel() else 0.0


def rounding_bound(measured: float, scale: float, roundings: float = ROUNDINGS, floor: float = FLOOR) -> float:
    """``roundings x measured + floor x scale``: how far another computation of the same model may
    lie from the reference, given the device's ``measured`` rounding and the reference's
    magnitude ``scale``."""
    if not (measured >= 0 and scale >= 0):  # NaN fails too
        raise ValueError(f"a rounding ({measured}) and a scale ({scale}) are non-negative numbers")
    return roundings * measured + floor * scale
