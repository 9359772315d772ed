"""Instructors' hidden checks for notebook 03 (more cases than the public ones).

``HIDDEN[id] = (name the student defines, check)``; each check yields ``(passed, message)``.
"""

from __future__ import annotations

import math

import numpy as np

from dpgp_audit.exercises.nb03 import (
    s21_cases,
    s21_reference,
    stats_change_cases,
    stats_change_reference,
)
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.methods.honkela.bounds import dpsvgp_sensitivity


def _stats_change(answer):
    for case in stats_change_cases(103, 200):
        got = float(answer(*case))
        yield math.isclose(got, stats_change_reference(*case), rel_tol=1e-8, abs_tol=1e-12), (
            f"random case with |Z| = {case[0].size}")
    # real kernel vectors of an EQ kernel on H Fig. 1's inducing inputs
    Z = np.linspace(-3, 3, 9)[:, None]
    kern = EQ(1.0)
    k, k2 = kern(Z, np.array([[0.3]]))[:, 0], kern(Z, np.array([[-2.2]]))[:, 0]
    yield math.isclose(float(answer(k, 1.5, k2, -1.5, 1.0)),
                       stats_change_reference(k, 1.5, k2, -1.5, 1.0), rel_tol=1e-9), "EQ rows"
    # the supremum over the domain: no change of unit-norm rows exceeds the exact Delta
    rng = np.random.default_rng(7)
    worst = 0.0
    for _ in range(300):
        a, b = rng.standard_normal(4), rng.standard_normal(4)
        a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
        worst = max(worst, float(answer(a, 1.0, b, -1.0, 0.4)))
    yield worst <= dpsvgp_sensitivity(1.0, 1.0, 0.4, "exact") * (1 + 1e-9), (
        "never above the exact sensitivity")
    yield math.isclose(float(answer(np.array([2.0]), 3.0, np.array([-1.0]), 0.5, 10.0)),
                       stats_change_reference(np.array([2.0]), 3.0, np.array([-1.0]), 0.5,
                                              10.0), rel_tol=1e-9), "|Z| = 1, large c"


def _s21(answer):
    for case in s21_cases(106, 60):
        got = np.asarray(answer(*case), dtype=float)
        yield got.shape == case[0].shape and np.allclose(
            got, s21_reference(*case), rtol=1e-8, atol=1e-14), f"random |Z| = {case[0].shape[0]}"
    # tiny observation noise: the factor sigma^-4 must not overflow into inf for moderate sizes
    Kzz, Sigma, sa, _ = s21_cases(107, 1)[0]
    got = np.asarray(answer(Kzz, Sigma, sa, 1e-3), dtype=float)
    yield np.allclose(got, s21_reference(Kzz, Sigma, sa, 1e-3), rtol=1e-8), "sigma^2 = 1e-3"
    # positive semi-definite
    yield float(np.linalg.eigvalsh(0.5 * (got + got.T))[0]) >= -1e-9 * float(np.abs(got).max()), (
        "a covariance is positive semi-definite")


HIDDEN = {"03.1": ("stats_change", _stats_change), "03.2": ("s21_correction", _s21)}
