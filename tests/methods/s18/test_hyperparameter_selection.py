"""S18.4 DP hyperparameter selection: CV SSE vs sklearn, sensitivity (valid vs paper),
selection probabilities, exact privacy loss of the exponential mechanism."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF

from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.methods.s18.hyperparameter_selection import (
    GPConfig,
    HyperparameterSelection,
    clipped_sse_sensitivity,
    default_configs,
    kfold_folds,
    s18_sse_sensitivity,
)
from dpgp_audit.privacy.mechanisms import exponential_log_probabilities


def test_folds_partition(rng):
    folds = kfold_folds(23, 5, rng)
    allidx = np.sort(np.concatenate(folds))
    np.testing.assert_array_equal(allidx, np.arange(23))
    with pytest.raises(ValueError):
        kfold_folds(3, 5)


def test_sse_matches_sklearn(rng):
    X = np.sort(rng.uniform(0, 10, 20))[:, None]
    y = np.sin(X[:, 0]) + 0.3 * rng.normal(size=20)
    data = Dataset(X, y)
    configs = (GPConfig(EQ(lengthscale=1.3), 0.2), GPConfig(EQ(lengthscale=0.4), 0.05))
    sel = HyperparameterSelection(X, configs, 1.0, 1.0, n_folds=4)
    for r, (ls, nv) in enumerate([(1.3, 0.2), (0.4, 0.05)]):
        total = 0.0
        for test in sel.folds:
            train = np.setdiff1d(np.arange(20), test)
            gp = GaussianProcessRegressor(RBF(ls), alpha=nv, optimizer=None).fit(X[train],
                                                                                  y[train])
            err = np.clip(gp.predict(X[test]) - y[test], -4.0, 4.0)
            total += float(err @ err)
        assert sel.sse(data)[r] == pytest.approx(total, rel=1e-8)


def test_probabilities_formula(rng):
    X = np.linspace(0, 10, 16)[:, None]
    data = Dataset(X, np.cos(X[:, 0]))
    sel = HyperparameterSelection(X, default_configs(), 1.0, 0.7, n_folds=4)
    u = sel.query(data)
    w = np.exp(0.7 * (u - u.max()) / (2 * sel.delta_u))
    np.testing.assert_allclose(sel.probabilities(data), w / w.sum(), rtol=1e-12)
    draws = sel.sample(data, 20000, rng)
    freq = np.bincount(draws, minlength=4) / 20000
    np.testing.assert_allclose(freq, w / w.sum(), atol=0.02)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), amp=st.floats(0.0, 5.0), n=st.integers(8, 16))
def test_valid_sensitivity_and_privacy_loss_on_neighbours(seed, amp, n):
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(0, 10, n))[:, None]
    y = amp * rng.choice([-1.0, 1.0], n) + rng.normal(size=n)
    data = Dataset(X, y)
    sel = HyperparameterSelection(X, default_configs(), 1.0, 1.0, n_folds=4)
    base = sel.query(data)
    lp0 = exponential_log_probabilities(base, 1.0, sel.delta_u)
    for j in range(n):
        for s in (-1.0, 1.0, rng.uniform(-1, 1)):
            q = sel.query(data.with_target(j, y[j] + s))
            assert np.max(np.abs(q - base)) <= sel.delta_u * (1 + 1e-9)
            lp = exponential_log_probabilities(q, 1.0, sel.delta_u)
            assert np.max(np.abs(lp - lp0)) <= 1.0 + 1e-9


def test_paper_sse_sensitivity_is_exceeded():
    # S18-supp omits the cross term 2 eᵀδ of ‖e + δ‖² − ‖e‖²: neighbours exceed its bound.
    x = np.linspace(0.0, 10.0, 24)
    y = 2.0 * np.where(np.arange(24) % 2 == 0, 1.0, -1.0)
    data = Dataset(x[:, None], y)
    paper = HyperparameterSelection(data.X, default_configs(), 1.0, 1.0, n_folds=4,
                                    sensitivity=s18_sse_sensitivity)
    valid = HyperparameterSelection(data.X, default_configs(), 1.0, 1.0, n_folds=4)
    base = paper.query(data)
    worst = max(np.max(np.abs(paper.query(data.with_target(j, y[j] + s)) - base))
                for j in range(24) for s in (-1.0, 1.0))
    assert worst > paper.delta_u  # counterexample to the paper's bound
    assert worst <= valid.delta_u
    assert valid.delta_u > paper.delta_u


def test_pluggable_sensitivity_and_offsets():
    X = np.linspace(0, 10, 12)[:, None]
    calls = []

    def sens(C_folds, d, clip):
        calls.append(len(C_folds))
        return clipped_sse_sensitivity(C_folds, d, clip) + 1.0

    sel = HyperparameterSelection(X, default_configs()[:2], 1.0, 1.0, n_folds=3,
                                  sensitivity=sens, offsets=np.array([5.0, 0.0]))
    assert calls == [3, 3]
    data = Dataset(X, np.zeros(12))
    np.testing.assert_allclose(sel.sse(data), [5.0, 0.0], atol=1e-12)
