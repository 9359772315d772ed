"""Checks for notebook 00 (DP basics).

``00.1`` — the classical Gaussian calibration (Dwork & Roth 2014, Thm A.1):
σ = Δ √(2 ln(1.25/δ)) / ε, proven for ε ≤ 1 (catalogue P.2).

``00.2`` — the Laplace mechanism (P.1): ``size`` releases of a value plus
Lap(Δ/ε) noise drawn from the generator it is given.

``00.3`` — the audit step of notebook 00 §2: the largest ratio of the two
half-line probabilities P[M(·) > t] over thresholds, in *both* orders of the pair.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from dpgp_audit.exercises import check_rng, exercise


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


def laplace_moments_ok(draws: np.ndarray, value: float, scale: float) -> tuple[bool, bool]:
    """(centre and mean absolute deviation right, standard deviation right) of Laplace draws.

    For ``value + Lap(b)``: E|X − value| = b and sd = √2 b; a normal with sd b has
    E|X − value| = b √(2/π) ≈ 0.80 b. With the sizes used by the checks (≥ 2·10⁵ draws)
    the relative standard errors are below 0.3 %, so 3 % tolerances never reject a
    correct mechanism and always reject the wrong scales and families tried in the tests.
    """
    dev = np.asarray(draws, dtype=float) - value
    centre = abs(float(np.mean(dev))) < 0.02 * scale
    mad = math.isclose(float(np.mean(np.abs(dev))), scale, rel_tol=0.03)
    sd = math.isclose(float(np.std(dev)), math.sqrt(2.0) * scale, rel_tol=0.03)
    return centre and mad, sd


@exercise("00.2", "the Laplace mechanism laplace_release(value, sensitivity, epsilon, size, rng)")
def _laplace_release(answer: object) -> Iterator[tuple[bool, str]]:
    yield callable(answer), (
        "it is a function laplace_release(value, sensitivity, epsilon, size, rng)")
    out = answer(3.0, 1.0, 1.0, 5, check_rng(0))
    arr = np.asarray(out, dtype=float) if out is not None else np.empty(0)
    yield arr.shape == (5,), "with size = 5 it returns an array of 5 releases"
    again = np.asarray(answer(3.0, 1.0, 1.0, 5, check_rng(0)), dtype=float)
    other = np.asarray(answer(3.0, 1.0, 1.0, 5, check_rng(1)), dtype=float)
    yield np.array_equal(arr, again) and not np.array_equal(arr, other), (
        "all its randomness comes from the generator rng it is given (same seed, same "
        "releases; another seed, other releases)")
    draws = np.asarray(answer(3.0, 0.5, 2.0, 200_000, check_rng(2)), dtype=float)
    centred_scaled, _ = laplace_moments_ok(draws, 3.0, 0.25)
    yield centred_scaled, (
        "the releases are centred on the value and their mean absolute deviation is the "
        "Laplace scale the privacy proof needs (how does it depend on the sensitivity and "
        "on epsilon?)")
    _, sd_ok = laplace_moments_ok(draws, 3.0, 0.25)
    yield sd_ok, ("the spread has the shape of a Laplace distribution (its standard "
                  "deviation is sqrt(2) times its mean absolute deviation)")


def _half_line_ratio(s0: np.ndarray, s1: np.ndarray, thresholds: np.ndarray) -> float:
    worst = 0.0
    for t in thresholds:
        p0, p1 = float(np.mean(s0 > t)), float(np.mean(s1 > t))
        for num, den in ((p1, p0), (p0, p1)):
            if num > 0:
                worst = max(worst, math.inf if den == 0 else num / den)
    return worst


#: Fixed samples for 00.3: the second order of the pair is the larger at t = 2.5, and
#: a ratio's denominator is 0 at t = 3.5 (so the answer is inf).
_S0 = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
_S1 = np.array([0.0, 1.0, 1.0, 2.0, 2.0, 3.0])


@exercise("00.3", "the audit score worst_ratio(samples_d, samples_d_prime, thresholds)")
def _worst_ratio(answer: object) -> Iterator[tuple[bool, str]]:
    yield callable(answer), "it is a function worst_ratio(samples_d, samples_d_prime, thresholds)"
    value = answer(np.array([0.0, 1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0, 4.0]),
                   np.array([1.5]))
    yield isinstance(value, int | float | np.floating) and math.isclose(float(value), 1.5), (
        "for one threshold it is the larger of the two probability ratios of exceeding it")
    value = answer(_S0, _S1, np.array([0.5, 1.5, 2.5]))
    yield math.isclose(float(value), _half_line_ratio(_S0, _S1, np.array([0.5, 1.5, 2.5]))), (
        "it takes both orders of the pair: P[M(D) > t] / P[M(D') > t] counts as much as "
        "P[M(D') > t] / P[M(D) > t]")
    value = answer(_S0, _S1, np.array([2.5, 3.5]))
    yield value is not None and math.isinf(float(value)) and float(value) > 0, (
        "when one dataset never exceeds t and the other sometimes does, no finite e^epsilon "
        "covers the pair: return infinity (numpy's inf), without dividing by zero")
    value = answer(_S0, _S0, np.array([-1.0, 2.0, 9.0]))
    yield math.isclose(float(value), 1.0), (
        "identical samples give ratio 1 (a threshold that no sample exceeds on either side "
        "says nothing: skip it)")
