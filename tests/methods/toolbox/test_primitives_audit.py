"""Audits of the toolbox mechanisms (P.1–P.5) with the kit's own auditors (A.2, A.3).

White-box (exact) for the Gaussian releases over every single-target change of
size d; black-box (certified lower bound) for the Laplace and exponential ones.
A correct mechanism must never be flagged; a calibration used outside its proof
at the S18 setting must be.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpgp_audit import catalogue
from dpgp_audit.audit.blackbox.fixed import audit_blackbox
from dpgp_audit.audit.result import Verdict
from dpgp_audit.audit.whitebox import audit_whitebox
from dpgp_audit.privacy.calibrate import UnprovenCalibrationWarning


def _pairs(data, d):
    return [(data, data.with_target(i, float(data.y[i] + s * d)))
            for i in range(data.n) for s in (-1.0, 1.0)]


@pytest.mark.parametrize("mid", ["P.1/gaussian-sum", "P.4/multivariate-gaussian",
                                 "P.5/functional"])
def test_whitebox_finds_no_violation(mid):
    mech, data = catalogue.get(mid).make()
    res = audit_whitebox(mech, _pairs(data, mech.claim.relation.d))
    assert res.verdict is Verdict.NO_EVIDENCE
    assert res.estimate <= mech.claim.epsilon * (1 + 1e-9)


def test_whitebox_multivariate_is_tight():
    # The cloak-shaped M makes every column equally exposed: the exact epsilon at the
    # claimed delta equals the claim (analytic calibration is the smallest sigma).
    mech, data = catalogue.get("P.4/multivariate-gaussian").make()
    res = audit_whitebox(mech, _pairs(data, 1.0))
    assert res.estimate == pytest.approx(mech.claim.epsilon, rel=1e-6)


def test_whitebox_flags_hall_functional_at_s18_epsilon():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnprovenCalibrationWarning)
        mech, data = catalogue.get("P.5/functional").make(epsilon=50.0, delta=0.01,
                                                          method="hall", allow_unproven=True)
    res = audit_whitebox(mech, _pairs(data, 1.0))
    assert res.verdict is Verdict.VIOLATION


@pytest.mark.parametrize("mid", ["P.2/laplace-sum", "P.2/exponential"])
def test_blackbox_finds_no_violation(mid):
    mech, data = catalogue.get(mid).make()
    worst = max(_pairs(data, 1.0), key=lambda p: float(np.max(np.abs(
        mech.query(p[0]) - mech.query(p[1])))))
    res = audit_blackbox(mech, worst[0], worst[1], n=100_000, rng=np.random.default_rng(5),
                         alpha=1e-3)
    assert res.verdict is not Verdict.VIOLATION
    assert res.estimate <= mech.claim.epsilon


def test_blackbox_laplace_whole_rows_extreme_pair():
    mech, data = catalogue.get("P.2/laplace-sum-rows").make()
    d0 = data.with_row(0, data.X[0], -1.0)
    d1 = data.with_row(0, data.X[0] + 4.0, 1.0)
    res = audit_blackbox(mech, d0, d1, n=100_000, rng=np.random.default_rng(6), alpha=1e-3)
    assert res.verdict is not Verdict.VIOLATION
    assert 0.5 < res.estimate <= mech.claim.epsilon  # the extreme pair nearly attains epsilon
