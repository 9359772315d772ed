"""Kernel tests: invariants over every registered kernel, naive-loop and sklearn oracles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.gaussian_process import kernels as skk

from dpgp_audit.gp.kernels import (
    EQ,
    Constant,
    Kernel,
    Linear,
    Matern32,
    Matern52,
    Periodic,
    Product,
    Sum,
    White,
    kernel_examples,
    kernel_registry,
    register_kernel_example,
    scaled_sqdist,
)
from dpgp_audit.gp.linalg import psd_cholesky

EXAMPLES = kernel_examples()
IDS = [ex.name for ex in EXAMPLES]


# ---------------------------------------------- naive oracles (one pair at a time)
def _r(x, y, ls):
    return math.sqrt(sum(((a - b) / l) ** 2 for a, b, l in zip(x, y, ls, strict=True)))


def naive_eq(x, y, ls, var):
    return var * math.exp(-0.5 * _r(x, y, ls) ** 2)


def naive_m32(x, y, ls, var):
    r = _r(x, y, ls)
    return var * (1 + math.sqrt(3) * r) * math.exp(-math.sqrt(3) * r)


def naive_m52(x, y, ls, var):
    r = _r(x, y, ls)
    return var * (1 + math.sqrt(5) * r + 5 * r * r / 3) * math.exp(-math.sqrt(5) * r)


def naive_gram(fn, X, Y, ls, var):
    ls = np.broadcast_to(np.asarray(ls, float), (X.shape[1],))
    out = np.empty((X.shape[0], Y.shape[0]))
    for i in range(X.shape[0]):
        for j in range(Y.shape[0]):
            out[i, j] = fn(X[i], Y[j], ls, var)
    return out


# ------------------------------------------------------------------ invariants over the registry
def test_registry_nonempty_and_kernels():
    ks = kernel_registry()
    assert len(ks) >= 8
    assert all(isinstance(k, Kernel) for k in ks)
    names = {type(k).__name__ for k in ks}
    assert {"EQ", "Matern32", "Matern52", "White", "Sum", "Product", "Periodic", "Linear"} <= names


def test_registry_imports_listed_modules(monkeypatch):
    from dpgp_audit.gp import kernels as kmod

    monkeypatch.setattr(kmod, "_KERNEL_MODULES", ("no_such_module_for_dpgp_audit",))
    with pytest.raises(ModuleNotFoundError):
        kernel_registry()


@pytest.mark.parametrize("ex", EXAMPLES, ids=IDS)
def test_psd_invariant(ex, rng):
    X = ex.draw_inputs(rng, 40)
    X = np.vstack([X, X[:3]])  # duplicates must not break PSD
    K = ex.kernel(X)
    eig = np.linalg.eigvalsh(K)
    assert eig[0] >= -1e-10 * max(eig[-1], 1.0)


@pytest.mark.parametrize("ex", EXAMPLES, ids=IDS)
def test_symmetry_diag_and_transpose(ex, rng):
    X = ex.draw_inputs(rng, 15)
    Y = ex.draw_inputs(rng, 7)
    K = ex.kernel(X)
    assert K.shape == (15, 15)
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_allclose(ex.kernel.diag(X), np.diag(K), rtol=1e-12, atol=0)
    KXY = ex.kernel(X, Y)
    assert KXY.shape == (15, 7)
    np.testing.assert_allclose(KXY, ex.kernel(Y, X).T, rtol=1e-12, atol=1e-15)
    assert np.all(np.isfinite(KXY))


@pytest.mark.parametrize("ex", EXAMPLES, ids=IDS)
def test_gram_matches_cross_for_non_white(ex, rng):
    # K(X, X.copy()) equals K(X) except for white-noise terms (zero cross-covariance)
    X = ex.draw_inputs(rng, 10)
    K = ex.kernel(X)
    Kc = ex.kernel(X, X.copy())
    off = ~np.eye(10, dtype=bool)
    np.testing.assert_allclose(Kc[off], K[off], rtol=1e-10, atol=1e-12)


def test_register_kernel_example_appends_and_validates():
    from dpgp_audit.gp import kernels as kmod

    before = len(kernel_registry())
    k = EQ(lengthscale=3.0)
    try:
        assert register_kernel_example(k, name="tmp") is k
        assert len(kernel_registry()) == before + 1
        assert kernel_registry()[-1] is k
    finally:
        kmod._EXAMPLES.pop()
    with pytest.raises(TypeError):
        register_kernel_example("EQ")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="input_dim"):
        register_kernel_example(EQ(), input_dim=0)


# ------------------------------------------------------------------ naive oracles
@pytest.mark.parametrize(("cls", "fn"), [(EQ, naive_eq), (Matern32, naive_m32),
                                         (Matern52, naive_m52)])
@pytest.mark.parametrize("ls", [0.7, [0.5, 2.0]])
def test_stationary_against_naive_loops(cls, fn, ls, rng):
    X = rng.normal(size=(9, 2))
    Y = rng.normal(size=(6, 2))
    k = cls(lengthscale=ls, variance=1.7)
    np.testing.assert_allclose(k(X, Y), naive_gram(fn, X, Y, ls, 1.7), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(k(X), naive_gram(fn, X, X, ls, 1.7), rtol=1e-10, atol=1e-14)


def test_sum_product_white_against_naive(rng):
    X = rng.normal(size=(8, 1))
    Y = rng.normal(size=(5, 1))
    k = EQ(0.8, 2.0) * Matern52(1.3) + White(0.4)
    ref_xx = (naive_gram(naive_eq, X, X, 0.8, 2.0) * naive_gram(naive_m52, X, X, 1.3, 1.0)
              + 0.4 * np.eye(8))
    ref_xy = naive_gram(naive_eq, X, Y, 0.8, 2.0) * naive_gram(naive_m52, X, Y, 1.3, 1.0)
    np.testing.assert_allclose(k(X), ref_xx, rtol=1e-10)
    np.testing.assert_allclose(k(X, Y), ref_xy, rtol=1e-10)
    assert isinstance(k, Sum) and isinstance(k.k1, Product)
    assert sum([EQ(), White(1.0)]) is not None  # __radd__ with 0 start


def naive_periodic(x, y, ls, var, period):
    acc = sum((math.sin(math.pi * (a - b) / period) / l) ** 2
              for a, b, l in zip(x, y, ls, strict=True))
    return var * math.exp(-2 * acc)


def test_periodic_linear_constant_against_naive(rng):
    X = rng.normal(size=(7, 2))
    Y = rng.normal(size=(4, 2))
    k = Periodic(lengthscale=[0.6, 1.4], period=1.7, variance=0.9)
    ref = np.array([[naive_periodic(x, y, [0.6, 1.4], 0.9, 1.7) for y in Y] for x in X])
    np.testing.assert_allclose(k(X, Y), ref, rtol=1e-12)
    ref_lin = np.array([[0.3 * float(np.dot(x, y)) for y in Y] for x in X])
    np.testing.assert_allclose(Linear(0.3)(X, Y), ref_lin, rtol=1e-12)
    np.testing.assert_allclose(Constant(2.5)(X, Y), np.full((7, 4), 2.5))


# ---------------------------------------------- scikit-learn as independent reference
def test_periodic_linear_constant_match_sklearn(rng):
    X = rng.normal(size=(9, 1))
    Y = rng.normal(size=(3, 1))
    pairs = [
        (Periodic(0.7, 2.2, 1.3), skk.ConstantKernel(1.3) * skk.ExpSineSquared(0.7, 2.2)),
        (Linear(0.5), skk.ConstantKernel(0.5) * skk.DotProduct(sigma_0=0.0)),
        (Constant(0.8) + Linear(1.0), skk.DotProduct(sigma_0=math.sqrt(0.8))),
    ]
    for k, ref in pairs:
        np.testing.assert_allclose(k(X), ref(X), rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(k(X, Y), ref(X, Y), rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(k.diag(X), ref.diag(X), rtol=1e-10)


@pytest.mark.parametrize("ls", [0.6, [0.4, 1.5, 2.5]])
def test_eq_matches_sklearn_rbf(ls, rng):
    X = rng.normal(size=(12, 3))
    Y = rng.normal(size=(4, 3))
    ref = skk.ConstantKernel(2.5) * skk.RBF(length_scale=ls)
    k = EQ(lengthscale=ls, variance=2.5)
    np.testing.assert_allclose(k(X), ref(X), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(k(X, Y), ref(X, Y), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(k.diag(X), ref.diag(X), rtol=1e-12)


@pytest.mark.parametrize(("cls", "nu"), [(Matern32, 1.5), (Matern52, 2.5)])
@pytest.mark.parametrize("ls", [1.3, [0.5, 2.0]])
def test_matern_matches_sklearn(cls, nu, ls, rng):
    X = rng.normal(size=(10, 2))
    Y = rng.normal(size=(5, 2))
    ref = skk.ConstantKernel(0.7) * skk.Matern(length_scale=ls, nu=nu)
    k = cls(lengthscale=ls, variance=0.7)
    np.testing.assert_allclose(k(X), ref(X), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(k(X, Y), ref(X, Y), rtol=1e-10, atol=1e-14)


def test_white_matches_sklearn(rng):
    X = rng.normal(size=(6, 2))
    Y = rng.normal(size=(3, 2))
    ref = skk.WhiteKernel(noise_level=0.3)
    k = White(0.3)
    np.testing.assert_allclose(k(X), ref(X))
    np.testing.assert_allclose(k(X, Y), ref(X, Y))
    np.testing.assert_allclose(k.diag(X), ref.diag(X))
    np.testing.assert_array_equal(k(X, X), 0.3 * np.eye(6))  # the same array object -> Gram


# ------------------------------------------------------------------ numerics
def test_sqdist_exact_zero_diagonal_and_nonnegative(rng):
    X = 1e6 + rng.normal(size=(30, 2)) * 1e-3  # large offset: cancellation-prone
    r2 = scaled_sqdist(X, None, 1e-3)
    assert np.all(np.diag(r2) == 0.0)
    assert np.all(r2 >= 0.0)
    np.testing.assert_array_equal(r2, r2.T)
    r2c = scaled_sqdist(X, X[:5].copy(), 1e-3)
    assert np.all(r2c >= 0.0)
    ref = (((X[:, None, :] - X[None, :5, :]) / 1e-3) ** 2).sum(-1)
    np.testing.assert_allclose(r2c, ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("D", [2, 40])  # cdist path and BLAS-expansion path
def test_sqdist_paths_agree_with_direct_differences(D, rng):
    X = rng.normal(size=(25, D))
    Y = rng.normal(size=(9, D))
    ls = rng.uniform(0.5, 2.0, size=D)
    ref_xy = (((X[:, None, :] - Y[None, :, :]) / ls) ** 2).sum(-1)
    ref_xx = (((X[:, None, :] - X[None, :, :]) / ls) ** 2).sum(-1)
    np.testing.assert_allclose(scaled_sqdist(X, Y, ls), ref_xy, rtol=1e-10, atol=1e-10)
    r2 = scaled_sqdist(X, None, ls)
    np.testing.assert_allclose(r2, ref_xx, rtol=1e-10, atol=1e-10)
    assert np.all(np.diag(r2) == 0) and np.array_equal(r2, r2.T)


def test_1d_promotion():
    x = np.linspace(0, 1, 5)
    k = EQ()
    np.testing.assert_array_equal(k(x), k(x[:, None]))
    assert k(x, x[:2].copy()).shape == (5, 2)
    assert k.diag(x).shape == (5,)


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_inputs_raise(bad):
    X = np.array([[0.0], [bad]])
    for k in (EQ(), Matern32(), White(1.0), EQ() + White(1.0), Periodic(), Linear(),
              Constant()):
        with pytest.raises(ValueError, match="non-finite"):
            k(X)
        with pytest.raises(ValueError, match="non-finite"):
            k(np.zeros((2, 1)), X)
        with pytest.raises(ValueError, match="non-finite"):
            k.diag(X)


def test_dimension_errors():
    with pytest.raises(ValueError, match="ARD lengthscale"):
        EQ(lengthscale=[1.0, 2.0])(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="ARD lengthscale"):
        EQ(lengthscale=[1.0, 2.0]).diag(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="columns"):
        EQ()(np.zeros((3, 2)), np.zeros((3, 1)))
    with pytest.raises(ValueError, match="shape"):
        EQ()(np.zeros((2, 2, 2)))


@pytest.mark.parametrize("cls", [EQ, Matern32, Matern52, Periodic])
@pytest.mark.parametrize("kw", [{"lengthscale": 0.0}, {"lengthscale": -1.0},
                                {"lengthscale": np.nan}, {"variance": 0.0},
                                {"variance": np.inf}, {"lengthscale": [1.0, -2.0]},
                                {"lengthscale": [[1.0]]}])
def test_nonpositive_parameters_raise(cls, kw):
    with pytest.raises(ValueError, match="lengthscale|variance"):
        cls(**kw)


def test_white_and_combination_validation():
    for cls in (White, Linear, Constant):
        with pytest.raises(ValueError, match="variance"):
            cls(0.0)
    with pytest.raises(ValueError, match="period"):
        Periodic(period=-1.0)
    with pytest.raises(ValueError, match="ARD lengthscale"):
        Periodic(lengthscale=[1.0, 2.0])(np.zeros((2, 3)))
    with pytest.raises(TypeError):
        Sum(EQ(), 1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        EQ() + 1.0  # noqa: B018


def test_frozen_and_readonly_lengthscale():
    k = EQ(lengthscale=[1.0, 2.0])
    with pytest.raises(AttributeError):
        k.variance = 3.0  # type: ignore[misc]
    with pytest.raises(ValueError):
        k.lengthscale[0] = 5.0  # read-only array


def test_equality_and_hash_by_parameters():
    assert EQ(1.0, 2.0) == EQ(1.0, 2.0)
    assert hash(EQ([1.0, 2.0])) == hash(EQ(np.array([1.0, 2.0])))
    assert EQ(1.0) != EQ(1.5)
    assert EQ(1.0) != Matern32(1.0)
    assert EQ() + White(0.1) == EQ() + White(0.1)
    assert EQ() + White(0.1) != White(0.1) + EQ()
    assert len({EQ(), EQ(), Matern52()}) == 2


def test_gram_is_factorisable_with_psd_cholesky(rng):
    X = rng.uniform(size=(20, 1))
    L = psd_cholesky(Matern52(0.3)(X), jitter=1e-10)
    np.testing.assert_allclose(L @ L.T, Matern52(0.3)(X) + 1e-10 * np.eye(20), atol=1e-12)
