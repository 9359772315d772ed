"""Smoke and consistency tests of the S18 notebook drivers and plots (small sizes)."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from dpgp_audit.dataset import Dataset
from dpgp_audit.experiments.s18 import (
    CITI_BIKE_BOX,
    cloaking_rmse,
    journey_standin,
    mean_ci,
    ml_noise_sd,
    selection_heatmap,
    spatial_standin,
    surface_standin_2d,
    table1_best,
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
    (lat0, lon0), (lat1, lon1) = CITI_BIKE_BOX
    assert jd.X.shape == (80, 4)
    assert np.all((jd.X[:, [0, 2]] >= lat0) & (jd.X[:, [0, 2]] <= lat1))
    assert np.all((jd.X[:, [1, 3]] >= lon0) & (jd.X[:, [1, 3]] <= lon1))
    tab = table1_comparison(jd, lengthscales=[0.05], bins_per_dim=[2], epsilons=[None, 1.0],
                            d=2000.0, delta=0.01, n_folds=2, n_test=20,
                            kernel_variance=300.0**2, noise_variance=300.0**2, rng=rng,
                            centre=800.0)
    blind = "integral binning, DP noise not modelled"
    assert set(tab) == {(m, q, e) for m, q in (("cloaking", 0.05), ("simple binning", 2),
                                               ("integral binning", 2), (blind, 2))
                        for e in (None, 1.0)}
    # without DP there is no DP noise to model: both integral variants agree
    assert tab[(blind, 2, None)] == tab[("integral binning", 2, None)]


def test_surface_standin_2d_is_noise_dominated(rng):
    """Most of its variance is noise: the smooth surface explains well under half."""
    data = surface_standin_2d(4000, rng)
    assert data.X.shape == (4000, 2) and np.all((data.y >= 0) & (data.y <= 2000))
    X = data.X
    surface = 600 + 500 * np.hypot(X[:, 0] - 0.3, X[:, 1] - 0.6) + 150 * np.sin(9 * X[:, 0])
    assert np.var(surface) < 0.5 * np.var(data.y)


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


def test_table1_best_picks_the_lowest_mean_at_that_epsilon():
    tab = {("cloaking", 0.1, None): (5.0, 1.0), ("cloaking", 0.3, None): (4.0, 2.0),
           ("cloaking", 0.1, 1.0): (9.0, 1.0), ("cloaking", 0.3, 1.0): (7.0, 1.0),
           ("simple binning", 3, 1.0): (1.0, 1.0)}
    assert table1_best(tab, "cloaking", None) == (0.3, 4.0, 2.0)
    assert table1_best(tab, "cloaking", 1.0) == (0.3, 7.0, 1.0)
    with pytest.raises(ValueError, match="no rows"):
        table1_best(tab, "integral binning", 1.0)


def test_ml_noise_sd_recovers_the_generating_noise(rng):
    """Data drawn from the GP itself (kernel sd 10, noise sd 3, lengthscale 5): with 300
    points the ML noise sd lies within 15% of 3 (its sampling sd is about 4%)."""
    X = np.sort(rng.uniform(0, 50, 300))[:, None]
    K = EQ(5.0, 100.0)(X) + 1e-8 * np.eye(300)
    y = np.linalg.cholesky(K) @ rng.normal(size=300) + 3.0 * rng.normal(size=300)
    kern_sd, noise_sd = ml_noise_sd(Dataset(X, y), lengthscale=5.0, centre=0.0)
    assert noise_sd == pytest.approx(3.0, rel=0.15)
    assert kern_sd == pytest.approx(10.0, rel=0.5)
