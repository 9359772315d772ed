"""P.1/P.3 teaching tables: refused calibrations are gaps; true ε from the GDP profile."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from dpgp_audit.privacy.calibrate import (
    CALIBRATION_METHODS,
    UnprovenCalibrationWarning,
    calibrate_gaussian,
)
from dpgp_audit.privacy.calibration_table import (
    calibration_sigmas,
    privacy_profile,
    true_epsilon,
    true_epsilons,
)

EPS = np.array([0.1, 0.5, 1.0, 2.0, 10.0, 20.0])


def test_p1_sigmas_match_calibrate_and_refusals_are_nan():
    out = calibration_sigmas(EPS, 1e-5, 2.0)
    assert set(out) == set(CALIBRATION_METHODS)
    for m, sig in out.items():
        for e, s in zip(EPS, sig, strict=True):
            if m in ("classical", "hall") and e > 1:
                assert math.isnan(s)
            else:
                assert s == calibrate_gaussian(e, 1e-5, 2.0, m).sigma


def test_p1_allow_unproven_fills_gaps_silently():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnprovenCalibrationWarning)
        out = calibration_sigmas(EPS, 1e-5, methods=("classical",), allow_unproven=True)
    closed = np.sqrt(2 * np.log(1.25e5)) / EPS  # Dwork & Roth Thm A.1 closed form
    np.testing.assert_allclose(out["classical"], closed, rtol=1e-12)


def _gaussian_delta(eps, sigma, sens):
    """Independent oracle: δ(ε) of N(0, σ²) vs N(Δ, σ²) from scipy.stats (Balle & Wang Thm 8)."""
    a = sens / (2 * sigma) - eps * sigma / sens
    b = -sens / (2 * sigma) - eps * sigma / sens
    return stats.norm.cdf(a) - math.exp(eps) * stats.norm.cdf(b)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 4.8448])
def test_p3_true_epsilon_inverts_the_gaussian_profile(sigma):
    eps = true_epsilon(sigma, 1e-3, 1.5)
    assert _gaussian_delta(eps, sigma, 1.5) == pytest.approx(1e-3, rel=1e-6)


def test_p3_analytic_is_tight_and_classical_overdelivers_below_one():
    sig = calibration_sigmas(EPS, 1e-5)
    np.testing.assert_allclose(true_epsilons(sig["analytic"], 1e-5), EPS, rtol=1e-9)
    cl = true_epsilons(sig["classical"], 1e-5)
    proven = EPS <= 1
    assert np.all(cl[proven] < EPS[proven]) and np.all(np.isnan(cl[~proven]))


def test_p3_forced_classical_violates_its_claim_at_large_epsilon():
    forced = calibration_sigmas([20.0], 1e-5, methods=("classical",), allow_unproven=True)
    assert true_epsilons(forced["classical"], 1e-5)[0] > 20.0


def test_p3_privacy_profile_matches_oracle_and_decreases():
    grid = np.linspace(0.0, 5.0, 11)
    prof = privacy_profile(grid, 0.8)
    oracle = [_gaussian_delta(e, 1.0, 0.8) for e in grid]
    np.testing.assert_allclose(prof, oracle, rtol=1e-8)
    assert np.all(np.diff(prof) < 0)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="delta"):
        calibration_sigmas([1.0], 1.5)
    with pytest.raises(ValueError, match="sigma"):
        true_epsilon(-1.0, 1e-5)
    assert math.isnan(true_epsilon(math.nan, 1e-5))
