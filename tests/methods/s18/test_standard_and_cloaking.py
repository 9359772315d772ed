"""S18.1 standard DP-GP and S18.2 cloaking: white-box audits at their claims, sensitivity
bounds on generated neighbours, the !Kung noise scale, planted pitfalls flagged."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpgp_audit import catalogue
from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.cloaking import solve_cloaking_paper
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.methods.s18.cloaking import CloakingGP, CloakingMechanism
from dpgp_audit.methods.s18.standard import StandardDPGP, b_bound, rkhs_sensitivity
from dpgp_audit.norms import Mahalanobis
from dpgp_audit.privacy.calibrate import CalibrationRangeError
from dpgp_audit.privacy.gdp import gdp_delta

DELTA = 0.01


def whitebox_delta_at(mech, data, d, eps):
    """Exact δ(ε) of the worst outputs-only pair (|Δy_j| = d) from the Gaussian profile."""
    cov = mech.cov(data)
    norm = Mahalanobis(cov)
    m0 = mech.mean(data)
    worst = 0.0
    for j in range(data.n):
        for s in (-d, d):
            m1 = mech.mean(data.with_target(j, data.y[j] + s))
            worst = max(worst, norm(m1 - m0))
    return worst, (1.0 if not np.isfinite(worst) else gdp_delta(eps, worst))


datasets = st.builds(
    lambda n, k, seed, ls, noise: (n, k, seed, ls, noise),
    st.integers(2, 12), st.integers(1, 14), st.integers(0, 2**31 - 1),
    st.floats(0.3, 4.0), st.floats(0.01, 1.0))


def make(params):
    n, k, seed, ls, noise = params
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(0, 10, n))
    y = rng.uniform(-1, 1, n)
    Xs = np.linspace(-1, 11, k)
    return Dataset(X[:, None], y), Xs, EQ(lengthscale=ls), noise


@settings(max_examples=12, deadline=None)
@given(params=datasets, eps=st.sampled_from([0.3, 1.0]),
       sens=st.sampled_from(["paper-b", "paper-inf", "rkhs"]))
def test_whitebox_standard_at_claim(params, eps, sens):
    data, Xs, kern, noise = make(params)
    mech = StandardDPGP(kern, noise, data.X, Xs, 1.0, eps, DELTA, sensitivity=sens,
                        method="hall")
    _, delta_true = whitebox_delta_at(mech, data, 1.0, eps)
    assert delta_true <= DELTA * (1 + 1e-9)


@settings(max_examples=12, deadline=None)
@given(params=datasets, eps=st.sampled_from([0.3, 1.0, 3.0]),
       method=st.sampled_from(["hall", "analytic", "gdp"]))
def test_whitebox_cloaking_at_claim(params, eps, method):
    data, Xs, kern, noise = make(params)
    if method == "hall" and eps > 1:
        with pytest.raises(CalibrationRangeError):
            CloakingGP(kern, noise, data.X, Xs, 1.0, eps, DELTA, method=method)
        return
    mech = CloakingGP(kern, noise, data.X, Xs, 1.0, eps, DELTA, method=method)
    mu, delta_true = whitebox_delta_at(mech, data, 1.0, eps)
    assert np.isfinite(mu)
    assert delta_true <= DELTA * (1 + 1e-7)
    if method != "hall":  # the analytic calibration is tight: the worst pair meets δ
        assert delta_true == pytest.approx(DELTA, rel=1e-3)


@settings(max_examples=10, deadline=None)
@given(params=datasets)
def test_sensitivity_bounds_hold_on_neighbours(params):
    data, Xs, kern, noise = make(params)
    rng = np.random.default_rng(0)
    for mech in (StandardDPGP(kern, noise, data.X, Xs, 0.7, 1.0, DELTA, sensitivity="rkhs"),
                 CloakingGP(kern, noise, data.X, Xs, 0.7, 1.0, DELTA)):
        base = mech.query(data)
        for j in range(data.n):
            step = rng.uniform(-0.7, 0.7)
            diff = mech.query(data.with_target(j, data.y[j] + step)) - base
            assert mech.norm(diff) <= mech.sensitivity_bound() * (1 + 1e-7) + 1e-12


@settings(max_examples=25, deadline=None)
@given(params=datasets)
def test_paper_bounds_cover_exact_rkhs_for_unit_kernels(params):
    data, _, kern, noise = make(params)
    Kp = kern(data.X)
    K = Kp + noise * np.eye(data.n)
    Kinv = np.linalg.inv(K)
    exact = rkhs_sensitivity(Kinv, Kp, 1.0)
    # naive oracle of the RKHS norm of Σ β_i k(·, x_i), β = K⁻¹e_j
    naive = max(np.sqrt(sum(Kinv[a, j] * Kinv[b, j] * Kp[a, b]
                            for a in range(data.n) for b in range(data.n)))
                for j in range(data.n))
    assert exact == pytest.approx(naive, rel=1e-9)
    assert exact <= b_bound(Kinv) * (1 + 1e-12)
    assert exact <= np.abs(Kinv).sum(axis=1).max() * (1 + 1e-12)


def test_rkhs_is_sup_of_mahalanobis_over_test_sets(rng):
    X = np.sort(rng.uniform(0, 5, 6))
    kern = EQ(lengthscale=1.0)
    grid = np.linspace(-3, 8, 60)
    mech = StandardDPGP(kern, 0.2, X, grid, 1.0, 1.0, DELTA, sensitivity="rkhs", jitter=0.0)
    Kp = kern(X[:, None])
    Kinv = np.linalg.inv(Kp + 0.2 * np.eye(6))
    exact = rkhs_sensitivity(Kinv, Kp, 1.0)
    norm = Mahalanobis(kern(grid[:, None]) + 1e-10 * np.eye(60))
    best = max(norm(mech.C[:, j]) for j in range(6))
    assert best <= exact * (1 + 1e-6)
    assert best >= 0.95 * exact  # a dense grid almost attains the RKHS norm


def test_kernel_range_premise_enforced():
    X = np.linspace(0, 1, 4)
    with pytest.raises(ValueError, match="kernel values"):
        StandardDPGP(EQ(1.0, variance=4.0), 0.1, X, X, 1.0, 1.0, DELTA, sensitivity="paper-b")
    StandardDPGP(EQ(1.0, variance=4.0), 0.1, X, X, 1.0, 1.0, DELTA, sensitivity="rkhs")


def _naive_b(Kinv):
    best = 0.0
    for j in range(Kinv.shape[0]):
        pos = sum(v for v in Kinv[:, j] if v > 0)
        neg = sum(-v for v in Kinv[:, j] if v < 0)
        best = max(best, pos, neg)
    return best


# S18 §4 (fn. 2) "we should scale our GP samples by 28.53" (cm), for the 287 !Kung females,
# EQ lengthscale 25 y, variance 7.72² cm², noise 14² cm², outputs normalised, d = 100 cm,
# ε = 50, δ = 0.01 and Hall's c(δ) = sqrt(2 log(2/δ)) (S18 eq. 2).
PAPER_FN2_SCALE = 28.53


def _kung_fn2_naive_scale() -> float:
    """S18 eq. (1) computed naively (explicit inverse, loops over columns), in cm."""
    from dpgp_audit.datasets.kung import load_kung

    kung = load_kung(females_only=True)
    sd = kung.height.std()
    x = kung.age[:, None]
    K = 7.72**2 / sd**2 * np.exp(-0.5 * (x - x.T) ** 2 / 25.0**2)
    Kinv = np.linalg.inv(K + 14.0**2 / sd**2 * np.eye(kung.n))
    return 100 / sd * _naive_b(Kinv) * np.sqrt(2 * np.log(2 / 0.01)) / 50 * sd


def test_kung_noise_scale_fn2(kung_mirror):
    from dpgp_audit.datasets.kung import load_kung

    kung = load_kung(females_only=True)
    assert kung.n == 287
    sd = kung.height.std()
    x = kung.age[:, None]
    kern = EQ(lengthscale=25.0, variance=7.72**2 / sd**2)
    with pytest.warns(UserWarning):
        mech = StandardDPGP(kern, 14.0**2 / sd**2, x, np.linspace(0, 90, 5), 100 / sd, 50.0,
                            0.01, sensitivity="paper-b", method="hall", allow_unproven=True)
    assert not mech.claim.proven
    # the kit against an independent computation of the same formula
    assert mech.scale * sd == pytest.approx(_kung_fn2_naive_scale(), rel=1e-9)
    # the exact RKHS sensitivity is an order of magnitude smaller
    assert mech.bounds["rkhs"] < 0.15 * mech.bounds["paper-b"]


def test_kung_noise_scale_fn2_deviation_from_paper(kung_mirror):
    """A documented deviation, not a tolerance: eq. (1) on the published data gives 26.91 cm,
    5.7 % below the paper's 28.53. Neither the sample sd with ddof = 1 (27.00) nor Dwork's
    c(δ) = sqrt(2 log(1.25/δ)) (25.69) reproduces the paper's figure, so the kit keeps the
    paper's stated formula and reports the gap (notebook 01)."""
    naive = _kung_fn2_naive_scale()
    assert round(naive, 2) == 26.91
    assert round(1 - naive / PAPER_FN2_SCALE, 3) == 0.057


