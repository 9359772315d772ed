"""Checks for notebook 00 (DP basics).

``00.1`` — the classical Gaussian calibration (Dwork & Roth 2014, Thm A.1):
σ = Δ √(2 ln(1.25/δ)) / ε, proven for ε ≤ 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from dpgp_audit.exercises import exercise


def _classical(epsilon: float, delta: float, sensitivity: float) -> float:
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


@exercise("00.1", "the classical Gaussian calibration sigma(epsilon, delta, sensitivity)")
def _classical_sigma(answer: object) -> Iterator[tuple[bool, str]]:
    yield callable(answer), "it is a function sigma(epsilon, delta, sensitivity)"
    value = answer(1.0, 1e-5, 1.0)
    yield isinstance(value, int | float) and math.isfinite(value), "it returns one finite number"
    yield math.isclose(value, _classical(1.0, 1e-5, 1.0), rel_tol=1e-9), (
        "at epsilon = 1, delta = 1e-5, sensitivity = 1 it gives the Dwork-Roth value "
        "(check the constant inside the logarithm, and the square root)")
    yield math.isclose(answer(1.0, 1e-5, 3.0), 3.0 * value, rel_tol=1e-9), (
        "sigma is proportional to the sensitivity")
    yield math.isclose(answer(0.5, 1e-5, 1.0), 2.0 * value, rel_tol=1e-9), (
        "sigma is inversely proportional to epsilon")
    ok = all(math.isclose(answer(e, d, s), _classical(e, d, s), rel_tol=1e-9)
             for e, d, s in ((0.3, 1e-3, 2.0), (0.9, 1e-8, 0.5)))
    yield ok, "it matches the formula at other (epsilon, delta, sensitivity) too"
