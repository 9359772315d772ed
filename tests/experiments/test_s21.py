"""Smoke-and-sense tests of the S21 notebook drivers (tiny sizes)."""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit.dataset import Dataset
from dpgp_audit.experiments import s21 as ex
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.methods.s21.mechanisms import default_regression_data, sparse_cloaking


def _kung_like(rng, n=40):
    age = np.sort(rng.uniform(0, 80, n))
    return Dataset(age, 150 - 90 * np.exp(-age / 6) + 5 * rng.standard_normal(n))


def test_kung_fold_rmse_dp_is_worse_and_methods_validated(rng):
    data = _kung_like(rng)
    tests = [np.arange(0, 40, 4), np.arange(2, 40, 4)]
    tests = [np.sort(np.concatenate([t, t + 1])) for t in tests]
    for method in ("standard", "sparse", "nonstationary"):
        r = ex.kung_fold_rmse(data, method, tests, ex.KungSetup(n_inducing=3), rng)
        assert np.all(r["dp"] >= r["no_dp"]) and np.all(np.isfinite(r["dp"]))
    with pytest.raises(ValueError, match="method"):
        ex.regression_release("bogus", data.X, data.X, ex.KungSetup(), rng)


def test_noise_std_matches_covariance(rng):
    data = default_regression_data()
    rel = sparse_cloaking(data.X, np.linspace(0, 10, 5), EQ(1.5), 0.1, n_inducing=3, rng=rng,
                          d=1.0, epsilon=1.0, delta=0.01)
    np.testing.assert_allclose(rel.noise_std() ** 2, np.diag(rel.cov(data)), rtol=1e-10)


def test_selection_experiment_is_a_distribution_over_configs(rng):
    data = _kung_like(rng, 30)
    r = ex.selection_experiment(data, lengthscales=[5.0, 50.0], noise_variances=[25.0],
                                kernel_variances=[1.0], folds=2, epsilon=1.0, d=100.0, rng=rng)
    assert r["probabilities"].sum() == pytest.approx(1.0)
    assert r["rmse"].min() <= r["expected_rmse"] <= r["rmse"].max()
    assert ex.classification_accuracy(np.array([0.9, 0.1]), np.array([1.0, -1.0])) == 1.0
