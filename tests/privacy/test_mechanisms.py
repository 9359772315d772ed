"""P.1, P.2, P.4: noise functions, exponential mechanism, multivariate Gaussian mechanism."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant
from hypothesis import given
from hypothesis import strategies as st
from scipy import special, stats

from dpgp_audit.norms import Mahalanobis
from dpgp_audit.privacy.mechanisms import (
    exponential_log_probabilities,
    exponential_mechanism,
    exponential_probabilities,
    gaussian_noise,
    laplace_noise,
    laplace_scale,
    multivariate_gaussian_noise,
)
from dpgp_audit.privacy.multivariate import (
    covariance_factor,
    linear_query_changes,
    mahalanobis_sensitivity,
)

# ---------------------------------------------------------------- Gaussian / Laplace


def test_p1_gaussian_noise_moments(rng):
    z = gaussian_noise(2.5, (200_000,), rng)
    assert z.shape == (200_000,)
    assert abs(z.mean()) < 5 * 2.5 / math.sqrt(z.size)
    assert z.std() == pytest.approx(2.5, rel=0.01)


def test_p2_laplace_scale_closed_form_and_dp_accounting():
    b = laplace_scale(0.5, 2.0)
    assert b == 4.0
    # dp-accounting's PLD of a Laplace event with parameter b (sensitivity 1):
    # pure epsilon = 1/b, so delta(1/b) is ~0 and delta below 1/b is positive.
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(dp_accounting.LaplaceDpEvent(b / 2.0))  # per-unit-sensitivity parameter
    assert acc.get_delta(0.5) < 1e-12
    assert acc.get_delta(0.45) > 1e-3


def test_p2_laplace_noise_distribution(rng):
    z = laplace_noise(1.5, 100_000, rng)
    # Kolmogorov-Smirnov against scipy's Laplace; generous level, fixed seed.
    assert stats.kstest(z, stats.laplace(scale=1.5).cdf).pvalue > 1e-4
    assert np.mean(np.abs(z)) == pytest.approx(1.5, rel=0.02)


def test_p2_laplace_pure_epsilon_is_shift_over_scale():
    # Closed form: log density ratio of Lap(b) at any x between shifts 0 and s is at most s/b.
    b, s = 0.7, 0.3
    x = np.linspace(-5, 5, 2001)
    ratio = stats.laplace(scale=b).logpdf(x) - stats.laplace(loc=s, scale=b).logpdf(x)
    assert np.max(np.abs(ratio)) == pytest.approx(s / b, rel=1e-12)
    assert laplace_scale(s / b, s) == pytest.approx(b)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_noise_rejects_bad_scales(rng, bad):
    with pytest.raises(ValueError, match="sigma"):
        gaussian_noise(bad, 3, rng)
    with pytest.raises(ValueError, match="scale"):
        laplace_noise(bad, 3, rng)
    with pytest.raises(ValueError, match="epsilon"):
        laplace_scale(bad, 1.0)
    with pytest.raises(ValueError, match="l1_sensitivity"):
        laplace_scale(1.0, bad)


def test_noise_requires_generator():
    with pytest.raises(TypeError, match="rng"):
        gaussian_noise(1.0, 3, 42)
    with pytest.raises(TypeError, match="rng"):
        laplace_noise(1.0, 3, None)
    with pytest.raises(TypeError, match="rng"):
        exponential_mechanism([0.0, 1.0], 1.0, 1.0, 5, 0)


# ---------------------------------------------------------------- exponential mechanism


def test_p2_exponential_probabilities_closed_form():
    u = np.array([0.0, 1.0, 3.0])
    eps, du = 0.8, 2.0
    w = np.exp(eps * u / (2 * du))
    np.testing.assert_allclose(exponential_probabilities(u, eps, du), w / w.sum(), rtol=1e-14)


def test_p2_exponential_probabilities_match_mpmath_at_huge_utilities():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    u = np.array([1e6, 1e6 - 3.0, 1e6 - 40.0, -2e6, 1e6 + 1.5])
    eps, du = 1.3, 0.5
    p = exponential_probabilities(u, eps, du)
    weights = [mpmath.exp(mpmath.mpf(eps) * mpmath.mpf(float(x)) / (2 * mpmath.mpf(du)))
               for x in u]
    total = mpmath.fsum(weights)
    ref = np.array([float(wi / total) for wi in weights])
    np.testing.assert_allclose(p, ref, rtol=1e-9, atol=1e-300)
    assert np.all(np.isfinite(exponential_log_probabilities(u, eps, du)))


@given(st.lists(st.floats(-1e7, 1e7), min_size=1, max_size=30),
       st.floats(1e-3, 50.0), st.floats(1e-3, 1e3))
def test_p2_exponential_probabilities_sum_to_one(u, eps, du):
    p = exponential_probabilities(np.array(u), eps, du)
    assert np.all(p >= 0)
    assert math.fsum(p) == pytest.approx(1.0, abs=1e-12)


@given(st.lists(st.floats(-100, 100), min_size=2, max_size=12).flatmap(
           lambda u: st.tuples(st.just(u), st.lists(st.floats(-1.0, 1.0), min_size=len(u),
                                                    max_size=len(u)))),
       st.floats(1e-2, 20.0))
def test_p2_exponential_ratio_bounded_by_e_epsilon(pair, eps):
    # Neighbouring utility vectors differ by at most du = 1 in every entry.
    u, change = pair
    u0, u1 = np.array(u), np.array(u) + np.array(change)
    lp0 = exponential_log_probabilities(u0, eps, 1.0)
    lp1 = exponential_log_probabilities(u1, eps, 1.0)
    assert np.max(np.abs(lp0 - lp1)) <= eps * (1 + 1e-9) + 1e-12


def test_p2_exponential_ratio_is_attained():
    # Two candidates, utilities (0, 0) vs (du, -du): the first candidate's probability
    # moves from 1/2 to e^eps / (1 + e^eps) (closed form), a ratio below e^eps.
    eps = 1.0
    u0 = np.array([0.0, 0.0])
    u1 = np.array([1.0, -1.0])
    p0 = exponential_probabilities(u0, eps, 1.0)
    p1 = exponential_probabilities(u1, eps, 1.0)
    expected = math.exp(eps) / (1 + math.exp(eps)) / 0.5  # p1[0] / p0[0]
    assert p1[0] / p0[0] == pytest.approx(expected, rel=1e-14)
    assert p1[0] / p0[0] <= math.exp(eps)


def test_p2_exponential_mechanism_chi_square(rng):
    u = np.array([1e6, 1e6 - 1.0, 1e6 - 2.0, 1e6 + 0.5, 0.0])  # last has ~zero mass
    eps, du, n = 2.0, 1.0, 200_000
    idx = exponential_mechanism(u, eps, du, n, rng)
    assert idx.shape == (n,) and idx.dtype == np.int64
    p = exponential_probabilities(u, eps, du)
    counts = np.bincount(idx, minlength=u.size)
    assert counts[4] == 0
    keep = p > 1e-9
    chi2 = np.sum((counts[keep] - n * p[keep]) ** 2 / (n * p[keep]))
    assert stats.chi2(keep.sum() - 1).sf(chi2) > 1e-4


def test_p2_exponential_mechanism_never_selects_zero_mass_tail(rng):
    u = np.array([0.0, -1e9, -1e9])
    assert np.all(exponential_mechanism(u, 1.0, 1.0, 10_000, rng) == 0)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"utilities": [0.0, math.nan]}, "utilities"),
    ({"utilities": []}, "utilities"),
    ({"utilities": [[0.0, 1.0]]}, "utilities"),
    ({"epsilon": 0.0}, "epsilon"),
    ({"sensitivity": -1.0}, "sensitivity"),
    ({"n": 0}, "n"),
])
def test_p2_exponential_bad_input(rng, kwargs, match):
    args = {"utilities": [0.0, 1.0], "epsilon": 1.0, "sensitivity": 1.0, "n": 3, **kwargs}
    with pytest.raises(ValueError, match=match):
        exponential_mechanism(args["utilities"], args["epsilon"], args["sensitivity"],
                              args["n"], rng)


def test_p2_exponential_log_probabilities_are_logsumexp_stable():
    u = np.array([0.0, -5e5, 5e5])
    lp = exponential_log_probabilities(u, 1.0, 1.0)
    assert special.logsumexp(lp) == pytest.approx(0.0, abs=1e-12)
    assert lp[2] == pytest.approx(0.0, abs=1e-12)
    assert lp[1] == pytest.approx(-5e5, rel=1e-12)


# ---------------------------------------------------------------- multivariate Gaussian (P.4)


def _spd(k, rng):
    A = rng.standard_normal((k, k))
    return A @ A.T + 0.5 * np.eye(k)


def test_p4_factor_reproduces_full_rank_and_singular_M(rng):
    M = _spd(5, rng)
    F = covariance_factor(M)
    assert F.shape == (5, 5)
    np.testing.assert_allclose(F @ F.T, M, rtol=1e-10, atol=1e-12)
    B = rng.standard_normal((5, 2))
    S = B @ B.T
    Fs = covariance_factor(S, rtol=1e-10)
    assert Fs.shape == (5, 2)
    np.testing.assert_allclose(Fs @ Fs.T, S, atol=1e-10)


@pytest.mark.parametrize(("M", "match"), [
    (np.array([[1.0, 0.0], [0.0, -1.0]]), "positive semi-definite"),
    (np.array([[1.0, 0.5], [0.0, 1.0]]), "symmetric"),
    (np.array([[1.0, math.nan], [math.nan, 1.0]]), "non-finite"),
    (np.zeros((2, 2)), "zero"),
    (np.ones((2, 3)), "square"),
])
def test_p4_factor_rejects_bad_M(M, match):
    with pytest.raises(ValueError, match=match):
        covariance_factor(M)


def test_p4_multivariate_noise_covariance(rng):
    B = rng.standard_normal((4, 2))
    M = B @ B.T  # rank 2
    F = covariance_factor(M, rtol=1e-10)
    z = multivariate_gaussian_noise(F, (100_000,), rng)
    assert z.shape == (100_000, 4)
    np.testing.assert_allclose(np.cov(z.T), M, atol=0.05 * np.abs(M).max())
    # The noise lives in the range of M: no component orthogonal to it.
    _, U = np.linalg.eigh(M)
    null = U[:, :2]
    assert np.max(np.abs(z @ null)) < 1e-8


def test_p4_mahalanobis_sensitivity_closed_form(rng):
    M = _spd(3, rng)
    C = rng.standard_normal((3, 6))
    d = 0.7
    changes = linear_query_changes(C, d)
    expected = max(math.sqrt(d * d * C[:, i] @ np.linalg.solve(M, C[:, i])) for i in range(6))
    assert mahalanobis_sensitivity(M, changes) == pytest.approx(expected, rel=1e-10)
    # identity M reduces to the L2 sensitivity
    assert mahalanobis_sensitivity(np.eye(3), changes) == pytest.approx(
        d * np.max(np.linalg.norm(C, axis=0)), rel=1e-12)


def test_p4_singular_M_allowed_when_changes_in_range(rng):
    # S18 cloaking shape: M = sum_i lambda_i c_i c_i^T with k > n is singular,
    # yet every change d c_i lies in its range.
    C = rng.standard_normal((6, 3))
    M = C @ np.diag([1.0, 2.0, 0.5]) @ C.T
    assert np.linalg.matrix_rank(M) == 3
    delta_m = mahalanobis_sensitivity(M, linear_query_changes(C, 1.0))
    # c_i^T (sum lambda_j c_j c_j^T)^+ c_i = 1/lambda_i for linearly independent c_i.
    assert delta_m == pytest.approx(math.sqrt(1 / 0.5), rel=1e-8)


def test_p4_singular_M_refused_with_offending_direction(rng):
    C = rng.standard_normal((4, 3))
    M = np.outer(C[:, 0], C[:, 0]) + np.outer(C[:, 1], C[:, 1])  # misses c_2
    with pytest.raises(ValueError, match=r"change direction 2 .*outside its range"):
        mahalanobis_sensitivity(M, linear_query_changes(C, 1.0))


@given(st.integers(0, 10_000))
def test_p4_sensitivity_bounds_every_neighbour_change(seed):
    # Property: for random y, y' differing in one entry by |t| <= d, the Mahalanobis
    # norm of C(y - y') never exceeds the computed sensitivity.
    g = np.random.default_rng(seed)
    k, n, d = 4, 5, 0.9
    C = g.standard_normal((k, n))
    M = _spd(k, g)
    bound = mahalanobis_sensitivity(M, linear_query_changes(C, d))
    norm = Mahalanobis(M)
    y = g.uniform(-1, 1, n)
    i = int(g.integers(n))
    y2 = y.copy()
    y2[i] += g.uniform(-d, d)
    assert norm(C @ y - C @ y2) <= bound * (1 + 1e-9)


def test_p4_calibrated_release_matches_gaussian_profile():
    # White-box: the privacy loss of N(q, s^2 M) vs N(q + v, s^2 M) is Gaussian with
    # mean mu^2/2, mu = ||M^{-1/2} v|| / s; dp-accounting's Gaussian event with the
    # matching noise multiplier gives the same delta(eps).
    from dpgp_audit.privacy.calibrate import calibrate_gaussian
    from dpgp_audit.privacy.gdp import gdp_delta

    M = np.array([[2.0, 0.3], [0.3, 0.5]])
    v = np.array([0.4, -0.2])
    dm = mahalanobis_sensitivity(M, v[:, None])
    cal = calibrate_gaussian(1.0, 1e-5, dm)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.GaussianDpEvent(cal.sigma / dm))
    assert acc.get_delta(1.0) == pytest.approx(1e-5, rel=0.05)
    assert gdp_delta(1.0, dm / cal.sigma) == pytest.approx(1e-5, rel=1e-8)


def test_p4_sampling_factor_keeps_tiny_variances(rng):
    # A direction with tiny but positive variance must still receive noise: dropping it
    # would release the query's component there exactly.
    M = np.diag([1.0, 1e-14])
    F = covariance_factor(M)
    assert F.shape == (2, 2)
    z = multivariate_gaussian_noise(F, 20_000, rng)
    assert np.std(z[:, 1]) == pytest.approx(1e-7, rel=0.05)
    assert covariance_factor(M, rtol=1e-10).shape == (2, 1)
