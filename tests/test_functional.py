"""P.5: the functional mechanism (GP sample-path noise and its calibrations)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpgp_audit.norms import RKHS, Mahalanobis
from dpgp_audit.privacy.calibrate import CalibrationRangeError, UnprovenCalibrationWarning
from dpgp_audit.privacy.functional import (
    GPPathSampler,
    functional_mechanism_calibration,
    functional_mechanism_mu,
    functional_mechanism_scale,
    gp_path_noise,
    gram_factor,
)
from dpgp_audit.privacy.gdp import gdp_delta, gdp_mu


def eq_kernel(lengthscale=1.0, variance=1.0):
    """Naive-loop EQ kernel, independent of the package's kernels."""

    def k(X, Y):
        X = np.atleast_2d(np.asarray(X, float).reshape(len(X), -1))
        Y = np.atleast_2d(np.asarray(Y, float).reshape(len(Y), -1))
        out = np.empty((X.shape[0], Y.shape[0]))
        for i in range(X.shape[0]):
            for j in range(Y.shape[0]):
                out[i, j] = variance * math.exp(-np.sum((X[i] - Y[j]) ** 2) / (2 * lengthscale**2))
        return out

    return k


def test_p5_gdp_scale_is_delta_over_mu():
    c = functional_mechanism_scale(2.0, 1e-3, 3.0, "gdp")
    assert c == pytest.approx(3.0 / gdp_mu(2.0, 1e-3), rel=1e-12)
    assert gdp_delta(2.0, functional_mechanism_mu(c, 3.0)) == pytest.approx(1e-3, rel=1e-8)
    assert functional_mechanism_scale(2.0, 1e-3, 3.0, "analytic") == pytest.approx(c, rel=1e-9)


def test_p5_hall_scale_closed_form_and_range():
    # R Thm 3.3 / S18 eq. (1)-(2): c = Delta sqrt(2 ln(2/delta)) / eps.
    c = functional_mechanism_scale(0.5, 1e-2, 2.0, "hall")
    assert c == pytest.approx(2.0 * math.sqrt(2 * math.log(2 / 1e-2)) / 0.5, rel=1e-14)
    c2 = functional_mechanism_scale(0.5, 1e-2, 2.0, "classical")
    assert c2 == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25 / 1e-2)) / 0.5, rel=1e-14)
    with pytest.raises(CalibrationRangeError, match="epsilon <= 1"):
        functional_mechanism_scale(2.0, 1e-2, 1.0, "hall")
    with pytest.warns(UnprovenCalibrationWarning):
        cal = functional_mechanism_calibration(2.0, 1e-2, 1.0, "hall", allow_unproven=True)
    assert cal.proven is False


def test_p5_gdp_beats_hall_as_in_r_fig4():
    # R Fig. 4 setting: Delta^2 = 10, delta = 1e-3; the GDP multiplier is at least
    # 25% smaller than Hall's for eps <= 1.
    for eps in (0.1, 0.5, 1.0):
        hall = functional_mechanism_scale(eps, 1e-3, math.sqrt(10), "hall")
        gdp = functional_mechanism_scale(eps, 1e-3, math.sqrt(10), "gdp")
        assert gdp <= 0.75 * hall


@pytest.mark.parametrize(("args", "match"), [
    ((0.0, 1e-3, 1.0, "gdp"), "epsilon"),
    ((1.0, 0.0, 1.0, "gdp"), "delta"),
    ((1.0, 1e-3, -1.0, "gdp"), "sensitivity"),
    ((1.0, 1e-3, 1.0, "rdp"), "method"),
])
def test_p5_scale_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        functional_mechanism_scale(*args)


def test_p5_path_noise_covariance(rng):
    k = eq_kernel(1.5, 2.0)
    pts = np.linspace(0, 5, 7)[:, None]
    z = gp_path_noise(k, pts, 100_000, rng, scale=3.0)
    assert z.shape == (100_000, 7)
    np.testing.assert_allclose(np.cov(z.T), 9.0 * k(pts, pts), atol=0.05 * 18.0)
    assert np.abs(z.mean(axis=0)).max() < 5 * 3.0 * math.sqrt(2.0) / math.sqrt(1e5)


def test_p5_path_noise_handles_repeated_points(rng):
    # A PSD-singular Gram matrix: repeated points must receive identical values.
    k = eq_kernel(1.0)
    pts = np.array([[0.0], [1.0], [1.0], [2.5], [0.0]])
    z = gp_path_noise(k, pts, 1000, rng, scale=2.0)
    np.testing.assert_allclose(z[:, 1], z[:, 2], atol=1e-8)
    np.testing.assert_allclose(z[:, 0], z[:, 4], atol=1e-8)
    F = gram_factor(k(pts, pts))
    assert F.shape[1] == 3


def test_p5_sampler_caches_factor_and_matches_function(rng):
    k = eq_kernel(0.8)
    pts = np.linspace(-1, 1, 5)
    s = GPPathSampler(k, pts)
    assert s.points.shape == (5, 1)
    a = s.sample(4, np.random.default_rng(7), 2.0)
    b = gp_path_noise(k, pts, 4, np.random.default_rng(7), 2.0)
    np.testing.assert_array_equal(a, b)
    assert GPPathSampler(k, pts).factor is s.factor  # content-addressed cache hit
    np.testing.assert_allclose(s.covariance(2.0), 4.0 * k(pts[:, None], pts[:, None]))


def test_p5_path_noise_bad_input(rng):
    k = eq_kernel()
    with pytest.raises(ValueError, match="points"):
        gp_path_noise(k, np.array([[math.nan]]), 2, rng)
    with pytest.raises(ValueError, match="scale"):
        gp_path_noise(k, np.zeros((2, 1)), 2, rng, scale=0.0)
    with pytest.raises(ValueError, match="n must be"):
        gp_path_noise(k, np.zeros((2, 1)), 0, rng)
    with pytest.raises(TypeError, match="rng"):
        gp_path_noise(k, np.zeros((2, 1)), 2, 1)
    with pytest.raises(ValueError, match="positive semi-definite"):
        gp_path_noise(lambda X, Y: -np.eye(len(X)), np.zeros((2, 1)), 2, rng)
    with pytest.raises(ValueError, match="shape"):
        gp_path_noise(lambda X, Y: np.eye(3), np.zeros((2, 1)), 2, rng)


@given(st.lists(st.floats(-3, 3), min_size=2, max_size=6, unique=True),
       st.lists(st.floats(-4, 4), min_size=1, max_size=6, unique=True),
       st.integers(0, 5), st.floats(-1.0, 1.0))
def test_p5_grid_release_never_exceeds_rkhs_sensitivity(centres, grid, j, t):
    # R Lemma A.2: for f = sum beta_i k(., x_i) the Mahalanobis change at any finite
    # grid, measured against the GP noise covariance K_gg, is at most the RKHS norm.
    k = eq_kernel(1.0)
    X = np.array(centres)[:, None]
    G = np.array(grid)[:, None]
    j = j % len(centres)
    beta = np.zeros(len(centres))
    beta[j] = t
    rkhs = RKHS(k(X, X))(beta)
    K_gg = k(G, G) + 1e-9 * np.eye(len(grid))  # tiny ridge: only makes the check stricter
    change = k(G, X) @ beta
    assert Mahalanobis(K_gg)(change) <= rkhs * (1 + 1e-6) + 1e-9
