"""Hidden checks for notebook 00: edge cases beyond the public checks."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from dpgp_audit.exercises import CheckFn, check_rng
from dpgp_audit.exercises.nb00 import _classical, _half_line_ratio, laplace_moments_ok


def _classical_hidden(answer) -> Iterator[tuple[bool, str]]:
    cases = ((1e-3, 1e-12, 1.0), (1.0, 0.1, 1e-6), (0.01, 1e-5, 1e6))
    yield all(math.isclose(answer(e, d, s), _classical(e, d, s), rel_tol=1e-9)
              for e, d, s in cases), "extreme epsilon, delta and sensitivity"
    value = answer(np.float64(0.5), np.float64(1e-6), np.float64(2.0))
    yield math.isclose(float(value), _classical(0.5, 1e-6, 2.0), rel_tol=1e-9), (
        "numpy scalars as arguments")


def _laplace_hidden(answer) -> Iterator[tuple[bool, str]]:
    empty = np.asarray(answer(1.0, 1.0, 1.0, 0, check_rng(0)), dtype=float)
    yield empty.shape == (0,), "size = 0 gives no releases"
    draws = np.asarray(answer(-7.0, 4.0, 0.5, 400_000, check_rng(5)), dtype=float)
    centre, sd = laplace_moments_ok(draws, -7.0, 8.0)
    yield centre and sd, "a negative value, sensitivity 4 and epsilon 0.5 (scale 8)"
    # P(|X - v| > 3b) = e^-3 for Laplace; 400 000 draws give a standard error of 3.4e-4
    tail = float(np.mean(np.abs(draws + 7.0) > 24.0))
    yield abs(tail - math.exp(-3.0)) < 0.003, "the tails are those of a Laplace distribution"


def _ratio_hidden(answer) -> Iterator[tuple[bool, str]]:
    s0, s1 = np.array([0.0, 1.0, 2.0]), np.array([0.5, 0.5, 1.5, 2.5, 3.0])
    t = [0.25, 1.25, 2.25]
    yield math.isclose(float(answer(s0, s1, t)), _half_line_ratio(s0, s1, np.array(t))), (
        "samples of different sizes and thresholds given as a list")
    value = answer(s1, s0, np.array([2.75]))
    yield math.isinf(float(value)) and float(value) > 0, "the reverse order's zero denominator"
    ties = np.array([1.0, 1.0, 2.0, 2.0])
    yield math.isclose(float(answer(ties, ties + 1.0, np.array([1.0, 2.0]))),
                       _half_line_ratio(ties, ties + 1.0, np.array([1.0, 2.0]))), (
        "samples equal to a threshold do not exceed it (strictly greater)")


HIDDEN: dict[str, tuple[str, CheckFn]] = {
    "00.1": ("classical_sigma", _classical_hidden),
    "00.2": ("laplace_release", _laplace_hidden),
    "00.3": ("worst_ratio", _ratio_hidden),
}