def test_cloaking_prediction_outputs(rng):
    X = np.sort(rng.uniform(0, 10, 15))
    data = Dataset(X[:, None], np.sin(X))
    Xs = np.linspace(-2, 12, 30)  # k > n: singular M
    cg = CloakingGP(EQ(1.5), 0.1, data.X, Xs, 1.0, 1.0, DELTA)
    dp_mean, var, ncov = cg.predict(data, rng)
    m, v = ExactGP(EQ(1.5), 0.1).fit(data.X, data.y).predict(Xs[:, None])
    np.testing.assert_allclose(var, v, atol=1e-12)
    np.testing.assert_allclose(cg.mean(data), m, atol=1e-8)
    assert dp_mean.shape == (30,) and ncov.shape == (30, 30)
    assert np.linalg.matrix_rank(ncov, tol=1e-6 * np.abs(ncov).max()) <= 15
    with pytest.raises(ValueError, match="public inputs"):
        cg.sample(Dataset(data.X + 1, data.y), 1, rng)


def test_paper_solver_unconverged_still_private_and_indefinite_refused(rng):
    # Alg. 1 on an inactive constraint: λ_3 < 0 but M stays PSD; Δ from the M reached (with
    # the square root) keeps the release private.
    C = np.array([[1.0, 0.0, 0.1], [0.0, 1.0, 0.0]])
    sol = solve_cloaking_paper(C, rng, max_iter=2000)
    assert sol.lam[2] < 0 and not sol.converged
    mech = CloakingMechanism(C, 1.0, 1.0, DELTA, solution=sol)
    data = Dataset(np.zeros((3, 1)), np.zeros(3))
    norm = Mahalanobis(mech.M)
    assert max(norm(C[:, j]) for j in range(3)) <= mech.delta_m * (1 + 1e-9)
    bad = replace(sol, lam=np.array([1.0, -1.0]), M=np.diag([1.0, -1.0]))
    with pytest.raises(ValueError, match="positive semi-definite"):
        CloakingMechanism(np.eye(2), 1.0, 1.0, DELTA, solution=bad)
    assert mech.sample(data, 2, rng).shape == (2, 2)


def test_paper_solver_mechanism_is_private_when_converged(rng):
    C = rng.normal(size=(4, 4))
    mech = CloakingMechanism(C, 1.0, 1.0, DELTA, solver="paper", solver_rng=rng)
    fast = CloakingMechanism(C, 1.0, 1.0, DELTA)
    assert mech.sensitivity_bound() == pytest.approx(fast.sensitivity_bound(), rel=1e-3)


@pytest.mark.parametrize("entry", catalogue.entries(include_planted=True, paper="S18"),
                         ids=lambda e: e.id)
def test_registry_whitebox(entry):
    mech, data = entry.make()
    if not hasattr(mech, "cov"):
        pytest.skip("not a Gaussian release")
    claim = mech.claim
    mu, delta_true = whitebox_delta_at(mech, data, claim.relation.d, claim.epsilon)
    if entry.planted:
        assert delta_true > claim.delta  # flagged: the claim is violated
        assert entry.true_epsilon > claim.epsilon
    else:
        assert delta_true <= claim.delta * (1 + 1e-7)
