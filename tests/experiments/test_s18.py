"""Smoke and consistency tests of the S18 notebook drivers and plots (small sizes)."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from dpgp_audit.dataset import Dataset
from dpgp_audit.experiments.s18 import (
    cloaking_rmse,
    journey_standin,
    mean_ci,
    selection_heatmap,
    spatial_standin,
    table1_comparison,
)
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.viz.s18 import plot_dp_fit, plot_selection_heatmap, plot_spatial_noise


def test_mean_ci():
    m, h = mean_ci([1.0, 2.0, 3.0])
    assert m == 2.0 and h == pytest.approx(1.96 * 1.0 / np.sqrt(3))


def test_cloaking_rmse_dp_worse_than_no_dp(rng):
    X = np.sort(rng.uniform(0, 10, 40))
    data = Dataset(X[:, None], np.sin(X) + 0.1 * rng.normal(size=40))
    res = cloaking_rmse(data, EQ(1.5), 0.05, d=2.0, epsilon=1.0, delta=0.01, n_repeats=3,
                        test_fraction=0.25, rng=rng)
    assert res.no_dp[0] < res.dp[0]
    assert res.per_repeat_dp.shape == (3,)


def test_standins_and_table(rng):
    sp = spatial_standin(60, rng)
    assert sp.X.shape == (60, 2) and np.all((sp.y >= 100) & (sp.y <= 500))
    jd = journey_standin(80, rng)
    assert np.all((jd.y >= 0) & (jd.y <= 2000))
    tab = table1_comparison(jd, lengthscales=[0.3], bins_per_dim=[2], epsilons=[None, 1.0],
                            d=2000.0, delta=0.01, n_folds=2, n_test=20,
                            kernel_variance=300.0**2, noise_variance=300.0**2, rng=rng,
                            centre=700.0)
    assert set(tab) == {(m, q, e) for m, q in (("cloaking", 0.3), ("simple binning", 2),
                                               ("integral binning", 2)) for e in (None, 1.0)}


def test_selection_heatmap_rows_are_distributions(rng):
    X = np.sort(rng.uniform(0, 10, 30))
    data = Dataset(X[:, None], np.sin(X))
    probs, offsets = selection_heatmap(data, [0.5, 2.0], 0.1, 1.0, d=1.0,
                                       regression_epsilons=[None, 0.5], delta=0.01,
                                       selection_epsilon=1.0, n_folds=3)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert np.all(offsets[0] == 0) and np.all(offsets[1] > 0)


def test_plots_return_figures(rng):
    x = np.linspace(0, 1, 10)
    assert isinstance(plot_dp_fit(x, x, x, x, x * 0 + 0.1, np.vstack([x, x]), x * 0 + 0.2),
                      Figure)
    P = rng.uniform(0, 1, (5, 2))
    assert isinstance(plot_spatial_noise(P, P, np.ones(5), np.ones(5), 2.0), Figure)
    assert isinstance(plot_selection_heatmap(np.eye(2), ["a", "b"], ["1", "2"]), Figure)
