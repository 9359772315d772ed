"""Exercises 04.1 and 04.2: the answers' solutions pass; the mistakes students make do not."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from dpgp_audit.exercises import check
from tests.exercises.hidden.nb04 import HIDDEN
from tests.exercises.solutions import assert_solution_passes


@pytest.mark.parametrize("exercise_id", sorted(HIDDEN))
def test_the_answers_solution_passes_public_and_hidden_checks(exercise_id):
    assert_solution_passes(exercise_id, HIDDEN)


def _mu(profile):
    def multiplier(eps, delta, sens):
        mu = optimize.brentq(lambda m: profile(eps, m) - delta, 1e-6, 100.0)
        return sens / mu
    return multiplier


WRONG_04_1 = {
    "Hall's classical multiplier": lambda e, d, s: s * math.sqrt(2 * math.log(2 / d)) / e,
    "profile without e^eps": _mu(lambda e, m: stats.norm.cdf(-e / m + m / 2)
                                 - stats.norm.cdf(-e / m - m / 2)),
    "second term of eq. (5) dropped": _mu(lambda e, m: stats.norm.cdf(-e / m + m / 2)),
    "c = Delta * mu": lambda e, d, s: s * _mu(
        lambda e2, m: stats.norm.cdf(-e2 / m + m / 2)
        - math.exp(e2) * stats.norm.cdf(-e2 / m - m / 2))(e, d, 1.0) ** -1,
    "sqrt(2 ln(1.25/delta))/eps": lambda e, d, s: s * math.sqrt(2 * math.log(1.25 / d)) / e,
}


@pytest.mark.parametrize("name", sorted(WRONG_04_1))
def test_wrong_multiplier_is_rejected(name):
    fb = check("04.1", WRONG_04_1[name])
    assert not fb.passed and fb.results[-1][1]


def _along(factor):
    def kron_noise(covs, z):
        f = np.asarray(z, dtype=float)
        for d, K in enumerate(covs):
            f = np.moveaxis(np.tensordot(factor(K), f, axes=([1], [d])), 0, d)
        return f
    return kron_noise


def _first_axis_only(covs, z):
    L = np.linalg.cholesky(covs[0])
    return np.moveaxis(np.tensordot(L, np.asarray(z, float), axes=([1], [0])), 0, 0)


def _reversed_axes(covs, z):
    # BUG: the factors are applied to the axes in reverse order (L_D along axis 0, ...)
    f = np.asarray(z, dtype=float)
    for d, K in enumerate(reversed(covs)):
        L = np.linalg.cholesky(K)
        f = np.moveaxis(np.tensordot(L, f, axes=([1], [d])), 0, d)
    return f


WRONG_04_2 = {
    "K instead of its Cholesky factor": _along(lambda K: K),
    "transposed factor": _along(lambda K: np.linalg.cholesky(K).T),
    "only the first axis": _first_axis_only,
    "factors on the wrong axes": _reversed_axes,
    "sqrt of the entries of K": _along(lambda K: np.sqrt(np.abs(K))),
}


@pytest.mark.parametrize("name", sorted(WRONG_04_2))
def test_wrong_kron_noise_is_rejected(name):
    fb = check("04.2", WRONG_04_2[name])
    assert not fb.passed and (fb.error or fb.results[-1][1])


def test_any_square_root_per_axis_is_accepted():
    def sym_sqrt(K):
        w, V = np.linalg.eigh(K)
        return (V * np.sqrt(np.clip(w, 0, None))) @ V.T

    assert check("04.2", _along(sym_sqrt)).passed
