"""S21.1 Gibbs kernel, S21.2/S21.4 inducing placement, S21.3/S21.4 Laplace classification maths."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpgp_audit.gp.gibbs import (
    ConstantLengthscale,
    DensityLengthscale,
    Gibbs,
    LengthscaleFunction,
    kde_count_density,
)
from dpgp_audit.gp.inducing import kmeans_inducing
from dpgp_audit.gp.kernels import EQ, kernel_registry
from dpgp_audit.gp.laplace import (
    LaplaceClassifier,
    SoRClassifier,
    check_labels,
    class_probabilities,
    logistic,
)


# ----------------------------------------------------------------- S21.1 Gibbs kernel
def _gibbs_naive(X, Y, r_x, r_y, variance):
    """Loop oracle for S21 eq. (8)."""
    K = np.zeros((len(X), len(Y)))
    for a in range(len(X)):
        for b in range(len(Y)):
            pre, ex = 1.0, 0.0
            for l in range(X.shape[1]):
                s = r_x[a, l] ** 2 + r_y[b, l] ** 2
                pre *= np.sqrt(2 * r_x[a, l] * r_y[b, l] / s)
                ex += (X[a, l] - Y[b, l]) ** 2 / s
            K[a, b] = variance * pre * np.exp(-ex)
    return K



class _Wavy(LengthscaleFunction):
    def __call__(self, X):
        return 0.3 + np.exp(np.sin(X) + 0.5 * X[:, ::-1])


def test_s21_1_gibbs_constant_lengthscale_is_eq(rng):
    X, Y = rng.normal(size=(7, 2)), rng.normal(size=(4, 2))
    for ls in (0.7, np.array([0.5, 2.0])):
        np.testing.assert_allclose(Gibbs(ls, variance=1.7)(X, Y),
                                   EQ(ls, variance=1.7)(X, Y), rtol=1e-12)


def test_s21_1_gibbs_matches_loop_oracle(rng):
    X, Y = rng.normal(size=(6, 2)), rng.normal(size=(5, 2))
    k = Gibbs(_Wavy(), variance=0.9)
    want = _gibbs_naive(X, Y, _Wavy()(X), _Wavy()(Y), 0.9)
    np.testing.assert_allclose(k(X, Y), want, rtol=1e-12)
    np.testing.assert_allclose(k(X), _gibbs_naive(X, X, _Wavy()(X), _Wavy()(X), 0.9), rtol=1e-12)
    np.testing.assert_allclose(k.diag(X), 0.9)


def test_s21_1_gibbs_in_kernel_registry():
    names = [type(k).__name__ for k in kernel_registry()]
    assert names.count("Gibbs") >= 3


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 25), dim=st.integers(1, 3))
def test_s21_1_gibbs_psd_for_density_lengthscale(seed, n, dim):
    g = np.random.default_rng(seed)
    Xp = g.normal(size=(n, dim)) * g.uniform(0.2, 3.0, size=dim)
    ls = DensityLengthscale(Xp, bandwidth=g.uniform(0.1, 2.0), m=g.uniform(0.5, 10.0),
                            n_per=g.uniform(0.5, 10.0),
                            neighbourhood=g.uniform(0.1, 1.0) if seed % 2 else None, probes=3)
    X = np.vstack([Xp, g.normal(size=(5, dim)) * 4])
    K = Gibbs(ls, variance=1.3)(X)
    np.testing.assert_array_equal(K, K.T)
    assert np.linalg.eigvalsh(K).min() > -1e-9 * K.shape[0]


def test_s21_1_kde_count_density_is_n_times_gaussian_kde(rng):
    Xp = rng.normal(size=30)
    x = np.linspace(-3, 3, 11)
    want = stats.norm.pdf(x[:, None], loc=Xp[None, :], scale=0.4).sum(axis=1)
    np.testing.assert_allclose(kde_count_density(Xp, x, 0.4)[:, 0], want, rtol=1e-12)


def test_s21_1_density_lengthscale_formula_and_variants(rng):
    Xp = np.concatenate([rng.normal(0, 1, 80), [6.0, 7.5]])
    plain = DensityLengthscale(Xp, bandwidth=0.5, m=20.0, n_per=5.0)
    hood = DensityLengthscale(Xp, bandwidth=0.5, m=20.0, n_per=5.0, neighbourhood=2.0)
    x = np.linspace(-3, 9, 25)[:, None]
    rho = kde_count_density(Xp, x, 0.5)
    np.testing.assert_allclose(plain(x), 1.0 / (1 / 20.0 + rho / 5.0))  # S21 §3.1
    assert np.all(plain(x) <= 20.0)
    assert plain(np.array([[0.0]]))[0, 0] < plain(np.array([[7.0]]))[0, 0]  # sparse -> long
    assert np.all(hood(x) >= plain(x) - 1e-12)  # min density -> longer lengthscale
    assert hood(np.array([[1.5]]))[0, 0] > 1.5 * plain(np.array([[1.5]]))[0, 0]  # edge region


def test_s21_1_lengthscale_takes_public_inputs_only():
    params = set(inspect.signature(DensityLengthscale).parameters)
    assert "y" not in params and not any("target" in p for p in params)
    with pytest.raises(ValueError, match="X_public"):
        DensityLengthscale(np.array([[np.nan]]), bandwidth=1.0, m=1.0, n_per=1.0)
    with pytest.raises(ValueError, match="probes"):
        DensityLengthscale(np.zeros((3, 1)), bandwidth=1.0, m=1.0, n_per=1.0, probes=4)
    with pytest.raises(ValueError, match="lengthscale function"):
        Gibbs(_Neg())(np.zeros((2, 1)))
    assert isinstance(Gibbs(2.0).lengthscale, ConstantLengthscale)


class _Neg(LengthscaleFunction):
    def __call__(self, X):
        return -np.ones(X.shape)


# ----------------------------------------------------------------- inducing inputs
def test_s21_2_kmeans_inducing_uses_inputs_only_and_finds_clusters(rng):
    assert list(inspect.signature(kmeans_inducing).parameters) == ["X", "m", "rng", "n_init"]
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    X = np.vstack([c + 0.1 * rng.normal(size=(40, 2)) for c in centres])
    Z = kmeans_inducing(X, 3, np.random.default_rng(1))
    order = np.lexsort(centres.T[::-1])
    np.testing.assert_allclose(Z, centres[order], atol=0.1)
    np.testing.assert_array_equal(Z, kmeans_inducing(X, 3, np.random.default_rng(1)))
    with pytest.raises(ValueError, match="distinct"):
        kmeans_inducing(np.zeros((5, 1)), 2, rng)
    with pytest.raises(TypeError):
        kmeans_inducing(X, 3, 1)


# ----------------------------------------------------------------- S21.3 Laplace maths
def _stripes(rng, n=40):
    X = rng.uniform(0, 5, size=(n, 2))
    y = np.where(np.sin(X[:, 0] + X[:, 1]) > 0, 1.0, -1.0)
    return X, y


def test_s21_3_newton_map_matches_dense_formula(rng):
    X, y = _stripes(rng)
    k = EQ(1.2, variance=2.0)
    clf = LaplaceClassifier(k, X, jitter=0.0)
    K = k(X)
    for f in (np.zeros(len(y)), rng.normal(size=len(y))):
        pi = logistic(f)
        W = np.diag(pi * (1 - pi))
        A = np.linalg.inv(np.linalg.inv(K) + W)
        nm = clf.newton_map(f)
        np.testing.assert_allclose(nm.C, 0.5 * A, rtol=1e-7, atol=1e-9)  # S21 eq. (11)
        t = (y + 1) / 2
        want = A @ (W @ f + t - pi)  # S21 eq. (10) / R&W eq. 3.18
        np.testing.assert_allclose(nm.apply(y), want, rtol=1e-7, atol=1e-8)
    # first step from 0: the offset vanishes (pi = 1/2), f_1 = C y
    np.testing.assert_allclose(clf.newton_map().offset, 0.0, atol=1e-12)


def test_s21_3_mode_and_predictions_match_sklearn(rng):
    from sklearn.gaussian_process import GaussianProcessClassifier
    from sklearn.gaussian_process.kernels import RBF

    X, y = _stripes(rng, 50)
    clf = LaplaceClassifier(EQ(1.0), X, jitter=0.0)
    f = clf.mode(y, n_iter=30)
    sk = GaussianProcessClassifier(kernel=RBF(1.0), optimizer=None).fit(X, (y > 0).astype(int))
    np.testing.assert_allclose(f, sk.base_estimator_.f_cached, atol=1e-6)
    t = (y + 1) / 2
    np.testing.assert_allclose(t - logistic(f), np.linalg.solve(EQ(1.0)(X), f), atol=1e-5)
    Xs = rng.uniform(0, 5, size=(15, 2))
    mean, var = clf.predict_latent(f, Xs)
    sk_mean, sk_var = sk.base_estimator_.latent_mean_and_variance(Xs)
    np.testing.assert_allclose(mean, sk_mean, atol=1e-5)
    np.testing.assert_allclose(var, sk_var, atol=1e-6)
    p = clf.predict_proba(f, Xs)
    assert np.all((p > 0) & (p < 1))
    np.testing.assert_allclose(class_probabilities(mean), logistic(mean))
    # the averaged probability is pulled towards 1/2
    assert np.all(np.abs(p - 0.5) <= np.abs(logistic(mean) - 0.5) + 1e-12)


def test_s21_3_labels_must_be_plus_minus_one():
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        check_labels([0.0, 1.0])
    np.testing.assert_array_equal(check_labels([1, -1]), [1.0, -1.0])


def test_logistic_is_stable():
    f = np.array([-1000.0, -5.0, 0.0, 5.0, 1000.0])
    p = logistic(f)
    assert np.all(np.isfinite(p))
    from scipy.special import expit

    np.testing.assert_allclose(p, expit(f), rtol=1e-12, atol=1e-300)


# ----------------------------------------------------------------- S21.4 SoR maths
def test_s21_4_sor_step_matches_dense_low_rank_formula(rng):
    X, y = _stripes(rng, 30)
    k = EQ(1.5)
    Z = kmeans_inducing(X, 6, rng)
    sor = SoRClassifier(k, X, Z, jitter=0.0)
    Ksor = k(X, Z) @ np.linalg.solve(k(Z), k(Z, X))
    for u in (np.zeros(6), rng.normal(size=6)):
        f = sor.latent(u)
        pi = logistic(f)
        S = np.diag(np.sqrt(pi * (1 - pi)))
        A = Ksor - Ksor @ S @ np.linalg.solve(np.eye(30) + S @ Ksor @ S, S @ Ksor)
        want = A @ (S @ S @ f + (y + 1) / 2 - pi)
        np.testing.assert_allclose(sor.latent(sor.newton_step(u, y)), want, atol=1e-7)
    # test latents: K_*Z K_ZZ^-1 K_Zf K_sor^+ f  ==  W_*^T u
    Xs = rng.uniform(0, 5, size=(4, 2))
    u = rng.normal(size=6)
    mean, var = sor.predict_latent(u, Xs)
    Ws = np.linalg.solve(np.linalg.cholesky(k(Z)), k(Z, Xs))
    np.testing.assert_allclose(mean, Ws.T @ u, atol=1e-10)
    assert np.all(var >= 0)


def test_s21_4_sor_with_all_points_as_inducing_equals_exact(rng):
    X, y = _stripes(rng, 20)
    k = EQ(1.0)
    exact = LaplaceClassifier(k, X, jitter=0.0)
    sor = SoRClassifier(k, X, X, jitter=0.0)
    f_exact = exact.mode(y, 10)
    f_sor = sor.latent(sor.mode(y, 10))
    np.testing.assert_allclose(f_sor, f_exact, atol=1e-6)
