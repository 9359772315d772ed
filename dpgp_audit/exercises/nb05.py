"""Checks for notebook 05 (the auditing lab, catalogue A.1–A.5).

``05.1`` — a neighbour pair that exposes ``planted/neighbour-mismatch`` (a Gaussian sum
calibrated for add/remove-one under a replace-one claim): the two datasets must be
neighbours under the bug's own claim (:func:`dpgp_audit.audit.neighbours.is_neighbour`)
and the exact privacy loss of the Gaussian release on that pair, ``ε(δ)`` of
``μ = ‖Σ^{-1/2}(m − m′)‖`` (the GDP profile, exact for a Gaussian mechanism with a
fixed covariance), must exceed the claimed ε.

``05.2`` — the certified ε lower bound from one event's counts (AUDITING.md §1;
Jagielski et al. 2020): ``log((CP_lower(k1, n1; α/2) − δ) / CP_upper(k0, n0; α/2))``,
floored at 0. Compared with :func:`dpgp_audit.audit.stats.epsilon_lower_bound`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from dpgp_audit.audit.neighbours import is_neighbour
from dpgp_audit.audit.stats import epsilon_lower_bound
from dpgp_audit.bugs import zoo
from dpgp_audit.dataset import Dataset
from dpgp_audit.exercises import exercise
from dpgp_audit.privacy.gdp import gdp_epsilon

MISMATCH = "planted/neighbour-mismatch"


def mismatch_mechanism(data: Dataset):
    """``planted/neighbour-mismatch`` built on ``data`` with the zoo's defaults."""
    bug = zoo.get(MISMATCH)
    return bug.build(data, **bug.defaults)


def pair_epsilon(mechanism, d0: Dataset, d1: Dataset) -> float:
    """Exact ε(δ) of a Gaussian release with a data-independent covariance on one pair."""
    m0 = np.atleast_1d(np.asarray(mechanism.mean(d0), dtype=float))
    m1 = np.atleast_1d(np.asarray(mechanism.mean(d1), dtype=float))
    cov = np.atleast_2d(np.asarray(mechanism.cov(d0), dtype=float))
    diff = m0 - m1
    mu = math.sqrt(max(float(diff @ np.linalg.solve(cov, diff)), 0.0))
    return gdp_epsilon(mechanism.claim.delta, mu) if mu > 0 else 0.0


def check_pair(answer, data: Dataset) -> Iterator[tuple[bool, str]]:
    """The properties of 05.1 on one dataset (shared with the instructors' hidden check)."""
    mech = mismatch_mechanism(data)
    pair = answer(data)
    ok = (isinstance(pair, tuple | list) and len(pair) == 2
          and all(isinstance(d, Dataset) for d in pair))
    yield ok, "it returns two Datasets (d0, d1), e.g. d0 = data and d1 = a modified copy"
    d0, d1 = pair
    yield d0.n == d1.n, "replace-one keeps the size: d0 and d1 have the same number of rows"
    rows = int(np.count_nonzero(np.any(d0.X != d1.X, axis=1) | (d0.y != d1.y)))
    yield rows == 1, f"exactly one row differs between d0 and d1 (yours: {rows})"
    yield is_neighbour(d0, d1, mech.claim.relation), (
        "the pair must be neighbours under the bug's claim: one whole row replaced, every "
        f"target within |y| <= {mech.claim.relation.d:g} (print mech.claim.describe())")
    eps = pair_epsilon(mech, d0, d1)
    yield eps > mech.claim.epsilon * (1 + 1e-9), (
        f"the exact ε of the release on your pair ({eps:.3f}) exceeds the claimed "
        f"{mech.claim.epsilon:g} (if not: which change of one row does replace-one allow "
        "that add/remove-one does not?)")


@exercise("05.1", "a neighbour pair that exposes planted/neighbour-mismatch")
def _exposing_pair(answer: object) -> Iterator[tuple[bool, str]]:
    from dpgp_audit.datasets.default import default_dataset

    yield callable(answer), "it is a function exposing_pair(data) returning (d0, d1)"
    yield from check_pair(answer, default_dataset())


def lower_bound_cases() -> list[tuple]:
    """(k1, n1, k0, n0, δ, α) cases with known structure."""
    return [(500, 500, 0, 500, 0.0, 0.01),        # a perfect distinguisher (TF-Privacy)
            (900, 1000, 100, 1000, 1e-5, 0.05),
            (9000, 10000, 2000, 10000, 1e-3, 0.05),
            (40, 100, 30, 100, 0.0, 0.05),        # rates too close: the floor at 0
            (300, 1000, 10, 1000, 0.2, 0.05),     # δ large against the hit rate
            (20000, 20000, 3, 20000, 1e-5, 0.001)]


@exercise("05.2", "the certified epsilon lower bound from one event's counts")
def _lower_bound(answer: object) -> Iterator[tuple[bool, str]]:
    yield callable(answer), "it is a function eps_lower_bound(k1, n1, k0, n0, delta, alpha)"
    first = lower_bound_cases()[0]
    got = answer(*first)
    try:
        got = float(got)
    except (TypeError, ValueError):
        got = None
    yield got is not None and math.isfinite(got), "it returns one finite number"
    yield got >= 0.0 and abs(got - epsilon_lower_bound(*first[:4], first[4], first[5])) < 1e-6, (
        "500 hits of 500 against 0 of 500 at alpha = 0.01 certify about 4.54: use "
        "Clopper–Pearson bounds (not the raw rates) and split alpha between the two "
        "proportions")
    case = lower_bound_cases()[1]
    yield abs(float(answer(*case)) - epsilon_lower_bound(*case[:4], case[4], case[5])) < 1e-6, (
        "with hits on both sides: lower bound on the D′ rate minus delta, over the upper "
        "bound on the D rate")
    case = lower_bound_cases()[4]
    yield abs(float(answer(*case)) - epsilon_lower_bound(*case[:4], case[4], case[5])) < 1e-6, (
        "delta is subtracted from the hit rate's lower bound before the logarithm")
    case = lower_bound_cases()[3]
    yield float(answer(*case)) == 0.0, (
        "when the bound would be negative (or the numerator is <= 0), report 0: every "
        "mechanism has epsilon >= 0")
    ok = all(abs(float(answer(*c)) - epsilon_lower_bound(*c[:4], c[4], c[5])) < 1e-6
             for c in lower_bound_cases())
    yield ok, "it matches the certified bound on every test case"
