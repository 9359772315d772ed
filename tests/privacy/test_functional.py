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


def test_p5_rdp_route_is_valid_and_looser_than_gdp():
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant

    for eps in (0.1, 1.0, 4.0):
        c_rdp = functional_mechanism_scale(eps, 1e-3, math.sqrt(10), "rdp")
        c_gdp = functional_mechanism_scale(eps, 1e-3, math.sqrt(10), "gdp")
        assert c_rdp > c_gdp
        # dp-accounting's RDP accountant (a tighter RDP-to-DP conversion than R eq. 38)
        # certifies at most the target epsilon for the same noise.
        acc = rdp_privacy_accountant.RdpAccountant()
        acc.compose(dp_accounting.GaussianDpEvent(c_rdp / math.sqrt(10)))
        assert acc.get_epsilon(1e-3) <= eps
        # closed form of R eq. (38)-(39): eps = mu^2/2 + mu sqrt(2 ln(1/delta))
        mu = math.sqrt(10) / c_rdp
        assert mu * mu / 2 + mu * math.sqrt(2 * math.log(1e3)) == pytest.approx(eps, rel=1e-12)


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
    ((1.0, 1e-3, 1.0, "laplace"), "method"),
    ((1.0, 2.0, 1.0, "rdp"), "delta"),
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
    np.testing.assert_allclose(z[:, 1], z[:, 2], atol=1e-6)
    np.testing.assert_allclose(z[:, 0], z[:, 4], atol=1e-6)
    assert np.std(z[:, 1] - z[:, 3]) > 0.1
    F = gram_factor(k(pts, pts), rtol=1e-12)  # numerical rank: three distinct points
    assert F.shape[1] == 3
    G = gram_factor(k(pts, pts))  # sampling factor keeps every positive eigenvalue
    np.testing.assert_allclose(G @ G.T, k(pts, pts), atol=1e-12)


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


def _mp_gdp_delta(eps, mu):
    """Independent mpmath evaluation of R eq. (5)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    e, m = mpmath.mpf(eps), mpmath.mpf(mu)
    return float(mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2))


def test_p5_hall_is_valid_where_proven():
    # Inside its proof (eps <= 1) Hall's multiplier over-delivers: exact delta < target.
    for eps, delta in [(0.1, 1e-5), (0.5, 1e-2), (1.0, 1e-3)]:
        c = functional_mechanism_scale(eps, delta, 1.0, "hall")
        assert _mp_gdp_delta(eps, 1.0 / c) < delta


def test_p5_hall_outside_its_proof_is_violated_at_s18_setting():
    # S18 fn. 2 (!Kung, standard DP-GP) uses eps = 50, delta = 0.01 with c(delta) of eq. (2).
    # That is outside Hall's proof (eps <= 1). White-box: with the grid at the centres
    # the released vector's Mahalanobis change equals the RKHS sensitivity / c, and the
    # exact profile at eps = 50 is ~1, not 0.01 (the true epsilon at delta = 0.01 is ~153).
    from dpgp_audit.dataset import Dataset
    from dpgp_audit.gp.kernels import EQ
    from dpgp_audit.methods.toolbox.primitives import FunctionalMechanism
    from dpgp_audit.privacy.gdp import gdp_epsilon

    X = np.linspace(0, 10, 8)[:, None]
    with pytest.warns(UnprovenCalibrationWarning):
        mech = FunctionalMechanism(X=X, grid=X, kernel=EQ(lengthscale=1.0), epsilon=50.0,
                                   delta=0.01, method="hall", allow_unproven=True)
    assert mech.claim.proven is False
    data = Dataset(X, np.zeros(8))
    norm = Mahalanobis(mech.cov(data))
    mu = max(norm(mech.mean(data.with_target(j, 1.0)) - mech.mean(data)) for j in range(8))
    assert mu == pytest.approx(mech.mu, rel=1e-6)  # tight: the grid contains the centres
    assert _mp_gdp_delta(50.0, mu) > 0.99
    assert gdp_epsilon(0.01, mu) > 150.0
    # ... while the GDP calibration (R Thm 4.1) at the same (eps, delta) holds exactly.
    c_gdp = functional_mechanism_scale(50.0, 0.01, mech.rkhs_sensitivity, "gdp")
    assert _mp_gdp_delta(50.0, mech.rkhs_sensitivity / c_gdp) == pytest.approx(0.01, rel=1e-6)


@pytest.mark.parametrize(("delta", "method", "crossover"), [
    (1e-2, "hall", 7.906), (1e-5, "hall", 9.391), (1e-2, "classical", 6.772)])
def test_p5_classical_formulas_break_between_eps_5_and_10(delta, method, crossover):
    # Beyond their proofs the eps <= 1 formulas stay valid for a while, then fail:
    # exact delta(eps) at c = c(delta)/eps crosses the target near `crossover`.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnprovenCalibrationWarning)
        below = functional_mechanism_scale(crossover - 0.01, delta, 1.0, method,
                                           allow_unproven=True)
        above = functional_mechanism_scale(crossover + 0.01, delta, 1.0, method,
                                           allow_unproven=True)
    assert _mp_gdp_delta(crossover - 0.01, 1.0 / below) < delta
    assert _mp_gdp_delta(crossover + 0.01, 1.0 / above) > delta
