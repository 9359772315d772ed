"""Exercises 05.1 and 05.2: the answers' solutions pass; the mistakes students make do not."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpgp_audit.dataset import Dataset
from dpgp_audit.exercises import check
from tests.exercises.hidden.nb05 import HIDDEN
from tests.exercises.solutions import assert_solution_passes


@pytest.mark.parametrize("exercise_id", sorted(HIDDEN))
def test_the_answers_solution_passes_public_and_hidden_checks(exercise_id):
    assert_solution_passes(exercise_id, HIDDEN)


def _with_y(data, i, value):
    y = data.y.copy()
    y[i] = value
    return Dataset(data.X, y)


def _move_by_one(data):
    i = int(np.argmin(data.y))  # the add/remove habit: one target moved by the bound d
    return data, _with_y(data, i, data.y[i] + 1.0)


def _two_rows(data):
    y = data.y.copy()
    y[0], y[1] = -1.0, 1.0
    return _with_y(data, 0, 1.0), Dataset(data.X, -y)


def _out_of_bound(data):
    return data, _with_y(data, 0, 5.0)


def _inputs_only(data):
    X = data.X.copy()
    X[0] = X[0] + 10.0
    return data, Dataset(X, data.y)


WRONG_05_1 = {
    "one target moved by d (add/remove thinking)": _move_by_one,
    "two rows changed": _two_rows,
    "a target outside the bound": _out_of_bound,
    "only an input moved": _inputs_only,
    "the same dataset twice": lambda data: (data, data),
}


@pytest.mark.parametrize("name", sorted(WRONG_05_1))
def test_wrong_pairs_are_rejected(name):
    fb = check("05.1", WRONG_05_1[name])
    assert not fb.passed and fb.results[-1][1]


def _cp(k, n, a, upper):
    if upper:
        return 1.0 if k >= n else float(stats.beta.ppf(1 - a, k + 1, n - k))
    return 0.0 if k <= 0 else float(stats.beta.ppf(a, k, n - k + 1))


def _bound(split=2.0, use_delta=True, floor=True, raw=False):
    def eps_lower_bound(k1, n1, k0, n0, delta, alpha):
        a = alpha / split
        lo = k1 / n1 if raw else _cp(k1, n1, a, upper=False)
        hi = max(k0 / n0, 1e-300) if raw else _cp(k0, n0, a, upper=True)
        num = lo - (delta if use_delta else 0.0)
        if num <= 0:
            return 0.0 if floor else -math.inf
        eps = math.log(num / hi)
        return max(eps, 0.0) if floor else eps
    return eps_lower_bound


WRONG_05_2 = {
    "alpha not split between the proportions": _bound(split=1.0),
    "raw rates instead of Clopper-Pearson bounds": _bound(raw=True),
    "delta forgotten": _bound(use_delta=False),
    "no floor at 0": _bound(floor=False),
}


def test_the_reference_pattern_itself_passes():
    assert check("05.2", _bound()).passed  # the wrong answers differ from it in one place


@pytest.mark.parametrize("name", sorted(WRONG_05_2))
def test_wrong_lower_bounds_are_rejected(name):
    fb = check("05.2", WRONG_05_2[name])
    assert not fb.passed and fb.results[-1][1]
