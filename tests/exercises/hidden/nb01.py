"""Hidden checks for notebook 01: larger and edge cases beyond the public checks."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from dpgp_audit.exercises import CheckFn
from dpgp_audit.exercises.nb01 import (
    _cloaking_case,
    _kinv_case,
    reference_b_bound,
    reference_cloaking_delta,
    utility_change,
)
from dpgp_audit.gp.cloaking import solve_cloaking


def _delta_hidden(answer) -> Iterator[tuple[bool, str]]:
    C, M = _cloaking_case(11, 8, 30)
    yield math.isclose(float(answer(C, M)), reference_cloaking_delta(C, M), rel_tol=1e-7), (
        "8 test points, 30 training targets")
    C = np.random.default_rng(12).normal(size=(4, 10))
    sol = solve_cloaking(C)
    yield math.isclose(float(answer(C, sol.M)), reference_cloaking_delta(C, sol.M),
                       rel_tol=1e-6), "the optimal cloaking covariance (where Δ is 1)"
    yield math.isclose(float(answer(np.ones((1, 1)), np.full((1, 1), 9.0))), 1.0 / 3.0,
                       rel_tol=1e-12), "one test point and one target"


def _b_hidden(answer) -> Iterator[tuple[bool, str]]:
    Kinv = _kinv_case(13, 30)
    yield math.isclose(float(answer(Kinv)), reference_b_bound(Kinv), rel_tol=1e-9), (
        "a 30 × 30 K⁻¹")
    D = np.diag([0.5, 3.0, 1.0])
    yield math.isclose(float(answer(D)), 3.0, rel_tol=1e-12), (
        "a diagonal K⁻¹ (no negative entries at all)")
    N = np.array([[1.0, -2.0, -2.0], [-2.0, 1.0, -2.0], [-2.0, -2.0, 1.0]])
    yield math.isclose(float(answer(N)), reference_b_bound(N), rel_tol=1e-12), (
        "negative mass larger than positive mass in every column")


def _pair_hidden(answer) -> Iterator[tuple[bool, str]]:
    pair = answer() if callable(answer) else answer
    D, D2 = pair
    yield bool(np.all(np.isfinite(D.y)) and np.all(np.isfinite(D2.y))), "finite targets"
    change, bound = utility_change((D, D2))
    yield change >= 1.01 * bound, (
        "the paper's bound is exceeded by at least 1 % (not a rounding effect)")
    again = answer() if callable(answer) else answer
    yield np.array_equal(again[0].y, D.y) and np.array_equal(again[1].y, D2.y), (
        "the same pair on every call (a counterexample must be reproducible)")


HIDDEN: dict[str, tuple[str, CheckFn]] = {
    "01.1": ("cloaking_delta", _delta_hidden),
    "01.2": ("b_bound", _b_hidden),
    "01.3": ("sse_counterexample", _pair_hidden),
}
