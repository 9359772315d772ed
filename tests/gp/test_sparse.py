"""Sparse GP regression (FITC / SoR / DTC) against naive dense formulas and the exact GP."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpgp_audit.gp.kernels import EQ, Matern52
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.gp.sparse import SparseGP


def _setup(rng, n=30, m=5):
    X = rng.uniform(-3, 3, size=(n, 1))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=n)
    Z = np.linspace(-3, 3, m)[:, None]
    Xs = rng.uniform(-4, 4, size=(7, 1))
    return X, y, Z, Xs


def _naive(kernel, s2, X, y, Z, Xs, approx):
    """Dense textbook formulas with explicit inverses (Quiñonero-Candela & Rasmussen 2005)."""
    Kuu_inv = np.linalg.inv(kernel(Z))

    def Q(A, B):
        return kernel(A, Z) @ Kuu_inv @ kernel(Z, B)

    Qff = Q(X, X)
    lam = np.diag(np.diag(kernel(X) - Qff)) if approx == "fitc" else 0.0 * Qff
    Sy = Qff + lam + s2 * np.eye(len(y))
    Sinv = np.linalg.inv(Sy)
    Qsf = Q(Xs, X)
    mean = Qsf @ Sinv @ y
    prior = Q(Xs, Xs) if approx == "sor" else kernel(Xs)
    cov = prior - Qsf @ Sinv @ Qsf.T
    _, logdet = np.linalg.slogdet(Sy)
    lml = -0.5 * y @ Sinv @ y - 0.5 * logdet - 0.5 * len(y) * np.log(2 * np.pi)
    return mean, cov, lml, Qsf @ Sinv


@pytest.mark.parametrize("approx", ["fitc", "sor", "dtc"])
@pytest.mark.parametrize("kernel", [EQ(0.9, 1.3), Matern52(1.5, 0.8)])
def test_matches_naive_dense_formulas(approx, kernel, rng):
    X, y, Z, Xs = _setup(rng)
    s2 = 0.05
    fitted = SparseGP(kernel, s2, Z, approx, jitter=0.0).fit(X, y)
    mean_ref, cov_ref, lml_ref, C_ref = _naive(kernel, s2, X, y, Z, Xs, approx)
    m, c = fitted.predict(Xs, full_cov=True)
    np.testing.assert_allclose(m, mean_ref, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(c, cov_ref, rtol=1e-6, atol=1e-9)
    _, v = fitted.predict(Xs)
    np.testing.assert_allclose(v, np.clip(np.diag(cov_ref), 0, None), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(fitted.log_marginal_likelihood(), lml_ref, rtol=1e-9)
    C = fitted.mean_weights(Xs)
    np.testing.assert_allclose(C, C_ref, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(C @ y, m, rtol=1e-10, atol=1e-12)


def test_fitc_matches_s21_eq9_as_printed(rng):
    X, y, Z, Xs = _setup(rng)
    k, s2 = EQ(0.8), 0.1
    fitted = SparseGP(k, s2, Z, "fitc", jitter=0.0).fit(X, y)
    Kmm, Kmn, ksm = k(Z), k(Z, X), k(Xs, Z)
    lam = np.diag(k(X)) - np.einsum("ij,ij->j", Kmn, np.linalg.solve(Kmm, Kmn))
    D_inv = np.diag(1 / (lam + s2))
    Qmm = Kmm + Kmn @ D_inv @ Kmn.T
    C_eq9 = ksm @ np.linalg.inv(Qmm) @ Kmn @ D_inv
    var_eq9 = (np.diag(k(Xs)) - np.einsum("ij,jk,ik->i", ksm,
                                          np.linalg.inv(Kmm) - np.linalg.inv(Qmm), ksm) + s2)
    np.testing.assert_allclose(fitted.mean_weights(Xs), C_eq9, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(fitted.predict(Xs, include_noise=True)[1], var_eq9, rtol=1e-7)


def test_inducing_at_data_recovers_exact_gp(rng):
    X, y, _, Xs = _setup(rng, n=12)
    k, s2 = EQ(1.0), 0.1
    exact = ExactGP(k, s2).fit(X, y)
    for approx in ("fitc", "dtc", "sor"):
        sp = SparseGP(k, s2, X, approx, jitter=0.0).fit(X, y)
        np.testing.assert_allclose(sp.predict(Xs)[0], exact.predict(Xs)[0], rtol=1e-6,
                                   atol=1e-8)
        np.testing.assert_allclose(sp.log_marginal_likelihood(),
                                   exact.log_marginal_likelihood(), rtol=1e-6)
    fitc = SparseGP(k, s2, X, "fitc", jitter=0.0).fit(X, y)
    np.testing.assert_allclose(fitc.predict(Xs)[1], exact.predict(Xs)[1], rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(fitc.lam, 0.0, atol=1e-8)


@given(seed=st.integers(0, 2**32 - 1), m=st.integers(1, 8), ls=st.floats(0.3, 3.0))
def test_titsias_elbo_below_exact_evidence(seed, m, ls):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(15, 1))
    y = rng.normal(size=15)
    Z = rng.uniform(-3, 3, size=(m, 1))
    k, s2 = EQ(ls), 0.2
    elbo = SparseGP(k, s2, Z, "dtc").fit(X, y).titsias_elbo()
    assert elbo <= ExactGP(k, s2).fit(X, y).log_marginal_likelihood() + 1e-8


def test_errors(rng):
    X, y, Z, _ = _setup(rng)
    with pytest.raises(ValueError, match="noise_variance"):
        SparseGP(EQ(), 0.0, Z)
    with pytest.raises(ValueError, match="approximation"):
        SparseGP(EQ(), 0.1, Z, "vfe")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-finite"):
        SparseGP(EQ(), 0.1, np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="columns"):
        SparseGP(EQ(), 0.1, Z).fit(np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="non-finite"):
        SparseGP(EQ(), 0.1, Z).fit(X, np.full(len(y), np.inf))
    with pytest.raises(ValueError, match="fitc"):
        SparseGP(EQ(), 0.1, Z).fit(X, y).titsias_elbo()
    with pytest.raises(ValueError, match="K_ZZ.*not positive definite"):
        SparseGP(EQ(), 0.1, np.zeros(3), jitter=0.0).fit(X, y)
    SparseGP(EQ(), 0.1, np.zeros(3)).fit(X, y)  # the default relative jitter copes
