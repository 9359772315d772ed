"""R.3: GP noise on a D-dimensional grid (R App. B, Alg. 4) versus the naive full Cholesky."""

from __future__ import annotations

from functools import reduce

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpgp_audit.gp.grid import (
    Grid,
    KroneckerGridSampler,
    NaiveGridSampler,
    product_kernel_matrix,
)
from dpgp_audit.gp.kernels import EQ


def _naive_rbf(X: np.ndarray, lengthscales, variance=1.0) -> np.ndarray:
    """Independent oracle: the D-dimensional RBF by a double loop (no factorisation)."""
    n = X.shape[0]
    out = np.empty((n, n))
    ls = np.asarray(lengthscales, dtype=float)
    for i in range(n):
        for j in range(n):
            out[i, j] = variance * np.exp(-0.5 * np.sum(((X[i] - X[j]) / ls) ** 2))
    return out


def _implied_matrix(sampler: KroneckerGridSampler) -> np.ndarray:
    """The linear map of the sampler, read off by applying it to every basis vector."""
    G = sampler.grid.size
    basis = np.eye(G).reshape((G, *sampler.grid.shape))
    return sampler.apply(basis).reshape(G, G).T


def test_r3_grid_construction_and_order():
    g = Grid.from_window([0.0, -1.0], [1.0, 1.0], 2.0)
    assert g.shape == (3, 5) and g.size == 15 and g.dim == 2
    pts = g.points()
    assert pts.shape == (15, 2)
    assert np.allclose(pts[:5, 0], 0.0) and np.allclose(pts[:5, 1], [-1, -0.5, 0, 0.5, 1])
    assert np.allclose(g.axes()[0], [0.0, 0.5, 1.0])


@pytest.mark.parametrize("kwargs", [
    dict(starts=(0.0,), spacings=(0.0,), counts=(3,)),
    dict(starts=(0.0,), spacings=(1.0,), counts=(0,)),
    dict(starts=(0.0,), spacings=(1.0,), counts=(2.5,)),
    dict(starts=(float("nan"),), spacings=(1.0,), counts=(3,)),
    dict(starts=(0.0, 1.0), spacings=(1.0,), counts=(3,)),
])
def test_r3_bad_grid_raises(kwargs):
    with pytest.raises(ValueError):
        Grid(**kwargs)


@pytest.mark.parametrize(("shape", "lengthscales", "method"), [
    ((7,), (0.8,), "cholesky"),
    ((4, 5), (0.7, 1.3), "cholesky"),
    ((3, 4, 2), (0.6, 0.9, 1.5), "cholesky"),
    ((4, 5), (0.7, 1.3), "eigh"),
])
def test_r3_exact_covariance_is_the_kronecker_product(shape, lengthscales, method):
    grid = Grid(tuple(0.1 * np.arange(len(shape))), (0.5,) * len(shape), shape)
    factors = [EQ(ls, 2.0 if d == 0 else 1.0) for d, ls in enumerate(lengthscales)]
    s = KroneckerGridSampler(grid, factors, jitter=1e-12, method=method)
    A = _implied_matrix(s)
    kron = reduce(np.kron, s.factor_covariances())
    np.testing.assert_allclose(A @ A.T, kron, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s.covariance(), kron, rtol=1e-12, atol=1e-12)
    # ... and the Kronecker product is the product kernel on the grid points (naive double loop)
    K = _naive_rbf(grid.points(), lengthscales, variance=2.0)
    np.testing.assert_allclose(kron, K, rtol=0, atol=1e-10)
    np.testing.assert_allclose(product_kernel_matrix(factors, grid.points()), K, atol=1e-14)


def test_r3_jitter_only_adds_noise():
    # A fine grid: the EQ factor is numerically singular, jitter is needed.
    grid = Grid((0.0, 0.0), (0.02, 0.05), (30, 12))
    f = EQ(0.3)
    s = KroneckerGridSampler(grid, f, jitter=1e-9)
    K = product_kernel_matrix([f, f], grid.points())
    excess = s.covariance() - K
    assert np.linalg.eigvalsh(excess).min() > -1e-12


def test_r3_empirical_covariance_matches_naive_sampler(rng):
    grid = Grid((0.0, 0.0), (0.4, 0.6), (3, 4))
    factors = [EQ(0.5), EQ(0.9)]
    K = _naive_rbf(grid.points(), [0.5, 0.9])
    n = 40_000
    fast = KroneckerGridSampler(grid, factors).sample(n, rng).reshape(n, -1)
    naive = NaiveGridSampler(grid, factors).sample(n, rng).reshape(n, -1)
    for draws in (fast, naive):
        assert np.abs(draws.mean(axis=0)).max() < 0.05
        emp = np.cov(draws, rowvar=False)
        # sd of an empirical covariance entry ≤ sqrt(2/n) ≈ 0.007: 0.04 is > 5 sd
        np.testing.assert_allclose(emp, K, atol=0.04)
    np.testing.assert_allclose(np.cov(fast, rowvar=False), np.cov(naive, rowvar=False), atol=0.05)


def test_r3_naive_factor_is_exact():
    grid = Grid((0.0, 0.0), (0.5, 0.5), (3, 3))
    factors = [EQ(0.5), EQ(0.5)]
    s = NaiveGridSampler(grid, factors, jitter=0.0)
    np.testing.assert_allclose(s.chol @ s.chol.T, _naive_rbf(grid.points(), [0.5, 0.5]),
                               atol=1e-12)


def test_r3_sample_shapes_and_validation(rng):
    grid = Grid((0.0, 0.0), (1.0, 1.0), (4, 6))
    s = KroneckerGridSampler(grid, EQ(1.0))
    assert s.sample(3, rng).shape == (3, 4, 6)
    with pytest.raises(TypeError, match="Generator"):
        s.sample(3, None)
    with pytest.raises(ValueError, match="positive integer"):
        s.sample(0, rng)
    with pytest.raises(ValueError, match="factors"):
        KroneckerGridSampler(grid, [EQ(1.0)] * 3)
    with pytest.raises(ValueError, match="method"):
        KroneckerGridSampler(grid, EQ(1.0), method="svd")
    with pytest.raises(ValueError, match="not positive definite"):
        # an EQ on a very fine grid without jitter is numerically singular
        KroneckerGridSampler(Grid((0.0,), (1e-3,), (200,)), EQ(1.0), jitter=0.0)
    with pytest.raises(ValueError, match="grid shape"):
        s.apply(np.zeros((2, 5, 6)))


@given(n1=st.integers(1, 6), n2=st.integers(1, 6), l1=st.floats(0.3, 3.0),
       l2=st.floats(0.3, 3.0), h=st.floats(0.2, 2.0))
def test_r3_property_implied_covariance_equals_kron(n1, n2, l1, l2, h):
    grid = Grid((0.0, 1.0), (h, 0.5 * h), (n1, n2))
    s = KroneckerGridSampler(grid, [EQ(l1), EQ(l2)], jitter=1e-10)
    A = _implied_matrix(s)
    np.testing.assert_allclose(A @ A.T, reduce(np.kron, s.factor_covariances()), atol=1e-11)
    K = product_kernel_matrix([EQ(l1), EQ(l2)], grid.points())
    assert np.abs(A @ A.T - K).max() < 1e-8
