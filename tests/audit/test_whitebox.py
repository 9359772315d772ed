"""A.2 white-box auditor: exact profiles, range check, unequal covariances, worst pair."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats

from dpgp_audit.audit.result import AuditReport, Guarantee, Verdict, _fmt
from dpgp_audit.audit.whitebox import (
    audit_whitebox,
    factor_covariance,
    gaussian_profile,
    unequal_gaussian_profile,
)
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
from dpgp_audit.privacy.claims import ZCDP, ApproxDP, GaussianDP, PureDP, outputs_only
from dpgp_audit.privacy.gdp import gdp_delta, gdp_epsilon, gdp_mu

REL = outputs_only(1.0)


@dataclass(frozen=True, eq=False)
class LinearGaussian:
    """Test-only mechanism: release A y + N(0, Σ(y)) with Σ = cov_fn(y) (default fixed Σ)."""

    A: np.ndarray
    Sigma: np.ndarray
    the_claim: object
    cov_fn: object = None
    _L: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        w, U = np.linalg.eigh(self.Sigma)
        object.__setattr__(self, "_L", U * np.sqrt(np.clip(w, 0, None)))

    @property
    def claim(self):
        return self.the_claim

    def mean(self, data: Dataset) -> np.ndarray:
        return self.A @ data.y

    def cov(self, data: Dataset) -> np.ndarray:
        return self.Sigma if self.cov_fn is None else self.cov_fn(data)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.mean(data) + rng.standard_normal((n, self._L.shape[1])) @ self._L.T


def _data(y) -> Dataset:
    y = np.asarray(y, dtype=float)
    return Dataset(np.arange(y.size, dtype=float)[:, None], y)


# ----------------------------------------------------------------------------- exactness


@pytest.mark.parametrize(("delta_y", "sigma"), [(1.0, 3.0), (0.3, 0.1), (2.0, 5.0)])
def test_one_dimensional_mu_is_shift_over_sigma(delta_y, sigma):
    prof = gaussian_profile([0.0], [delta_y], [[sigma**2]])
    assert prof.mu == pytest.approx(delta_y / sigma, rel=1e-12)
    assert prof.delta_at(1.0) == pytest.approx(gdp_delta(1.0, delta_y / sigma), rel=1e-12)
    # independent closed form of the hockey-stick divergence of two unit-variance Gaussians
    mu = delta_y / sigma
    hs = stats.norm.cdf(-1.0 / mu + mu / 2) - math.e * stats.norm.cdf(-1.0 / mu - mu / 2)
    assert prof.delta_at(1.0) == pytest.approx(hs, rel=1e-9)


def test_analytic_gaussian_reference_value_is_exactly_at_its_claim():
    # AUDITING.md §1: (1, 1e-5) -> mu = 0.2681, sigma = 3.7306 (dp_accounting reference).
    sigma = analytic_gaussian_sigma(1.0, 1e-5, 1.0)
    assert sigma == pytest.approx(3.7306, abs=1e-4)
    mech = LinearGaussian(np.eye(1), np.array([[sigma**2]]),
                          ApproxDP(epsilon=1.0, delta=1e-5, relation=REL))
    res = audit_whitebox(mech, [(_data([0.0]), _data([1.0]))])
    assert res.verdict is Verdict.NO_EVIDENCE and res.guarantee is Guarantee.EXACT
    assert res.estimate == pytest.approx(1.0, abs=1e-6)
    assert res.details["mu"] == pytest.approx(0.2681, abs=1e-4)


def test_multivariate_mu_matches_solve_oracle(rng):
    d = 7
    B = rng.standard_normal((d, d))
    S = B @ B.T + 0.1 * np.eye(d)
    m0, m1 = rng.standard_normal(d), rng.standard_normal(d)
    diff = m1 - m0
    oracle = math.sqrt(diff @ np.linalg.solve(S, diff))
    assert gaussian_profile(m0, m1, S).mu == pytest.approx(oracle, rel=1e-9)
    # and via a Cholesky whitening loop (naive oracle)
    L = np.linalg.cholesky(S)
    z = np.linalg.solve(L, diff)
    assert gaussian_profile(m1, m0, S).mu == pytest.approx(float(np.linalg.norm(z)), rel=1e-9)


def test_singular_covariance_in_range_uses_pseudo_inverse():
    S = np.diag([4.0, 1.0, 0.0])
    prof = gaussian_profile(np.zeros(3), np.array([2.0, 1.0, 0.0]), S)
    assert not prof.infinite and prof.rank == 2
    assert prof.mu == pytest.approx(math.sqrt(1.0 + 1.0), rel=1e-12)


def test_range_check_reports_infinite_loss_with_direction():
    # Rotated singular covariance: the null direction is (1, -1, 0)/sqrt 2.
    v = np.array([1.0, 1.0, 0.0]) / math.sqrt(2)
    S = np.outer(v, v) + np.diag([0.0, 0.0, 2.0])
    diff = np.array([1.0, 0.0, 0.5])
    prof = gaussian_profile(np.zeros(3), diff, S)
    assert prof.infinite and prof.mu == math.inf
    null = np.array([1.0, -1.0, 0.0]) / math.sqrt(2)
    assert abs(prof.direction @ null) == pytest.approx(1.0, abs=1e-9)
    assert prof.out_of_range_norm == pytest.approx(abs(diff @ null), rel=1e-9)
    assert prof.delta_at(50.0) == 1.0 and prof.epsilon_at(1e-5) == math.inf

    mech = LinearGaussian(np.eye(3), S, ApproxDP(epsilon=1.0, delta=1e-5, relation=REL))
    res = audit_whitebox(mech, [(_data([0, 0, 0]), _data(diff))])
    assert res.violation and res.estimate == math.inf
    assert abs(np.asarray(res.details["offending_direction"]) @ null) == pytest.approx(1.0)
    assert "witness" in res.details


def test_roundoff_in_large_means_is_not_a_leak():
    S = np.diag([1.0, 1.0, 0.0])
    m0 = np.array([1e6, 2e6, 3e6])
    m1 = m0 + np.array([1.0, 0.0, 3e6 * 1e-15])  # last component is round-off
    assert not gaussian_profile(m0, m1, S).infinite


def test_bad_covariances_raise():
    with pytest.raises(ValueError, match="positive semi-definite"):
        gaussian_profile([0, 0], [1, 0], np.diag([1.0, -1.0]))
    with pytest.raises(ValueError, match="symmetric"):
        gaussian_profile([0, 0], [1, 0], np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="non-finite"):
        gaussian_profile([0, 0], [1, 0], np.array([[np.nan, 0], [0, 1.0]]))
    with pytest.raises(ValueError, match="deterministic"):
        gaussian_profile([0, 0], [1, 0], np.zeros((2, 2)))


@given(mu=st.floats(0.05, 8.0), eps=st.floats(0.0, 20.0))
def test_profile_roundtrip_and_monotonicity(mu, eps):
    prof = gaussian_profile([0.0], [mu], [[1.0]])
    d = prof.delta_at(eps)
    assert 0 <= d <= 1
    assert prof.delta_at(eps + 0.1) <= d
    assert gaussian_profile([0.0], [mu * 1.1], [[1.0]]).delta_at(eps) >= d
    if 1e-250 < d < 0.99:
        assert prof.epsilon_at(d) == pytest.approx(eps, rel=1e-6, abs=1e-6)


# ----------------------------------------------------------------------------- the audit


def _mech(sens_factor: float, claim: object, d: int = 1) -> LinearGaussian:
    sigma = analytic_gaussian_sigma(1.0, 1e-5, 1.0)
    return LinearGaussian(sens_factor * np.eye(d), sigma**2 * np.eye(d), claim)


def test_sensitivity_doubled_is_a_violation_with_zero_samples():
    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=REL)
    res = audit_whitebox(_mech(2.0, claim), [(_data([0.0]), _data([1.0]))])
    assert res.violation and res.guarantee is Guarantee.EXACT and res.alpha is None
    assert res.estimate == pytest.approx(2.155, abs=2e-3)  # AUDITING.md §4.2 true eps
    assert res.details["delta_at_claimed_epsilon"] > 1e-5


def test_worst_case_over_pairs_both_orders_and_witness():
    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=REL)
    mech = _mech(1.0, claim, d=3)
    base = _data([0.0, 0.0, 0.0])
    pairs = [(base, base.with_target(0, 0.5)), (base.with_target(1, 1.0), base),
             (base, base.with_target(2, 0.2))]
    res = audit_whitebox(mech, pairs)
    assert res.details["witness"]["index"] == 1
    assert res.details["mu"] == pytest.approx(gdp_mu(1.0, 1e-5), rel=1e-8)
    assert res.verdict is Verdict.NO_EVIDENCE
    assert res.details["factorisations"] == 1  # eigendecomposition cached across pairs


def test_gdp_zcdp_and_pure_claims():
    mu_true = gdp_mu(1.0, 1e-5)
    pair = [(_data([0.0]), _data([1.0]))]
    mech = _mech(1.0, GaussianDP(mu=mu_true * 0.99, relation=REL))
    res = audit_whitebox(mech, pair)
    assert res.violation and res.quantity == "mu"
    assert res.estimate == pytest.approx(mu_true, rel=1e-9)
    assert not audit_whitebox(mech, pair, claim=GaussianDP(mu=mu_true, relation=REL)).violation
    rho = mu_true**2 / 2
    assert not audit_whitebox(mech, pair, claim=ZCDP(rho=rho * 1.001, relation=REL)).violation
    res = audit_whitebox(mech, pair, claim=ZCDP(rho=rho * 0.99, relation=REL))
    assert res.violation and res.quantity == "rho"
    res = audit_whitebox(mech, pair, claim=PureDP(epsilon=5.0, relation=REL))
    assert res.violation and res.estimate == math.inf


def test_audit_requires_gaussian_release_and_pairs():
    class NotGaussian:
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=REL)

        def sample(self, data, n, rng):
            return np.zeros((n, 1))

    with pytest.raises(TypeError, match="GaussianRelease"):
        audit_whitebox(NotGaussian(), [(_data([0.0]), _data([1.0]))])
    with pytest.raises(ValueError, match="empty"):
        audit_whitebox(_mech(1.0, NotGaussian.claim), [])


# ----------------------------------------------------------------------------- unequal covariance


def _hockey_stick_quad(m0, s0, m1, s1, eps):
    """Independent oracle: ∫ (p − e^ε q)_+ by adaptive quadrature (1-D)."""
    f = lambda x: max(stats.norm.pdf(x, m0, s0) - math.exp(eps) * stats.norm.pdf(x, m1, s1), 0)  # noqa: E731
    lo = min(m0 - 12 * s0, m1 - 12 * s1)
    hi = max(m0 + 12 * s0, m1 + 12 * s1)
    return integrate.quad(f, lo, hi, limit=400, points=[m0, m1])[0]


def test_unequal_variance_closed_form_one_dimensional(rng):
    # Equal means, variances s0 < s1: L(x) = log(s1/s0) − x²/2 (1/s0² − 1/s1²), so
    # δ(ε) = P(|x| < r) − e^ε Q(|x| < r) with r² = 2(log(s1/s0) − ε)/(1/s0² − 1/s1²).
    s0, s1, eps = 1.0, 2.0, 0.3
    r = math.sqrt(2 * (math.log(s1 / s0) - eps) / (1 / s0**2 - 1 / s1**2))
    closed = (2 * stats.norm.cdf(r / s0) - 1) - math.exp(eps) * (2 * stats.norm.cdf(r / s1) - 1)
    assert closed == pytest.approx(_hockey_stick_quad(0, s0, 0, s1, eps), rel=1e-6)
    up = unequal_gaussian_profile([0.0], [[s0**2]], [0.0], [[s1**2]], n=200_000, rng=rng)
    lo, point, hi = up.delta_interval(eps, 0.001)
    assert lo <= closed <= hi
    assert point == pytest.approx(closed, abs=4 * math.sqrt(closed / 200_000))


def test_unequal_mean_and_variance_against_quadrature(rng):
    m1, s0, s1 = 0.8, 1.0, 1.3
    for eps in (0.0, 0.5, 1.0):
        oracle = _hockey_stick_quad(0.0, s0, m1, s1, eps)
        up = unequal_gaussian_profile([0.0], [[s0**2]], [m1], [[s1**2]], n=100_000, rng=rng)
        lo, _, hi = up.delta_interval(eps, 0.001)
        assert lo <= oracle <= hi
        # reverse order
        oracle_r = _hockey_stick_quad(m1, s1, 0.0, s0, eps)
        upr = unequal_gaussian_profile([m1], [[s1**2]], [0.0], [[s0**2]], n=100_000, rng=rng)
        lo, _, hi = upr.delta_interval(eps, 0.001)
        assert lo <= oracle_r <= hi


def test_unequal_equal_covariance_reduces_to_exact_profile(rng):
    up = unequal_gaussian_profile([0.0, 0.0], np.eye(2), [1.0, 0.5], np.eye(2), n=200_000,
                                  rng=rng)
    mu = math.sqrt(1.25)
    eps_true = gdp_epsilon(1e-2, mu)
    assert up.epsilon_lower(1e-2, 0.01) <= eps_true
    assert up.epsilon_point(1e-2) == pytest.approx(eps_true, abs=0.1)


def test_unequal_ranges_are_infinite(rng):
    up = unequal_gaussian_profile([0, 0], np.diag([1.0, 0.0]), [0, 0], np.eye(2), n=10, rng=rng)
    assert up.infinite and "range" in up.reason
    assert up.delta_interval(3.0, 0.05) == (1.0, 1.0, 1.0)


def test_audit_with_data_dependent_covariance(rng):
    # Σ(D) depends on y: variance 1 + y₀². Claim far below the truth is flagged (Monte Carlo).
    claim = ApproxDP(epsilon=0.1, delta=1e-3, relation=REL)
    mech = LinearGaussian(np.eye(1), np.eye(1), claim,
                          cov_fn=lambda d: np.array([[1.0 + d.y[0] ** 2]]))
    res = audit_whitebox(mech, [(_data([0.0]), _data([1.0]))], rng=rng, n_mc=50_000)
    assert res.violation and res.guarantee is Guarantee.MONTE_CARLO
    assert res.alpha == 0.05
    assert res.details["unequal_covariance_pairs"] == 1
    # and the MC estimate agrees with quadrature of the worse order
    rows = res.details["monte_carlo"]["rows"]
    oracles = [_hockey_stick_quad(0, 1, 1, math.sqrt(2), 0.1),
               _hockey_stick_quad(1, math.sqrt(2), 0, 1, 0.1)]
    for row, oracle in zip(rows, oracles, strict=True):
        assert row["delta_lower"] <= oracle
        assert row["delta_point"] == pytest.approx(oracle, abs=0.01)
    # a claim above the truth (δ(1) = 0.189 by quadrature) is not flagged
    res = audit_whitebox(mech, [(_data([0.0]), _data([1.0]))], rng=rng, n_mc=50_000,
                         claim=ApproxDP(epsilon=1.0, delta=0.2, relation=REL))
    assert res.verdict is Verdict.NO_EVIDENCE
    with pytest.raises(ValueError, match="rng"):
        audit_whitebox(mech, [(_data([0.0]), _data([1.0]))])


def test_A2_report_says_which_pairs_the_exact_mu_covers(rng):
    """With the covariance moving on some pairs only, the report's μ is the worst over the
    equal-covariance pairs, and the line says so and gives the Monte Carlo bound beside it
    (a μ below the claim next to a huge ε read as a contradiction)."""
    claim = ApproxDP(epsilon=0.1, delta=1e-3, relation=REL)
    mech = LinearGaussian(np.eye(1), np.eye(1), claim,
                          cov_fn=lambda d: np.array([[1.0 + max(d.y[0], 0.0) ** 2]]))
    pairs = [(_data([0.0]), _data([-0.5])), (_data([-1.0]), _data([-0.8])),
             (_data([0.0]), _data([1.0]))]
    res = audit_whitebox(mech, pairs, rng=rng, n_mc=20_000)
    assert res.details["unequal_covariance_pairs"] == 1 and res.details["mu"] == 0.5
    line = AuditReport(mechanism="M", claim={}, inputs={}, results=(res,)).table()
    assert "worst pair mu = 0.5 over the 2 pair(s) whose noise covariance is the same" in line
    worst = max(r["epsilon_lower"] for r in res.details["monte_carlo"]["rows"])
    assert f"1 pair(s) whose noise covariance moves with the data, bounded by Monte Carlo " \
           f"(Monte Carlo epsilon lower bound {_fmt(worst)} at delta 0.001)" in line
    only = audit_whitebox(mech, pairs[2:], rng=rng, n_mc=20_000)
    line = AuditReport(mechanism="M", claim={}, inputs={}, results=(only,)).table()
    assert "worst pair mu" not in line and "1 pair(s) whose noise covariance moves" in line
    fixed = audit_whitebox(mech, pairs[:2], rng=rng)
    line = AuditReport(mechanism="M", claim={}, inputs={}, results=(fixed,)).table()
    assert "worst pair mu = 0.5 over 2 pairs;" in line


def test_factor_covariance_reuse_and_same_range():
    f = factor_covariance(np.diag([1.0, 2.0, 0.0]))
    assert f.rank == 2
    g = factor_covariance(np.diag([5.0, 0.1, 0.0]))
    h = factor_covariance(np.diag([5.0, 0.0, 0.1]))
    assert f.same_range(g) and not f.same_range(h)


def _eq(a, b, ell):
    return np.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / ell**2)


@pytest.mark.parametrize("ell", [0.1, 0.3, 1.0])
def test_numerically_singular_gp_covariance_is_not_a_false_leak(ell, rng):
    # Hall et al. (2013): posterior-mean differences r C e_i released with GP(0, K) noise at a
    # dense grid of 200 test points. K** is numerically singular (rank ~10-35), yet the mean
    # difference lies in its range up to ~1e-9, and μ must match the RKHS sensitivity
    # sqrt((A K A)_ii) (an independent closed form) instead of being declared infinite.
    X = np.sort(rng.random(20))
    Xs = np.linspace(-0.2, 1.2, 200)
    A = np.linalg.inv(_eq(X, X, ell) + 0.01 * np.eye(20))
    C = _eq(Xs, X, ell) @ A
    aka = A @ _eq(X, X, ell) @ A
    f = factor_covariance(_eq(Xs, Xs, ell))
    assert f.rank < 60
    for i in (0, 7, 19):
        prof = gaussian_profile(np.zeros(200), C[:, i], f)
        assert not prof.infinite
        assert prof.mu == pytest.approx(math.sqrt(aka[i, i]), rel=1e-6)
    # removing the kernel's top eigen-direction from the noise leaks along it: μ = ∞
    w, U = np.linalg.eigh(_eq(Xs, Xs, ell))
    broken = (U[:, :-1] * w[:-1]) @ U[:, :-1].T
    prof = gaussian_profile(np.zeros(200), C[:, 7], broken)
    assert prof.infinite and abs(prof.direction @ U[:, -1]) == pytest.approx(1.0, abs=1e-6)


def test_batched_profiles_match_single_pair_profiles(rng):
    from dpgp_audit.audit.whitebox import gaussian_profiles

    d = 6
    B = rng.standard_normal((d, 4))
    S = B @ B.T  # rank 4
    f = factor_covariance(S)
    m0 = rng.standard_normal((5, d))
    m1 = m0 + rng.standard_normal((5, 4)) @ B.T * 0.3  # in range
    m1[2] += 0.5 * np.linalg.svd(B)[0][:, -1]  # pair 2 leaves the range
    batch = gaussian_profiles(m0, m1, f)
    for i in range(5):
        single = gaussian_profile(m0[i], m1[i], f)
        assert batch[i].infinite == single.infinite == (i == 2)
        if i != 2:
            assert batch[i].mu == pytest.approx(single.mu, rel=1e-12)


def test_monte_carlo_bernoulli_trick_coverage():
    # The Bernoulli trick makes the count exactly Bin(n, δ): the one-sided CP lower bound must
    # exceed the closed-form δ in at most a fraction a of repetitions (binomial test).
    from dpgp_audit.audit.stats import cp_lower

    s0, s1, eps, a = 1.0, 2.0, 0.3, 0.1
    r = math.sqrt(2 * (math.log(s1 / s0) - eps) / (1 / s0**2 - 1 / s1**2))
    truth = (2 * stats.norm.cdf(r / s0) - 1) - math.exp(eps) * (2 * stats.norm.cdf(r / s1) - 1)
    runs, misses = 300, 0
    for seed in np.random.SeedSequence(5).spawn(runs):
        up = unequal_gaussian_profile([0.0], [[s0**2]], [0.0], [[s1**2]], n=500,
                                      rng=np.random.default_rng(seed))
        misses += cp_lower(up.count(eps), 500, a) > truth
    assert stats.binomtest(int(misses), runs, a, alternative="greater").pvalue >= 1e-3
    assert misses > 0  # not vacuous: the bound is close enough to the truth to miss sometimes
