"""P.1 / P.3 calibrations against independent references and closed forms."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpgp_audit.privacy.calibrate import (
    CalibrationRangeError,
    UnprovenCalibrationWarning,
    analytic_gaussian_sigma,
    calibrate_gaussian,
    classical_sigma,
    gdp_sigma,
    hall_sigma,
)
from dpgp_audit.privacy.gdp import gdp_delta, gdp_epsilon, gdp_mu

GRID = [(e, d) for e in (1e-3, 0.1, 0.5, 1.0, 2.0, 10.0, 50.0)
        for d in (1e-12, 1e-8, 1e-5, 1e-2, 0.3)]


def test_p1_reference_value_from_issue():
    assert analytic_gaussian_sigma(1.0, 1e-5) == pytest.approx(3.7306, abs=5e-5)


@pytest.mark.parametrize(("epsilon", "delta"), GRID)
def test_p1_analytic_matches_dp_accounting(epsilon, delta):
    ours = analytic_gaussian_sigma(epsilon, delta)
    ref = dp_accounting.get_sigma_gaussian(epsilon, delta)
    # dp-accounting bisects to ~1e-12 relative; ours solves to machine precision.
    assert ours == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize(("epsilon", "delta"), GRID)
def test_p1_analytic_and_gdp_routes_agree(epsilon, delta):
    assert analytic_gaussian_sigma(epsilon, delta) == pytest.approx(gdp_sigma(epsilon, delta),
                                                                      rel=1e-9)


@pytest.mark.parametrize(("epsilon", "delta"), GRID)
def test_p3_gdp_profile_matches_mpmath(epsilon, delta):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    mu = gdp_mu(epsilon, delta)
    e, m = mpmath.mpf(epsilon), mpmath.mpf(mu)
    ref = mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)
    assert gdp_delta(epsilon, mu) == pytest.approx(float(ref), rel=1e-9)
    assert float(ref) == pytest.approx(delta, rel=1e-9)


def test_p1_classical_and_hall_closed_forms():
    expected = 2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5
    assert classical_sigma(0.5, 1e-5, 2.0) == pytest.approx(expected)
    assert hall_sigma(0.5, 1e-5, 2.0) == pytest.approx(2.0 * math.sqrt(2 * math.log(2e5)) / 0.5)


def test_p1_true_epsilon_of_classical_calibrations():
    # Design notes: classical at (1, 1e-5) is really 0.751-DP, Hall's is 0.735-DP.
    assert gdp_epsilon(1e-5, 1 / classical_sigma(1, 1e-5)) == pytest.approx(0.751, abs=1e-3)
    assert gdp_epsilon(1e-5, 1 / hall_sigma(1, 1e-5)) == pytest.approx(0.735, abs=1e-3)


@pytest.mark.parametrize("method", ["classical", "hall"])
def test_p1_classical_refused_above_one(method):
    with pytest.raises(CalibrationRangeError, match="analytic"):
        calibrate_gaussian(1.5, 1e-5, method=method)
    with pytest.warns(UnprovenCalibrationWarning):
        cal = calibrate_gaussian(1.5, 1e-5, method=method, allow_unproven=True)
    assert not cal.proven


@pytest.mark.parametrize(("epsilon", "delta", "sens"), [
    (0.0, 1e-5, 1.0), (-1.0, 1e-5, 1.0), (math.nan, 1e-5, 1.0), (math.inf, 1e-5, 1.0),
    (1.0, 0.0, 1.0), (1.0, 1.0, 1.0), (1.0, -1e-3, 1.0), (1.0, math.nan, 1.0),
    (1.0, 1e-5, 0.0), (1.0, 1e-5, -1.0), (1.0, 1e-5, math.inf),
])
def test_p1_bad_parameters_raise(epsilon, delta, sens):
    for method in ("analytic", "gdp", "classical", "hall"):
        with pytest.raises(ValueError):
            calibrate_gaussian(epsilon, delta, sens, method)


def test_p1_unknown_method():
    with pytest.raises(ValueError, match="method"):
        calibrate_gaussian(1.0, 1e-5, 1.0, "laplace")  # type: ignore[arg-type]


@given(st.floats(1e-2, 1.0), st.floats(1e-10, 0.5))
def test_p1_analytic_never_above_classical(epsilon, delta):
    assert analytic_gaussian_sigma(epsilon, delta) <= classical_sigma(epsilon, delta) * (1 + 1e-12)
    assert analytic_gaussian_sigma(epsilon, delta) <= hall_sigma(epsilon, delta) * (1 + 1e-12)


@given(st.floats(1e-2, 20.0), st.floats(1e-2, 20.0), st.floats(0.05, 10.0))
def test_p3_profile_decreasing_in_epsilon_increasing_in_mu(e1, e2, mu):
    lo, hi = sorted((e1, e2))
    assert gdp_delta(hi, mu) <= gdp_delta(lo, mu) * (1 + 1e-12)
    assert gdp_delta(lo, mu) <= gdp_delta(lo, mu * 1.1) * (1 + 1e-12)


@given(st.floats(0.05, 30.0), st.floats(0.05, 5.0))
def test_p3_inverse_round_trips(epsilon, mu):
    delta = gdp_delta(epsilon, mu)
    if delta < 1e-300 or delta >= 1:
        return
    assert gdp_epsilon(delta, mu) == pytest.approx(epsilon, rel=1e-7, abs=1e-9)
    assert gdp_mu(epsilon, delta) == pytest.approx(mu, rel=1e-7)


def test_p3_sensitivity_scales_sigma_linearly():
    base = analytic_gaussian_sigma(1.0, 1e-5)
    assert np.isclose(analytic_gaussian_sigma(1.0, 1e-5, 7.5), 7.5 * base, rtol=1e-14)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.1, 1e-5), (1.0, 1e-5), (3.0, 1e-9)])
def test_p1_analytic_factor_kept_by_value_is_the_root_search_itself(epsilon, delta):
    # issue 20 §2: the Balle-Wang factor is memoised by (eps, delta); the kept value must be
    # the root search's own, bit for bit, on a first call and on every repeat
    from dpgp_audit.privacy import calibrate as cal

    cal._balle_wang_alpha.cache_clear()
    direct = cal._balle_wang_alpha.__wrapped__(epsilon, delta)
    assert cal._balle_wang_alpha(epsilon, delta) == direct
    assert cal._balle_wang_alpha(epsilon, delta) == direct
    assert cal._balle_wang_alpha.cache_info().hits >= 1
    assert analytic_gaussian_sigma(epsilon, delta, 2.0) == direct / math.sqrt(2 * epsilon) * 2.0
