"""Notebook 01's code-writing exercises: plausible mistakes fail the public checks.

The answers' solutions pass them (``test_solutions_01_02.py``); the wrong answers here
are the mistakes students make.
The reference values inside the checks come from the kit's vetted implementations
(``gp.cloaking.mahalanobis_delta``, ``methods.s18.standard.b_bound``) and, for 01.3,
from rebuilding the paper's selection on the student's pair.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit.dataset import Dataset
from dpgp_audit.exercises import check


def _leverages(C, M):
    return np.sum(C * np.linalg.solve(M, C), axis=0)


@pytest.mark.parametrize("wrong", [
    lambda C, M: float(np.max(_leverages(C, M))),                      # Alg. 1's CALCDELTA
    lambda C, M: float(np.sqrt(np.sum(_leverages(C, M)))),             # all columns at once
    lambda C, M: float(np.sqrt(np.mean(_leverages(C, M)))),            # a typical column
    lambda C, M: float(np.sqrt(np.max(np.sum(C * (M @ C), axis=0)))),  # M instead of M⁻¹
    lambda C, M: float(np.sqrt(np.max(np.sum(C.T * np.linalg.solve(M, C).T, axis=0)))),  # rows
], ids=["no-sqrt", "sum", "mean", "M-not-inverse", "rows"])
def test_cloaking_delta_mistakes_fail_the_public_check(wrong):
    assert not check("01.1", wrong).passed


@pytest.mark.parametrize("wrong", [
    lambda A: float(np.abs(A).sum(axis=0).max()),                       # ‖K⁻¹‖∞
    lambda A: float(np.clip(A, 0, None).sum(axis=0).max()),             # positive mass only
    lambda A: float(np.abs(A).max()),                                   # largest entry
    lambda A: float(np.abs(A.sum(axis=0)).max()),                       # signed column sum
    lambda A: float(np.clip(A, 0, None).sum(0).max() + np.clip(-A, 0, None).sum(0).max()),
], ids=["inf-norm", "positive-only", "max-entry", "signed-sum", "both-added"])
def test_b_bound_mistakes_fail_the_public_check(wrong):
    assert not check("01.2", wrong).passed


_X = np.linspace(0.0, 10.0, 24)[:, None]


def _pair(y0, j=None, step=0.0, k=None):
    y1 = np.array(y0, dtype=float).copy()
    if j is not None:
        y1[j] += step
    if k is not None:
        y1[k] += step
    return Dataset(_X, np.asarray(y0, dtype=float)), Dataset(_X, y1)


_ALT = 2.0 * np.where(np.arange(24) % 2 == 0, 1.0, -1.0)


@pytest.mark.parametrize("wrong", [
    _pair(_ALT),                                  # no change at all
    _pair(np.zeros(24), 3, 1.0),                  # small residuals: the bound holds
    _pair(_ALT, 3, 1.0, 4),                       # two targets changed: not neighbours
    _pair(_ALT, 3, 1.5),                          # moved by more than d = 1
    (Dataset(_X, _ALT), Dataset(_X + 0.1, _ALT)),  # inputs changed instead
], ids=["identical", "small-residuals", "two-targets", "too-far", "inputs-moved"])
def test_sse_pair_mistakes_fail_the_public_check(wrong):
    assert not check("01.3", wrong).passed
