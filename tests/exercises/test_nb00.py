"""Notebook 00's code-writing exercises: the answers pass, plausible mistakes do not.

The right answers are the answers notebook's own solution cells
(``tests/exercises/solutions.py``); the wrong ones are the mistakes students make.
The reference values inside the checks are closed forms (Dwork & Roth Thm A.1; the
Laplace distribution's moments; the half-line probabilities of fixed samples).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgp_audit.exercises import check, exercises, run_check, title
from tests.exercises.solutions import hidden, solution

HIDDEN = hidden("00")


def test_every_exercise_of_00_has_a_hidden_check_and_a_solution():
    assert exercises("00") == sorted(HIDDEN) == ["00.1", "00.2", "00.3"]
    for ex_id, (name, _) in HIDDEN.items():
        assert callable(solution(ex_id)[name])


@pytest.mark.parametrize("ex_id", ["00.1", "00.2", "00.3"])
def test_the_answers_solution_passes_public_and_hidden_checks(ex_id):
    name, hidden_check = HIDDEN[ex_id]
    answer = solution(ex_id)[name]
    public = check(ex_id, answer)
    assert public.passed, str(public)
    secret = run_check(ex_id, title(ex_id), hidden_check, answer)
    assert secret.passed, str(secret)


def test_the_stub_a_student_starts_from_fails_without_raising():
    for ex_id in ("00.1", "00.2", "00.3"):
        fb = check(ex_id, lambda *args: None)
        assert not fb.passed and not fb.error, str(fb)


@pytest.mark.parametrize("wrong", [
    lambda v, s, e, n, rng: v + rng.laplace(0.0, e / s, n),          # scale inverted
    lambda v, s, e, n, rng: v + rng.normal(0.0, s / e, n),           # Gaussian noise
    lambda v, s, e, n, rng: v + rng.laplace(0.0, 2 * s / e, n),      # 2Δ/ε (exponential mech.)
    lambda v, s, e, n, rng: v + np.random.default_rng(0).laplace(0.0, s / e, n),  # fixed seed
    lambda v, s, e, n, rng: rng.laplace(0.0, s / e, n),              # noise without the value
    lambda v, s, e, n, rng: v + rng.laplace(0.0, s / e),             # one draw, not `size`
], ids=["inverted", "gaussian", "factor-2", "own-seed", "no-value", "scalar"])
def test_laplace_mistakes_fail_the_public_check(wrong):
    assert not check("00.2", wrong).passed


@pytest.mark.parametrize("wrong", [
    lambda e, d, s: s * math.sqrt(2 * math.log(1 / d)) / e,          # 1 instead of 1.25
    lambda e, d, s: s * 2 * math.log(1.25 / d) / e,                  # no square root
    lambda e, d, s: s * math.sqrt(2 * math.log(2 / d)) / e,          # Hall's constant
], ids=["log-1", "no-sqrt", "hall"])
def test_calibration_mistakes_fail_the_public_check(wrong):
    assert not check("00.1", wrong).passed


def _one_order(s0, s1, thresholds):
    return max(np.mean(s1 > t) / np.mean(s0 > t) for t in thresholds if np.mean(s0 > t) > 0)


def _greater_equal(s0, s1, thresholds):
    out = 0.0
    for t in thresholds:
        p0, p1 = np.mean(s0 >= t), np.mean(s1 >= t)
        for a, b in ((p1, p0), (p0, p1)):
            if a > 0:
                out = max(out, np.inf if b == 0 else a / b)
    return out


def _divides_by_zero(s0, s1, thresholds):
    out = 0.0
    for t in thresholds:
        p0, p1 = float(np.mean(s0 > t)), float(np.mean(s1 > t))
        out = max(out, p1 / p0, p0 / p1)  # ZeroDivisionError where a side never exceeds t
    return out


def _difference(s0, s1, thresholds):
    return max(abs(np.mean(s1 > t) - np.mean(s0 > t)) for t in thresholds)


@pytest.mark.parametrize("wrong", [_one_order, _greater_equal, _divides_by_zero, _difference],
                         ids=["one-order", "ge", "zero-division", "difference"])
def test_audit_score_mistakes_fail_the_public_or_hidden_check(wrong):
    public = check("00.3", wrong)
    secret = run_check("00.3", title("00.3"), HIDDEN["00.3"][1], wrong)
    assert not public.passed or not secret.passed
    if wrong is not _greater_equal:  # ">= t" is caught by the hidden tie case only
        assert not public.passed, str(public)
