"""Hidden checks for notebook 02: larger and edge cases beyond the public checks."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from dpgp_audit.exercises import CheckFn
from dpgp_audit.exercises.nb02 import (
    _close,
    _newton_case,
    reference_clipped_square_sensitivity,
    reference_fitc_cloaking_matrix,
    reference_newton_cloaking_matrix,
)
from dpgp_audit.gp.kernels import EQ


def _fitc_hidden(answer) -> Iterator[tuple[bool, str]]:
    g = np.random.default_rng(21)
    X, Z, Xs = g.uniform(0, 5, (25, 2)), g.uniform(0, 5, (4, 2)), g.uniform(0, 5, (6, 2))
    kern = EQ(lengthscale=(1.5, 2.5), variance=2.0)
    yield _close(answer(kern, X, Z, Xs, 0.1), reference_fitc_cloaking_matrix(
        kern, X, Z, Xs, 0.1)), "two-dimensional inputs with one lengthscale per input"
    yield _close(answer(kern, X, Z[:1], Xs, 0.3), reference_fitc_cloaking_matrix(
        kern, X, Z[:1], Xs, 0.3)), "a single inducing input"


def _newton_hidden(answer) -> Iterator[tuple[bool, str]]:
    K, f = _newton_case(22, 30)
    yield _close(answer(K, f), reference_newton_cloaking_matrix(K, f)), "30 training points"
    K, f = _newton_case(23, 8)
    C = np.asarray(answer(K, f), dtype=float)
    yield bool(np.allclose(C, C.T, atol=1e-8 * np.abs(C).max())), "C is symmetric"


def _clipped_hidden(answer) -> Iterator[tuple[bool, str]]:
    yield math.isclose(float(answer(4.0, 1.0)), 16.0, rel_tol=1e-12), (
        "a move of exactly the clip, 4d")
    yield abs(float(answer(0.0, 3.0))) < 1e-12, "no move, no change"
    yield math.isclose(float(answer(1e-3, 1e-3)), reference_clipped_square_sensitivity(
        1e-3, 1e-3), rel_tol=1e-9), "a tiny d"


HIDDEN: dict[str, tuple[str, CheckFn]] = {
    "02.1": ("fitc_cloaking_matrix", _fitc_hidden),
    "02.2": ("newton_cloaking_matrix", _newton_hidden),
    "02.3": ("clipped_square_sensitivity", _clipped_hidden),
}
