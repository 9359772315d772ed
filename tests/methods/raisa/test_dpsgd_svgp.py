"""R.5: DP-SVGP trained by DP-SGD (R App. D) — gradients, accounting, privatisation, fit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.synthetic import gp_draw
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.methods.raisa import dpsgd_svgp as dpsvgp
from dpgp_audit.methods.raisa.dpsgd_svgp import (
    DPSGDSVGP,
    calibrate_dpsgd_noise,
    dpsgd_epsilon,
    privatise_gradient_sum,
    svgp_per_example_grads,
)
from dpgp_audit.privacy.claims import Neighbour
from dpgp_audit.privacy.conversions import rdp_gaussian_epsilon
from dpgp_audit.privacy.gdp import gdp_epsilon

pytest.importorskip("dp_accounting")


def _ell_loop(a, kd, y, m, L, s):
    """Independent scalar implementation of the per-example expected log-likelihood."""
    S = L @ L.T
    r = y - a @ m
    return (-0.5 * math.log(2 * math.pi) - 0.5 * s
            - (r * r + a @ S @ a + kd - a @ a) / (2 * math.exp(s)))


@pytest.mark.parametrize("diag", [False, True])
def test_r5_per_example_gradients_match_finite_differences(rng, diag):
    M, B = 4, 3
    A = rng.normal(size=(M, B))
    kd = 1.0 + np.sum(A * A, axis=0)
    y = rng.normal(size=B)
    m = rng.normal(size=M)
    L = np.tril(rng.normal(size=(M, M))) + 2 * np.eye(M)
    if diag:
        L = np.diag(np.diag(L))
    s = -0.7
    ell, G = svgp_per_example_grads(A, kd, y, m, L, s, diag=diag)
    rows, cols = (np.arange(M), np.arange(M)) if diag else np.tril_indices(M)
    h = 1e-6
    for b in range(B):
        assert ell[b] == pytest.approx(_ell_loop(A[:, b], kd[b], y[b], m, L, s), rel=1e-12)
        num = []
        for i in range(M):
            e = np.zeros(M)
            e[i] = h
            num.append((_ell_loop(A[:, b], kd[b], y[b], m + e, L, s)
                        - _ell_loop(A[:, b], kd[b], y[b], m - e, L, s)) / (2 * h))
        for i, j in zip(rows, cols, strict=True):
            E = np.zeros((M, M))
            E[i, j] = h
            num.append((_ell_loop(A[:, b], kd[b], y[b], m, L + E, s)
                        - _ell_loop(A[:, b], kd[b], y[b], m, L - E, s)) / (2 * h))
        num.append((_ell_loop(A[:, b], kd[b], y[b], m, L, s + h)
                    - _ell_loop(A[:, b], kd[b], y[b], m, L, s - h)) / (2 * h))
        np.testing.assert_allclose(G[b], num, rtol=1e-5, atol=1e-7)


def test_r5_kl_gradient_matches_finite_differences(rng):
    M = 3
    m = rng.normal(size=M)
    L = np.tril(rng.normal(size=(M, M))) + 2 * np.eye(M)
    kl, g = dpsvgp._kl_grad(m, L, False)
    S = L @ L.T
    ref = 0.5 * (np.trace(S) + m @ m - M - np.linalg.slogdet(S)[1])
    assert kl == pytest.approx(ref, rel=1e-12)
    h = 1e-6
    rows, cols = np.tril_indices(M)
    for k, (i, j) in enumerate(zip(rows, cols, strict=True)):
        E = np.zeros((M, M))
        E[i, j] = h
        num = (dpsvgp._kl_grad(m, L + E, False)[0] - dpsvgp._kl_grad(m, L - E, False)[0]) / (2 * h)
        assert g[M + k] == pytest.approx(num, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize(("z", "steps"), [(1.0, 1), (3.0, 10), (20.0, 50)])
def test_r5_accountant_without_subsampling_brackets_exact_gdp(z, steps):
    """Full batches (q = 1): T Gaussian steps with noise z × sensitivity are exactly
    sqrt(T)/z-GDP, so the RDP accountant's ε lies between the exact GDP ε and the
    closed-form RDP optimum (R eqs. 38–39) up to the order grid."""
    delta = 1e-3
    mu = math.sqrt(steps) / z
    eps = dpsgd_epsilon(z, 100, 100, steps, delta)
    assert gdp_epsilon(delta, mu) <= eps <= rdp_gaussian_epsilon(mu, delta) * 1.02


def test_r5_calibration_is_tight_and_never_under_noised():
    z = calibrate_dpsgd_noise(1.0, 1e-3, 60, 10, 20)
    assert dpsgd_epsilon(z, 60, 10, 20, 1e-3) <= 1.0
    assert dpsgd_epsilon(0.99 * z, 60, 10, 20, 1e-3) > 1.0
    with pytest.raises(ValueError, match="batch_size"):
        calibrate_dpsgd_noise(1.0, 1e-3, 10, 20, 5)


def test_r5_privatised_sum_noise_is_two_c_times_z(rng):
    G = np.zeros((5, 4000))
    out = privatise_gradient_sum(G, clip_norm=0.7, noise_multiplier=1.5, rng=rng)
    assert np.std(out) == pytest.approx(2 * 0.7 * 1.5, rel=0.05)


@given(rows=st.lists(st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=3), min_size=2,
                     max_size=6),
       new=st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=3), C=st.floats(0.01, 10.0))
def test_r5_property_clipped_sum_moves_at_most_2c_under_substitution(rows, new, C):
    G0 = np.array(rows)
    G1 = G0.copy()
    G1[0] = new
    rng0, rng1 = np.random.default_rng(0), np.random.default_rng(0)
    d = privatise_gradient_sum(G0, C, 1.0, rng0) - privatise_gradient_sum(G1, C, 1.0, rng1)
    # the same noise on both sides: d is the change of the clipped sum, each coordinate then
    # rounded to the release grid Λ ≤ sd / 1024 with sd = 2C (issue 20 §4): at most Λ more
    grid = 2 * C / 1024
    assert np.linalg.norm(d) <= 2 * C * (1 + 1e-9) + np.sqrt(d.size) * grid


def _data(rng, n=120):
    X = rng.uniform(-2, 2, n)
    y = gp_draw(EQ(0.6, 1.0), X, rng, noise_std=0.3)
    return Dataset(X[:, None], y)


def test_r5_nonprivate_optimiser_approaches_exact_gp(rng):
    data = _data(rng)
    Z = np.linspace(-2.2, 2.2, 20)[:, None]
    model = DPSGDSVGP(EQ(0.6, 1.0), Z, 1.0, 1e-3, steps=1500, batch_size=60, learning_rate=0.03,
                   clip_norm=1e6, diag_covariance=False)
    fit = model.fit(data, rng, _noise_multiplier=0.0)
    Xs = np.linspace(-1.8, 1.8, 25)[:, None]
    exact_mean, _ = ExactGP(EQ(0.6, 1.0), 0.09).fit(data.X, data.y).predict(Xs)
    mean, var = fit.predict(Xs)
    assert np.abs(mean - exact_mean).max() < 0.15
    assert 0.03 < fit.noise_variance < 0.2
    assert np.all(var > fit.noise_variance)


def test_r5_private_fit_claim_and_validation(rng):
    data = _data(rng, n=60)
    Z = np.linspace(-2.2, 2.2, 8)[:, None]
    model = DPSGDSVGP(EQ(0.6, 1.0), Z, 2.0, 1e-3, steps=20, batch_size=20)
    fit = model.fit(data, rng)
    assert fit.claim.epsilon == 2.0 and fit.claim.relation.kind is Neighbour.ROWS
    assert dpsgd_epsilon(fit.noise_multiplier, 60, 20, 20, 1e-3) <= 2.0
    mean, var = fit.predict(np.zeros((3, 1)))
    assert mean.shape == (3,) and np.all(var > 0)
    with pytest.raises(ValueError, match="dimension"):
        model.fit(Dataset(np.zeros((5, 2)), np.zeros(5)), rng)
    with pytest.raises(ValueError, match="epsilon"):
        DPSGDSVGP(EQ(), Z, 0.0, 1e-3)
    with pytest.raises(TypeError, match="Generator"):
        model.fit(data, None)


def test_r5_experiment_helpers_numpy_only(rng):
    from dpgp_audit.experiments.raisa import dpsvgp_predict, nll_vs_n

    curves = nll_vs_n("eq", [5, 20], 2, rng, dpsvgp_kwargs={"steps": 5}, n_target=8)
    assert set(curves) == {"oracle", "DP-SVGP"}
    assert curves["oracle"].mean.shape == (2,) and np.all(np.isfinite(curves["DP-SVGP"].mean))
    mean, std = dpsvgp_predict(np.linspace(-1, 1, 12), np.zeros(12), np.zeros(3), 1.0, 1e-3,
                               rng, steps=5)
    assert mean.shape == (3,) and np.all(std > 0)


def test_r5_kung_splits_are_scaled(rng, kung_mirror):
    from dpgp_audit.experiments.raisa import kung_tasks

    splits = kung_tasks("height", 300, 2, rng)
    s = splits[0]
    assert s.xc.size == 300 and s.xt.size == 244
    allx = np.concatenate([s.xc, s.xt])
    assert allx.min() == pytest.approx(-1.0) and allx.max() == pytest.approx(1.0)
    ally = np.concatenate([s.yc, s.yt])
    assert ally.mean() == pytest.approx(0.0, abs=1e-12) and ally.std() == pytest.approx(1.0)


def test_r5_kung_splits_of_a_given_table_use_that_table(rng):
    """The notebook passes the table from load_kung_or_standin: splits of exactly those rows."""
    from dpgp_audit.datasets.kung import kung_standin
    from dpgp_audit.experiments.raisa import kung_tasks

    table = kung_standin(np.random.default_rng(0))
    s = kung_tasks("weight", 300, 1, rng, data=table)[0]
    w = np.asarray(table.weight)
    want = np.sort((w - w.mean()) / w.std())  # independent scaling of the given column
    np.testing.assert_allclose(np.sort(np.concatenate([s.yc, s.yt])), want, rtol=1e-12)
    assert s.xc.size == 300 and s.xt.size == table.n - 300
