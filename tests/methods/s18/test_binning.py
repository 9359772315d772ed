"""S18.3 binning baselines: half-open bins, bin sensitivity d/n_b, exact privacy, predictions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.integral_kernel import IntegralEQ
from dpgp_audit.methods.s18.binning import (
    GaussianBinning,
    LaplaceBinning,
    bin_index,
    integral_binning_predict,
    make_edges,
    simple_binning_predict,
)
from dpgp_audit.norms import Mahalanobis
from dpgp_audit.privacy.gdp import gdp_delta


def test_half_open_bins_count_each_point_once():
    edges = make_edges([0.0], [3.0], 3)
    X = np.array([0.0, 1.0, 1.0 - 1e-12, 2.0, 3.0])
    idx = bin_index(X, edges)
    np.testing.assert_array_equal(idx, [0, 1, 0, 2, 2])
    with pytest.raises(ValueError, match="outside"):
        bin_index(np.array([3.5]), edges)


def test_2d_flat_index_matches_loop(rng):
    edges = make_edges([0, 0], [1, 2], [3, 4])
    X = rng.uniform([0, 0], [1, 2], (50, 2))
    idx = bin_index(X, edges)
    for x, k in zip(X, idx, strict=True):
        i = min(int(x[0] / (1 / 3)), 2)
        j = min(int(x[1] / 0.5), 3)
        assert k == i * 4 + j


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 30), bins=st.integers(1, 8), seed=st.integers(0, 2**31 - 1))
def test_bin_sensitivity_on_neighbours(n, bins, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, n)
    data = Dataset(X[:, None], rng.uniform(-1, 1, n))
    mech = LaplaceBinning(data.X, tuple(make_edges([0], [1], bins)), 1.0, 1.0)
    gmech = GaussianBinning(data.X, mech.edges, 1.0, 1.0, delta=1e-5)
    base = mech.query(data)
    for j in range(n):
        other = data.with_target(j, data.y[j] + rng.choice([-1.0, 1.0]))
        diff = mech.query(other) - base
        # exactly one bin moves, by at most d / n_b
        assert np.count_nonzero(np.abs(diff) > 1e-12) <= 1
        assert mech.norm(diff) <= 1 + 1e-9
        # exact Laplace privacy loss of the pair: Σ |Δ_b| / b_b <= ε
        assert np.sum(np.abs(diff) / mech.scales) <= mech.epsilon * (1 + 1e-9)
        # Gaussian variant: exact δ at the claim
        mu = Mahalanobis(gmech.cov(data))(gmech.mean(other) - gmech.mean(data))
        assert gdp_delta(1.0, mu) <= 1e-5 * (1 + 1e-6)


def test_empty_bins_filled_with_public_value(rng):
    X = np.array([0.05, 0.1, 0.95])
    data = Dataset(X[:, None], np.array([1.0, 0.0, -1.0]))
    mech = LaplaceBinning(data.X, tuple(make_edges([0], [1], 4)), 1.0, 1.0, fill_value=-7.0)
    np.testing.assert_array_equal(mech.occupied, [0, 3])
    full = mech.full_release(mech.sample(data, 3, rng))
    assert full.shape == (3, 4)
    assert np.all(full[:, 1:3] == -7.0)
    np.testing.assert_allclose(mech.query(data), [0.5, -1.0])
    pred = simple_binning_predict(np.array([0.5, 0.99]), mech.edges, full[0])
    assert pred[0] == -7.0 and pred[1] == full[0, 3]


def test_laplace_sample_moments(rng):
    X = rng.uniform(0, 1, 40)
    data = Dataset(X[:, None], np.sin(3 * X))
    mech = LaplaceBinning(data.X, tuple(make_edges([0], [1], 4)), 1.0, 0.5)
    s = mech.sample(data, 20000, rng)
    np.testing.assert_allclose(s.mean(0), mech.query(data), atol=6 * np.sqrt(mech.noise_variance
                                                                             / 20000).max())
    np.testing.assert_allclose(s.var(0), mech.noise_variance, rtol=0.1)


def test_integral_gp_recovers_function_without_noise(rng):
    X = np.sort(rng.uniform(0, 10, 400))
    data = Dataset(X[:, None], np.sin(X))
    # ~no noise; float-safe only with the bound the data meet (|y| <= 1)
    mech = LaplaceBinning(data.X, tuple(make_edges([0], [10], 20)), 1.0, 1e6, y_bound=1.0)
    rel = mech.query(data)
    Xs = np.linspace(0.5, 9.5, 30)
    mean, var = integral_binning_predict(Xs, mech, rel, IntegralEQ(1.5, 1.0), 1e-4)
    assert np.max(np.abs(mean - np.sin(Xs))) < 0.05
    assert np.all(var >= 0)
