"""H.2 noise-aware posterior: collapsed sums vs loop oracles, Monte Carlo, PD failures."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpgp_audit.gp.kernels import EQ
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.gp.svgp import predict_from_qu, sufficient_statistics, titsias_qu
from dpgp_audit.methods.honkela.posterior import (
    RegularisationError,
    noise_aware_qu,
    pd_failure_rate,
    regulariser_lambda,
    s21,
    s22_paper,
    s22_symmetric,
    symmetric_noise,
)


def _setup(d, rng, noise_var=0.05):
    Z = np.linspace(-2, 2, d)[:, None]
    X = rng.uniform(-3, 3, size=(40, 1))
    y = np.sin(2 * X[:, 0])
    k = EQ(lengthscale=1.0)
    Kzz = k(Z)
    A, B = sufficient_statistics(k, Z, X, y)
    return Kzz, A, B, noise_var


def _unit(d, i, j):
    E = np.zeros((d, d))
    E[i, j] = 1.0
    return E


def _s22_paper_loop(Kzz, Sig, a, sb, s2):
    """H eq. (14) literally: sums over the unit matrices E_ij."""
    d = Kzz.shape[0]
    out = np.zeros((d, d))
    aa = np.outer(a, a)
    for i in range(d):
        Eii = _unit(d, i, i)
        out += s2**-4 * sb**2 * Kzz @ Sig @ Eii @ Sig @ aa @ Sig @ Eii @ Sig @ Kzz
        for j in range(i + 1, d):
            Eij, Eji = _unit(d, i, j), _unit(d, j, i)
            out += s2**-4 * sb**2 / 2 * (Kzz @ Sig @ Eij @ Sig @ aa @ Sig @ Eji @ Sig @ Kzz
                                         + Kzz @ Sig @ Eji @ Sig @ aa @ Sig @ Eij @ Sig @ Kzz)
    return out


def _s22_symmetric_loop(Kzz, Sig, a, sb, s2):
    """Covariance of the first-order change of m for symmetric E_b, entry by entry."""
    d = Kzz.shape[0]
    out = np.zeros((d, d))
    for i in range(d):
        for j in range(i, d):
            E = _unit(d, i, j) + (_unit(d, j, i) if j != i else 0)
            g = -(s2**-2) * Kzz @ Sig @ E @ Sig @ a
            var = sb**2 if i == j else sb**2 / 2
            out += var * np.outer(g, g)
    return out


@pytest.mark.parametrize("d", [1, 2, 3, 5, 7])
def test_collapsed_corrections_match_loop_oracles(d, rng):
    Kzz, A, B, s2 = _setup(d, rng)
    sa, sb = 0.7, 0.9
    a = A + rng.normal(size=d)
    lam = regulariser_lambda(sb, s2, d)
    Sig = np.linalg.inv(Kzz + B / s2 + lam * np.eye(d))
    M, v = Kzz @ Sig, Sig @ a
    np.testing.assert_allclose(s22_paper(M, v, sb, s2), _s22_paper_loop(Kzz, Sig, a, sb, s2),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s22_symmetric(M, v, sb, s2),
                               _s22_symmetric_loop(Kzz, Sig, a, sb, s2), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s21(M, sa, s2), sa**2 / s2**2 * Kzz @ Sig @ Sig @ Kzz,
                               rtol=1e-9, atol=1e-12)


def test_symmetric_correction_matches_monte_carlo_and_paper_differs(rng):
    d, s2 = 4, 0.05
    Kzz, A, B, _ = _setup(d, rng, s2)
    sb = 1e-3 * np.abs(B).max()          # small noise: the linearisation is accurate
    lam = 0.5
    E = symmetric_noise(sb, d, (40000,), rng)
    P = Kzz + (B + E) / s2 + lam * np.eye(d)
    ms = np.einsum("ij,njk,k->ni", Kzz, np.linalg.inv(P), A) / s2
    emp = np.cov(ms.T)
    Sig = np.linalg.inv(Kzz + B / s2 + lam * np.eye(d))
    M, v = Kzz @ Sig, Sig @ A
    sym = s22_symmetric(M, v, sb, s2)
    pap = s22_paper(M, v, sb, s2)
    scale = np.abs(sym).max()
    assert np.abs(emp - sym).max() < 0.05 * scale
    # the printed eq. (14) omits the cross terms: a visible difference in this setting
    assert np.abs(pap - sym).max() > 0.1 * scale


def test_symmetric_noise_law(rng):
    E = symmetric_noise(2.0, 3, (50000,), rng)
    assert np.allclose(E, np.swapaxes(E, -1, -2))
    assert abs(E[:, 0, 0].var() - 4.0) < 0.1
    assert abs(E[:, 0, 1].var() - 2.0) < 0.06


def test_zero_noise_reduces_to_titsias(rng):
    Kzz, A, B, s2 = _setup(5, rng)
    ref = titsias_qu(Kzz, A, B, s2)
    for corr in ("paper", "symmetric", "none"):
        q = noise_aware_qu(Kzz, A, B, s2, 0.0, 0.0, correction=corr, lam=0.0)
        np.testing.assert_allclose(q.m, ref.m, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(q.S, ref.S, rtol=1e-7, atol=1e-10)


def test_titsias_with_z_equal_x_is_the_exact_gp(rng):
    X = rng.uniform(-3, 3, size=(12, 1))
    y = np.cos(X[:, 0])
    k = EQ(lengthscale=0.9, variance=1.3)
    s2 = 0.1
    A, B = sufficient_statistics(k, X, X, y, chunk=5)
    qu = titsias_qu(k(X), A, B, s2)
    V = np.linspace(-3, 3, 7)[:, None]
    mean, var = predict_from_qu(k(X), k(V, X), k.diag(V), qu, jitter=0.0)
    ref_mean, ref_var = ExactGP(k, s2).fit(X, y).predict(V)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(var, ref_var, rtol=1e-5, atol=1e-8)
    _, cov = predict_from_qu(k(X), k(V, X), k(V), qu, full_cov=True, jitter=0.0)
    np.testing.assert_allclose(np.diag(cov), var, rtol=1e-8, atol=1e-10)


def test_sufficient_statistics_chunks_and_weights(rng):
    Z = np.linspace(0, 1, 4)[:, None]
    X = rng.uniform(size=(33, 1))
    y = rng.normal(size=33)
    w = rng.uniform(0.5, 2, size=33)
    k = EQ(lengthscale=0.3)
    A, B = sufficient_statistics(k, Z, X, y, weights=w, chunk=7)
    K = k(Z, X)
    np.testing.assert_allclose(A, K @ (w * y), rtol=1e-12)
    np.testing.assert_allclose(B, (K * w) @ K.T, rtol=1e-12)


def test_lambda_formula():
    d, sb, s2, rho = 9, 0.3, 0.01, 0.01
    assert math.isclose(regulariser_lambda(sb, s2, d, rho),
                        sb / s2 * math.sqrt(d * math.log(2 * d * d / rho)) * (d + 1) / (2 * d))
    with pytest.raises(ValueError, match="rho"):
        regulariser_lambda(1, 1, 3, rho=1.5)


def test_pd_failure_rate_d1_matches_closed_form(rng):
    # d = 1: fails iff N(0, 1) < -sqrt(log(2/rho)); P = Φ(-sqrt(log 200)) = 0.0107 > rho = 0.01
    p = float(stats.norm.cdf(-math.sqrt(math.log(200.0))))
    assert p > 0.01
    n = 200000
    rate = pd_failure_rate(1, n, rng)
    assert abs(rate - p) < 4 * math.sqrt(p * (1 - p) / n)


def test_pd_failure_raises_or_inflates(rng):
    d = 3
    Kzz = EQ(lengthscale=1.0)(np.linspace(0, 1, d)[:, None])
    B_bad = -50.0 * np.eye(d)        # a noise draw that breaks the regulariser
    with pytest.raises(RegularisationError, match="not positive definite"):
        noise_aware_qu(Kzz, np.ones(d), B_bad, 1.0, 0.1, 0.1)
    q = noise_aware_qu(Kzz, np.ones(d), B_bad, 1.0, 0.1, 0.1, on_not_pd="inflate")
    assert q.inflations > 0
    assert np.linalg.eigvalsh(q.S)[0] > 0
    assert q.lam == regulariser_lambda(0.1, 1.0, d) * 2**q.inflations


def test_noise_aware_validation():
    with pytest.raises(ValueError, match="shapes"):
        noise_aware_qu(np.eye(2), np.ones(3), np.eye(2), 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="correction"):
        noise_aware_qu(np.eye(2), np.ones(2), np.eye(2), 1.0, 1.0, 1.0, correction="x")
    with pytest.raises(ValueError, match="non-finite"):
        noise_aware_qu(np.eye(2), np.array([1.0, np.nan]), np.eye(2), 1.0, 1.0, 1.0)
