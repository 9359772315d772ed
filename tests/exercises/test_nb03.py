"""Exercises 03.1 and 03.2: the answers' solutions pass; the mistakes students make do not."""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit.exercises import check
from tests.exercises.hidden.nb03 import HIDDEN
from tests.exercises.solutions import assert_solution_passes


@pytest.mark.parametrize("exercise_id", sorted(HIDDEN))
def test_the_answers_solution_passes_public_and_hidden_checks(exercise_id):
    assert_solution_passes(exercise_id, HIDDEN)


def _upper_no_sqrt2(B):
    i, j = np.triu_indices(B.shape[0])
    return B[i, j]  # BUG: off-diagonal entries not scaled by sqrt(2)


def _change(vec_b, c_power=1):
    def stats_change(k, y, k_new, y_new, c):
        k, k_new = np.asarray(k, float), np.asarray(k_new, float)
        a = y * k - y_new * k_new
        b = vec_b(np.outer(k, k)) - vec_b(np.outer(k_new, k_new))
        return float(np.sqrt(a @ a + c ** (2 * c_power) * b @ b))
    return stats_change


WRONG_03_1 = {
    "no sqrt(2) on the off-diagonal": _change(_upper_no_sqrt2),
    "c applied to the variance (c^4)": _change(lambda B: B.ravel(), c_power=2),
    "A part only": lambda k, y, k2, y2, c: float(np.linalg.norm(y * np.asarray(k)
                                                                - y2 * np.asarray(k2))),
    "norms added, not squares": lambda k, y, k2, y2, c: float(
        np.linalg.norm(y * np.asarray(k) - y2 * np.asarray(k2))
        + c * np.linalg.norm(np.outer(k, k) - np.outer(k2, k2))),
    "B part without c": _change(lambda B: B.ravel(), c_power=0),
}


@pytest.mark.parametrize("name", sorted(WRONG_03_1))
def test_wrong_stats_change_is_rejected(name):
    fb = check("03.1", WRONG_03_1[name])
    assert not fb.passed and fb.results[-1][1]


WRONG_03_2 = {
    "sigma^-2 instead of sigma^-4": lambda K, S, sa, nv: sa**2 / nv * (K @ S) @ (K @ S).T,
    "M^T M": lambda K, S, sa, nv: sa**2 / nv**2 * (K @ S).T @ (K @ S),
    "sigma_a not squared": lambda K, S, sa, nv: sa / nv**2 * (K @ S) @ (K @ S).T,
    "Sigma^2 without K": lambda K, S, sa, nv: sa**2 / nv**2 * S @ S,
    "K Sigma K (the prior part)": lambda K, S, sa, nv: sa**2 / nv**2 * K @ S @ K,
}


@pytest.mark.parametrize("name", sorted(WRONG_03_2))
def test_wrong_s21_is_rejected(name):
    fb = check("03.2", WRONG_03_2[name])
    assert not fb.passed and fb.results[-1][1]


def test_a_stub_gets_feedback_not_an_exception():
    fb = check("03.1", lambda k, y, k2, y2, c: None)
    assert not fb.passed and "finite number" in str(fb)
    fb = check("03.2", lambda K, S, sa, nv: None)
    assert not fb.passed
