"""H.3 CoinPress, H.4 Liu–Talwar accounting, DP hyperparameter search and its black-box audit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import optimize

from dpgp_audit.audit.blackbox import audit_blackbox
from dpgp_audit.audit.result import Verdict
from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.synthetic import sinc_data
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.methods.honkela.hyperparameters import (
    Candidate,
    DPHyperparameterSearch,
    loglik_clip_bounds,
)
from dpgp_audit.privacy.claims import ApproxDP, whole_rows
from dpgp_audit.privacy.coinpress import coinpress_mean, coinpress_rho_schedule
from dpgp_audit.privacy.conversions import zcdp_to_epsilon
from dpgp_audit.privacy.random_stopping import (
    liu_talwar_t0,
    random_stopping,
    random_stopping_budget,
)

# ----------------------------------------------------------------------------- CoinPress


def test_rho_schedule():
    r = coinpress_rho_schedule(0.3)
    assert r.shape == (12,)
    assert math.isclose(r.sum(), 0.3)
    assert math.isclose(r[-1], 0.225)
    np.testing.assert_allclose(r[:-1], 0.075 / 11)


def test_coinpress_noise_matches_zcdp_accounting(rng):
    x = rng.normal(size=500)
    res = coinpress_mean(x, 0.0, 50.0, 0.5, rng)
    widths = res.intervals[:, 1] - res.intervals[:, 0]
    # each step: Gaussian with sensitivity width/n, rho_t = Δ²/(2 sd²); the total is rho
    rho_steps = (widths / 500) ** 2 / (2 * res.noise_sds**2)
    np.testing.assert_allclose(rho_steps, res.rhos, rtol=1e-12)
    assert math.isclose(rho_steps.sum(), 0.5)
    assert res.intervals[0, 0] == -50.0 and res.intervals[0, 1] == 50.0


@given(st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=30), st.floats(-1e3, 1e3),
       st.floats(-20, 20), st.floats(0.1, 30))
def test_clipped_mean_sensitivity(xs, new, c, r):
    x = np.array(xs)
    lo, hi = c - r, c + r
    x2 = x.copy()
    x2[0] = new
    diff = abs(np.mean(np.clip(x, lo, hi)) - np.mean(np.clip(x2, lo, hi)))
    assert diff <= (hi - lo) / len(x) * (1 + 1e-12) + 1e-12


def test_coinpress_is_accurate_with_loose_prior(rng):
    x = 3.0 + rng.normal(size=20000)
    res = coinpress_mean(x, 0.0, 1000.0, 1.0, rng)
    assert abs(res.estimate - x.mean()) < 0.02


def test_coinpress_validation(rng):
    with pytest.raises(ValueError, match="rho"):
        coinpress_mean(np.ones(3), 0.0, 1.0, -1.0, rng)
    with pytest.raises(ValueError, match="non-finite"):
        coinpress_mean(np.array([np.nan]), 0.0, 1.0, 1.0, rng)
    with pytest.raises(TypeError):
        coinpress_mean(np.ones(3), 0.0, 1.0, 1.0, 0)


# ----------------------------------------------------------------------------- Liu–Talwar


@pytest.mark.parametrize("delta_tot", [1e-2, 1e-4, 1e-8])
def test_t0_solves_equation(delta_tot):
    t0 = liu_talwar_t0(delta_tot)
    ref = optimize.brentq(lambda t: t * (1 - math.log(t)) - delta_tot, 1e-300, 1.0,
                          xtol=1e-300, rtol=1e-14)
    assert math.isclose(t0, ref, rel_tol=1e-10)
    assert 0 < t0 < delta_tot


@pytest.mark.parametrize(("eps", "dtot", "gamma"), [(3.0, 1e-3, 0.01), (30.0, 1e-4, 0.01),
                                                    (1.0, 1e-3, 0.5)])
def test_budget_accounting(eps, dtot, gamma):
    b = random_stopping_budget(eps, dtot, gamma)
    assert isinstance(b.T, int) and b.T >= math.log(1 / b.t0) / gamma - 1e-9
    assert math.isclose(b.delta2, math.exp(-gamma * b.T))
    assert b.achieved_delta_tot <= dtot * (1 + 1e-12)
    assert math.isclose(b.achieved_epsilon_tot, eps, rel_tol=1e-12)
    # close to the paper's unrounded recipe δ = γ² t0² / 2
    assert b.delta <= gamma**2 * b.t0**2 / 2 * (1 + 1e-12)
    assert b.delta >= 0.5 * gamma**2 * b.t0**2 / 2
    text = str(b)
    assert "t0" in text and f"T = {b.T}" in text


def test_budget_rejects_bad_inputs():
    with pytest.raises(ValueError, match="gamma"):
        random_stopping_budget(1.0, 1e-3, 1.5)
    with pytest.raises(ValueError, match="epsilon"):
        random_stopping_budget(1e-6, 0.5, 0.01)
    with pytest.raises(ValueError, match="delta_tot"):
        random_stopping_budget(1.0, 0.0, 0.1)


def test_random_stopping_keeps_best_and_stops_geometrically(rng):
    b = random_stopping_budget(3.0, 1e-3, 0.2)
    scores = np.array([0.0, 5.0, 1.0, -np.inf])
    res = [random_stopping(lambda i, g: (scores[i], i), 4, b, rng) for _ in range(3000)]
    draws = np.array([r.n_draws for r in res])
    assert draws.max() <= b.T
    assert abs(draws.mean() - 1 / 0.2) < 0.3         # geometric mean (truncation negligible)
    for r in res:
        assert r.index != 3                          # rejected scores never win
    frac_best = np.mean([r.index == 1 for r in res])
    p_seen = np.mean([1 - (3 / 4) ** d for d in draws])
    assert abs(frac_best - p_seen) < 0.03


# ----------------------------------------------------------------------------- H.4 search


def test_clip_bounds_match_eqs_30_31():
    C, R = loglik_clip_bounds(1.5, 0.1)
    l_max = -0.5 * math.log(2 * math.pi) - math.log(0.1)
    l_min = l_max - 4 * 1.5**2 / (2 * 0.1**2)
    assert math.isclose(C + R, l_max) and math.isclose(C - R, l_min)


def _search(eps_tot, n_train, gamma=0.3, cands=None, **kw):
    if cands is None:
        cands = [Candidate(EQ(lengthscale=ell), s) for ell in (0.3, 1.0) for s in (0.1, 0.5)]
    return DPHyperparameterSearch(Z=np.linspace(-3, 3, 9)[:, None], candidates=cands,
                                  y_bound=1.5, epsilon_tot=eps_tot, delta_tot=1e-4,
                                  gamma=gamma, n_train=n_train, clip=True, **kw)


def test_search_recovers_true_hyperparameters_at_large_epsilon(rng):
    data = sinc_data(800, 0.1, rng)
    search = _search(300.0, 400, gamma=0.1)
    assert search.claim.relation.kind.value == "whole-rows"
    picks = search.sample(data, 20, rng)[:, 0]
    # true: lengthscale 1 (sinc(2x) is smooth), noise 0.1 -> candidate index 2
    assert np.mean(picks == 2) >= 0.6


def _tiny_pair():
    # 30 training rows (first), 3 validation rows; one validation target moved far off
    x = np.concatenate([np.linspace(-2.5, 2.5, 30), [-1.1, 0.3, 1.7]])[:, None]
    y = 0.5 * np.sin(x[:, 0])
    d0 = Dataset(x, y)
    d1 = d0.with_row(32, [x[32, 0]], -1.0)
    return d0, d1


def test_blackbox_audit_of_selection_at_claim(rng):
    d0, d1 = _tiny_pair()
    search = _search(1.0, 30, gamma=0.5)
    res = audit_blackbox(search, d0, d1, n=300, rng=rng, score="categorical")
    assert res.verdict is not Verdict.VIOLATION


def test_blackbox_audit_flags_under_noised_selection(rng):
    # planted bug: run at a huge budget but claim epsilon_tot = 0.5
    d0, d1 = _tiny_pair()
    two = [Candidate(EQ(lengthscale=1.0), 0.1), Candidate(EQ(lengthscale=1.0), 0.5)]
    search = _search(3000.0, 30, gamma=0.2, cands=two)
    claim = ApproxDP(epsilon=0.5, delta=1e-4, relation=whole_rows(1.5))
    res = audit_blackbox(search, d0, d1, n=300, rng=rng, score="categorical", claim=claim)
    assert res.verdict is Verdict.VIOLATION


def test_zcdp_budget_of_coinpress_fits_in_candidate_budget():
    search = _search(3.0, 10, gamma=0.01)
    b = search.budget
    assert zcdp_to_epsilon(search.rho_cp, b.delta) <= b.epsilon * (1 + 1e-9)
