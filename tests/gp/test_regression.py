"""Exact GP regression and shared linear algebra: sklearn and naive-inverse oracles."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process import kernels as skk

from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.kernels import EQ, Matern32, Matern52, White
from dpgp_audit.gp.linalg import (
    cho_solve_lower,
    logdet_from_cholesky,
    low_rank_plus_diag,
    mvn_logpdf_from_cholesky,
    psd_cholesky,
    solve_lower,
    woodbury_logdet,
    woodbury_solve,
)
from dpgp_audit.gp.regression import ExactGP, FittedGP

PAIRS = [
    (EQ(lengthscale=0.8, variance=1.5), skk.ConstantKernel(1.5) * skk.RBF(0.8)),
    (Matern32(lengthscale=1.2, variance=0.7), skk.ConstantKernel(0.7) * skk.Matern(1.2, nu=1.5)),
    (Matern52(lengthscale=[0.5, 2.0]), skk.Matern([0.5, 2.0], nu=2.5)),
]


def _data(rng, n=25, d=1):
    X = rng.uniform(-3, 3, size=(n, d))
    y = np.sin(X).sum(axis=1) + 0.1 * rng.normal(size=n)
    return X, y


# ------------------------------------------------------------------ sklearn oracle
@pytest.mark.parametrize(("kernel", "skkernel"), PAIRS)
@pytest.mark.parametrize("noise", [1e-2, 0.3])
def test_matches_sklearn(kernel, skkernel, noise, rng):
    d = 2 if np.ndim(getattr(kernel, "lengthscale", 1.0)) else 1
    X, y = _data(rng, 25, d)
    Xs = rng.uniform(-4, 4, size=(11, d))
    fitted = ExactGP(kernel, noise).fit(X, y)
    ref = GaussianProcessRegressor(kernel=skkernel, alpha=noise, optimizer=None,
                                   normalize_y=False).fit(X, y)
    m_ref, s_ref = ref.predict(Xs, return_std=True)
    m, v = fitted.predict(Xs)
    np.testing.assert_allclose(m, m_ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(np.sqrt(v), s_ref, rtol=1e-6, atol=1e-8)
    _, c_ref = ref.predict(Xs, return_cov=True)
    _, c = fitted.predict(Xs, full_cov=True)
    np.testing.assert_allclose(c, c_ref, rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(fitted.log_marginal_likelihood(),
                               ref.log_marginal_likelihood_value_, rtol=1e-10)


# ------------------------------------------------------------------ naive inverse formulas
def test_matches_naive_inverse(rng):
    X, y = _data(rng, 15, 1)
    Xs = rng.uniform(-3, 3, size=(6, 1))
    k, s2 = EQ(0.9, 1.2) + Matern32(2.0, 0.3), 0.05
    A = np.linalg.inv(k(X) + s2 * np.eye(15))
    Ksf = k(Xs, X)
    mean_ref = Ksf @ A @ y
    cov_ref = k(Xs) - Ksf @ A @ Ksf.T
    _, logdet = np.linalg.slogdet(k(X) + s2 * np.eye(15))
    lml_ref = -0.5 * y @ A @ y - 0.5 * logdet - 7.5 * np.log(2 * np.pi)
    f = ExactGP(k, s2).fit(X, y)
    m, c = f.predict(Xs, full_cov=True)
    np.testing.assert_allclose(m, mean_ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(c, cov_ref, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(f.log_marginal_likelihood(), lml_ref, rtol=1e-10)
    np.testing.assert_allclose(f.mean_weights(Xs), Ksf @ A, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(f.alpha, A @ y, rtol=1e-8, atol=1e-10)
    _, v = f.predict(Xs)
    np.testing.assert_allclose(v, np.diag(cov_ref), rtol=1e-7, atol=1e-12)


def test_white_kernel_gives_noisy_predictive_variance(rng):
    X, y = _data(rng, 10, 1)
    Xs = rng.uniform(-3, 3, size=(4, 1))
    a = ExactGP(EQ() + White(0.2), 1e-2).fit(X, y)
    b = ExactGP(EQ(), 0.2 + 1e-2).fit(X, y)
    ma, va = a.predict(Xs)
    mb, vb = b.predict(Xs)
    np.testing.assert_allclose(ma, mb, rtol=1e-10)
    np.testing.assert_allclose(va, vb + 0.2, rtol=1e-10)


def test_include_noise_and_posterior_samples(rng):
    X, y = _data(rng, 10, 1)
    Xs = np.linspace(-3, 3, 5)
    f = ExactGP(Matern52(1.0), 0.04).fit(X, y)
    m, v = f.predict(Xs)
    m2, v2 = f.predict(Xs, include_noise=True)
    np.testing.assert_array_equal(m, m2)
    np.testing.assert_allclose(v2, v + 0.04)
    _, c = f.predict(Xs, full_cov=True)
    _, c2 = f.predict(Xs, full_cov=True, include_noise=True)
    np.testing.assert_allclose(c2, c + 0.04 * np.eye(5))
    draws = f.sample_posterior(Xs, 20000, rng)
    assert draws.shape == (20000, 5)
    np.testing.assert_allclose(draws.mean(0), m, atol=0.02)
    np.testing.assert_allclose(np.cov(draws.T), c, atol=0.01)
    with pytest.raises(TypeError, match="Generator"):
        f.sample_posterior(Xs, 3, 0)


def test_models_compare_by_value():
    assert ExactGP(EQ(1.0), 0.1) == ExactGP(EQ(1.0), 0.1)
    assert ExactGP(EQ(1.0), 0.1) != ExactGP(EQ(2.0), 0.1)
    assert hash(ExactGP(EQ([1.0, 2.0]), 0.1)) == hash(ExactGP(EQ([1.0, 2.0]), 0.1))


def test_with_targets_reuses_factor(rng):
    X, y = _data(rng, 12, 1)
    f = ExactGP(EQ(), 0.1).fit(X, y)
    y2 = y + rng.normal(size=12)
    g = f.with_targets(y2)
    assert g.L is f.L
    ref = ExactGP(EQ(), 0.1).fit(X, y2)
    np.testing.assert_allclose(g.predict(X)[0], ref.predict(X)[0], rtol=1e-12)
    np.testing.assert_allclose(g.log_marginal_likelihood(), ref.log_marginal_likelihood())
    with pytest.raises(ValueError, match="shape"):
        f.with_targets(y[:3])


def test_fit_dataset_and_immutability(rng):
    data = Dataset(*_data(rng, 8, 1))
    f = ExactGP(EQ(), 0.1).fit_dataset(data)
    assert isinstance(f, FittedGP) and f.n == 8
    for arr in (f.X, f.y, f.L, f.alpha):
        assert not arr.flags.writeable
    with pytest.raises(AttributeError):
        f.gp.noise_variance = 1.0  # type: ignore[misc]


def test_noise_free_interpolates(rng):
    X = np.linspace(0, 5, 8)[:, None]
    y = np.sin(X[:, 0])
    f = ExactGP(Matern52(1.0), 0.0).fit(X, y)
    m, v = f.predict(X)
    np.testing.assert_allclose(m, y, atol=1e-8)
    assert np.all(v < 1e-8)


# ------------------------------------------------------------------ hypothesis properties
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 20), m=st.integers(1, 8),
       ls=st.floats(0.1, 5.0), noise=st.floats(1e-4, 2.0))
def test_properties_variance_and_linearity(seed, n, m, ls, noise):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 1))
    y = rng.normal(size=n) * 3
    Xs = rng.uniform(-4, 4, size=(m, 1))
    k = EQ(lengthscale=ls, variance=1.3)
    f = ExactGP(k, noise).fit(X, y)
    mean, var = f.predict(Xs)
    # posterior variance never exceeds the prior variance, and is non-negative
    assert np.all(var <= k.diag(Xs) + 1e-12)
    assert np.all(var >= 0)
    # the posterior mean is linear in y through mean_weights
    C = f.mean_weights(Xs)
    assert C.shape == (m, n)
    np.testing.assert_allclose(C @ y, mean, rtol=1e-8, atol=1e-8 * (1 + np.abs(y).sum()))
    _, cov = f.predict(Xs, full_cov=True)
    np.testing.assert_allclose(np.diag(cov), var, atol=1e-10)


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_data_raise(bad):
    gp = ExactGP(EQ(), 0.1)
    X = np.arange(4.0)
    with pytest.raises(ValueError, match="non-finite"):
        gp.fit(np.array([0.0, bad, 2.0, 3.0]), np.ones(4))
    with pytest.raises(ValueError, match="non-finite"):
        gp.fit(X, np.array([0.0, bad, 2.0, 3.0]))
    f = gp.fit(X, np.ones(4))
    with pytest.raises(ValueError, match="non-finite"):
        f.predict(np.array([bad]))


def test_bad_arguments():
    with pytest.raises(ValueError, match="noise_variance"):
        ExactGP(EQ(), -1.0)
    with pytest.raises(ValueError, match="noise_variance"):
        ExactGP(EQ(), np.nan)
    with pytest.raises(TypeError, match="kernel"):
        ExactGP("EQ", 0.1)  # type: ignore[arg-type]
    gp = ExactGP(EQ(), 0.1)
    with pytest.raises(ValueError, match="rows"):
        gp.fit(np.zeros((3, 1)), np.zeros(4))
    with pytest.raises(ValueError, match="1-D"):
        gp.fit(np.zeros((3, 1)), np.zeros((3, 1)))
    with pytest.raises(ValueError, match="zero data"):
        gp.fit(np.zeros((0, 1)), np.zeros(0))
    with pytest.raises(ValueError, match="columns"):
        gp.fit(np.zeros((3, 1)), np.zeros(3)).predict(np.zeros((2, 2)))


def test_noise_free_duplicate_inputs_raise_clearly():
    X = np.array([0.0, 1.0, 1.0, 2.0])
    with pytest.raises(ValueError, match=r"noise-free.*smallest eigenvalue.*jitter"):
        ExactGP(EQ(), 0.0).fit(X, np.arange(4.0))
    ExactGP(EQ(), 1e-3).fit(X, np.arange(4.0))  # fine with noise


# ------------------------------------------------------------------ linalg
def test_psd_cholesky_and_solves(rng):
    A = rng.normal(size=(6, 6))
    K = A @ A.T + 0.1 * np.eye(6)
    L = psd_cholesky(K)
    np.testing.assert_allclose(L @ L.T, K, rtol=1e-12, atol=1e-12)
    assert np.allclose(L, np.tril(L))
    B = rng.normal(size=(6, 3))
    np.testing.assert_allclose(cho_solve_lower(L, B), np.linalg.solve(K, B), rtol=1e-9)
    np.testing.assert_allclose(solve_lower(L, B), np.linalg.solve(L, B), rtol=1e-9)
    np.testing.assert_allclose(logdet_from_cholesky(L), np.linalg.slogdet(K)[1], rtol=1e-12)
    r = rng.normal(size=6)
    from scipy.stats import multivariate_normal
    np.testing.assert_allclose(mvn_logpdf_from_cholesky(r, L),
                               multivariate_normal(np.zeros(6), K).logpdf(r), rtol=1e-10)
    L2 = psd_cholesky(K, jitter=0.5)
    np.testing.assert_allclose(L2 @ L2.T, K + 0.5 * np.eye(6), rtol=1e-12)


def test_psd_cholesky_errors():
    with pytest.raises(ValueError, match="square"):
        psd_cholesky(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="non-finite"):
        psd_cholesky(np.array([[1.0, np.nan], [np.nan, 1.0]]))
    with pytest.raises(ValueError, match="not symmetric"):
        psd_cholesky(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"not positive definite: smallest eigenvalue -1.*jitter"):
        psd_cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]))
    singular = np.ones((3, 3))
    with pytest.raises(ValueError, match="not positive definite"):
        psd_cholesky(singular)
    psd_cholesky(singular, jitter=1e-8)  # jitter rescues a PSD-but-singular matrix
    with pytest.raises(ValueError, match="jitter"):
        psd_cholesky(np.eye(2), jitter=-1.0)


@pytest.mark.parametrize("d_scalar", [False, True])
def test_low_rank_plus_diag_against_dense(d_scalar, rng):
    m, n = 4, 30
    V = rng.normal(size=(m, n))
    d = 0.3 if d_scalar else rng.uniform(0.1, 2.0, size=n)
    F = low_rank_plus_diag(V, d)
    A = V.T @ V + np.diag(np.broadcast_to(d, (n,)))
    np.testing.assert_allclose(F.dense(), A)
    R = rng.normal(size=(n, 2))
    np.testing.assert_allclose(F.solve(R), np.linalg.solve(A, R), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(F.solve(R[:, 0]), np.linalg.solve(A, R[:, 0]), rtol=1e-8)
    np.testing.assert_allclose(F.logdet(), np.linalg.slogdet(A)[1], rtol=1e-10)
    np.testing.assert_allclose(F.quad(R[:, 0]), R[:, 0] @ np.linalg.solve(A, R[:, 0]), rtol=1e-8)
    np.testing.assert_allclose(F.logpdf(R[:, 0]),
                               mvn_logpdf_from_cholesky(R[:, 0], np.linalg.cholesky(A)),
                               rtol=1e-10)
    np.testing.assert_allclose(woodbury_solve(V, d, R), np.linalg.solve(A, R), rtol=1e-8,
                               atol=1e-10)
    np.testing.assert_allclose(woodbury_logdet(V, d), np.linalg.slogdet(A)[1], rtol=1e-10)


def test_low_rank_plus_diag_errors():
    with pytest.raises(ValueError, match="strictly positive"):
        low_rank_plus_diag(np.ones((2, 3)), [1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="2-D"):
        low_rank_plus_diag(np.ones(3), 1.0)
    with pytest.raises(ValueError, match="non-finite"):
        low_rank_plus_diag(np.array([[np.nan, 1.0]]), 1.0)
