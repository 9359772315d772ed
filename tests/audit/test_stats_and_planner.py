"""A.3 statistics: Clopper–Pearson bounds, ε / μ lower bounds, ceilings and the planner."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dpgp_audit.audit.blackbox.planner import plan_samples, power_at
from dpgp_audit.audit.stats import (
    cp_lower,
    cp_upper,
    epsilon_ceiling,
    epsilon_lower_bound,
    epsilon_lower_bound_paired_tails,
    epsilon_lower_bound_rank_count,
    mu_ceiling,
    mu_lower_bound,
    paired_tails_pvalue,
    rank_count_pvalue,
)
from dpgp_audit.privacy.gdp import gdp_epsilon, gdp_mu

# ------------------------------------------------------------ reference values


def test_tf_privacy_reference_500_vs_0_gives_4_54():
    # TF-Privacy / Jagielski et al.: 500 hits vs 0 at alpha = 0.01 certifies eps = 4.54.
    assert epsilon_lower_bound(500, 500, 0, 500, 0.0, 0.01) == pytest.approx(4.54, abs=5e-3)
    # closed form of a perfect distinguisher: a^(1/n) and 1 - a^(1/n) with a = alpha/2
    a = 0.005
    expected = math.log(a ** (1 / 500) / (1 - a ** (1 / 500)))
    assert epsilon_lower_bound(500, 500, 0, 500, 0.0, 0.01) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize(("n", "ceiling"), [(10, 0.81), (100, 3.28), (1000, 5.60), (10**4, 7.90),
                                            (10**5, 10.21), (10**6, 12.51), (10**7, 14.81)])
def test_epsilon_ceiling_table_of_auditing_md(n, ceiling):
    assert epsilon_ceiling(n, 0.05) == pytest.approx(ceiling, abs=0.006)
    # the AUDITING.md approximation log(n / ln(2/alpha)) for large n
    if n >= 1000:
        approx = math.log(n / math.log(2 / 0.05))
        assert epsilon_ceiling(n, 0.05) == pytest.approx(approx, abs=0.01)


def test_ceiling_decreases_with_delta_and_smaller_alpha():
    assert epsilon_ceiling(1000, 0.05, delta=0.1) < epsilon_ceiling(1000, 0.05)
    assert epsilon_ceiling(1000, 0.01) < epsilon_ceiling(1000, 0.05)


@pytest.mark.parametrize(("k", "n", "a"), [(0, 10, 0.05), (1, 10, 0.05), (5, 10, 0.025),
                                           (10, 10, 0.05), (37, 1000, 0.001), (999, 1000, 0.2)])
def test_cp_matches_scipy_exact_two_sided_interval(k, n, a):
    # scipy's exact (Clopper-Pearson) two-sided interval at level 1 - 2a has a per side.
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=1 - 2 * a, method="exact")
    assert cp_lower(k, n, a) == pytest.approx(ci.low, rel=1e-9, abs=1e-15)
    assert cp_upper(k, n, a) == pytest.approx(ci.high, rel=1e-9, abs=1e-15)


def test_cp_defining_tail_identity():
    # CP lower bound p_L solves P(Bin(n, p_L) >= k) = a; upper p_U solves P(Bin(n, p_U) <= k) = a.
    n, a = 200, 0.03
    for k in (1, 7, 100, 199):
        assert stats.binom.sf(k - 1, n, cp_lower(k, n, a)) == pytest.approx(a, rel=1e-7)
        assert stats.binom.cdf(k, n, cp_upper(k, n, a)) == pytest.approx(a, rel=1e-7)


def test_cp_vectorised_and_validation():
    k = np.arange(11)
    lo, hi = cp_lower(k, 10, 0.05), cp_upper(k, 10, 0.05)
    assert lo.shape == hi.shape == (11,)
    assert lo[0] == 0.0 and hi[-1] == 1.0
    assert np.all(np.diff(lo) > 0) and np.all(np.diff(hi) > 0)
    with pytest.raises(ValueError, match="k"):
        cp_lower(11, 10, 0.05)
    with pytest.raises(ValueError, match="a"):
        cp_upper(1, 10, 1.5)
    with pytest.raises(ValueError, match="delta"):
        epsilon_lower_bound(5, 10, 1, 10, 1.0, 0.05)


# ------------------------------------------------------------ deterministic quantiles


def _quantile_sample(n: int, shift: float = 0.0) -> np.ndarray:
    """jax_privacy-style deterministic N(shift, 1) sample: Φ⁻¹((i + ½)/n)."""
    return stats.norm.ppf((np.arange(n) + 0.5) / n) + shift


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-2])
def test_bound_from_quantile_samples_is_below_truth_and_converges(mu, delta):
    # Event x > t on deterministic N(0,1) vs N(mu,1) samples: counts equal n * P up to rounding,
    # so the certified bound must lie below the population value of that event, which in turn
    # lies below the exact eps(delta) of the mu-GDP pair, and approach it as n grows.
    t = mu / 2 + 1.0
    pop = math.log((stats.norm.sf(t - mu) - delta) / stats.norm.sf(t))
    true_eps = gdp_epsilon(delta, mu)
    assert pop <= true_eps
    gaps = []
    for n in (10**3, 10**4, 10**5, 10**6):
        x0, x1 = _quantile_sample(n), _quantile_sample(n, mu)
        k0, k1 = int(np.sum(x0 > t)), int(np.sum(x1 > t))
        lb = epsilon_lower_bound(k1, n, k0, n, delta, 0.05)
        assert lb <= pop + 1e-9
        gaps.append(pop - lb)
    assert all(b < a for a, b in zip(gaps, gaps[1:], strict=False))
    assert gaps[-1] < 0.05 * max(pop, 1.0)


@pytest.mark.parametrize("mu", [0.27, 1.0, 3.0])
def test_gdp_bound_on_exact_rates_recovers_mu(mu):
    # For the Gaussian shift the threshold test at t has FPR = Φ(-t), FNR = Φ(t - mu):
    # the GDP bound of the exact rates is exactly mu at every t.
    for t in (-0.5, 0.0, mu / 2, mu + 1):
        fpr, fnr = stats.norm.sf(t), stats.norm.cdf(t - mu)
        assert mu_lower_bound(fpr, fnr) == pytest.approx(mu, rel=1e-9)


def test_gdp_bound_from_quantile_samples():
    mu, n = 0.5, 10**5
    x0, x1 = _quantile_sample(n), _quantile_sample(n, mu)
    t = mu / 2
    fp, fn = int(np.sum(x0 > t)), int(np.sum(x1 <= t))
    lb = mu_lower_bound(cp_upper(fp, n, 0.025), cp_upper(fn, n, 0.025))
    assert mu - 0.03 < lb < mu


def test_mu_ceiling_perfect_distinguisher():
    n = 650
    u = 1 - 0.025 ** (1 / n)  # cp_upper(0, n, 0.025) in closed form
    assert mu_ceiling(n, 0.05) == pytest.approx(2 * stats.norm.isf(u), rel=1e-9)


# ------------------------------------------------------------ monotonicity


@given(n=st.integers(1, 5000), a=st.floats(1e-6, 0.4), frac=st.floats(0, 1))
def test_cp_bounds_bracket_estimate_and_are_monotone(n, a, frac):
    k = int(round(frac * n))
    lo, hi = cp_lower(k, n, a), cp_upper(k, n, a)
    assert 0 <= lo <= k / n <= hi <= 1
    if k < n:
        assert cp_lower(k + 1, n, a) > lo
        assert cp_upper(k + 1, n, a) > hi or hi == 1.0
    # a smaller error level widens the bounds
    assert cp_lower(k, n, a / 2) <= lo and cp_upper(k, n, a / 2) >= hi


@given(n=st.integers(10, 10**6), f1=st.floats(0, 1), f0=st.floats(0, 1),
       delta=st.floats(0, 0.5), alpha=st.floats(1e-4, 0.3))
def test_epsilon_bound_monotone(n, f1, f0, delta, alpha):
    k1, k0 = int(f1 * n), int(f0 * n)
    e = epsilon_lower_bound(k1, n, k0, n, delta, alpha)
    assert e >= 0
    assert e <= epsilon_ceiling(n, alpha, delta) + 1e-12
    if k1 < n:
        assert epsilon_lower_bound(k1 + 1, n, k0, n, delta, alpha) >= e
    if k0 > 0:
        assert epsilon_lower_bound(k1, n, k0 - 1, n, delta, alpha) >= e
    assert epsilon_lower_bound(k1, n, k0, n, delta / 2, alpha) >= e
    assert epsilon_lower_bound(k1, n, k0, n, delta, alpha / 2) <= e


@given(fpr=st.floats(1e-9, 1 - 1e-9), fnr=st.floats(1e-9, 1 - 1e-9), d=st.floats(0, 0.1))
def test_mu_bound_decreasing_in_rates(fpr, fnr, d):
    m = mu_lower_bound(fpr, fnr)
    assert m >= 0
    assert mu_lower_bound(min(fpr + d, 1.0), fnr) <= m + 1e-12
    assert mu_lower_bound(fpr, min(fnr + d, 1.0)) <= m + 1e-12


# ------------------------------------------------------------------- planner (AUDITING §4)


MU0 = gdp_mu(1.0, 1e-5)


# Independent reference for the planner: Monte Carlo over the two binomial counts of the
# scalar Gaussian-shift model the planner states, with Clopper–Pearson bounds written as beta
# quantiles (their closed form, not the kit's cp_lower/cp_upper). With R = 20 000 replications
# the standard error of a power near 0.8 is <= 0.0036 (p = 1/2 bound); tolerances are 4 of them.
# The plan must have the power it reports (so its n suffices) and be minimal (80 % of its n
# falls clearly short); AUDITING.md's rounded figures are not asserted (other assumptions).
MC_REPS = 20_000
MC_TOL = 4 * math.sqrt(0.25 / MC_REPS)


def _cp_low(k, n, a):
    return np.where(k > 0, stats.beta.ppf(a, k, n - k + 1), 0.0)


def _cp_up(k, n, a):
    return np.where(k < n, stats.beta.isf(a, k + 1, n - k), 1.0)


def _mc_power_blackbox(n, t, mu, target, delta, a, rng):
    k0 = rng.binomial(n, stats.norm.sf(t), MC_REPS)
    k1 = rng.binomial(n, stats.norm.sf(t - mu), MC_REPS)
    lo, hi = _cp_low(k1, n, a), _cp_up(k0, n, a)
    ok = lo > delta
    eps = np.full(MC_REPS, -np.inf)
    eps[ok] = np.log((lo[ok] - delta) / hi[ok])
    return float(np.mean(eps >= target))


def _mc_power_gdp(n, t, mu, mu_target, a, rng):
    fp = rng.binomial(n, stats.norm.sf(t), MC_REPS)
    fn = rng.binomial(n, stats.norm.cdf(t - mu), MC_REPS)
    mu_lb = stats.norm.isf(_cp_up(fp, n, a)) - stats.norm.ppf(_cp_up(fn, n, a))
    return float(np.mean(mu_lb >= mu_target))


def _mu_of_eps_plain(eps, delta):
    """gdp_mu by bisection on the plain δ(ε; μ) of Dong et al. (R eq. 5) with scipy."""
    from scipy import optimize

    f = lambda m: (stats.norm.cdf(-eps / m + m / 2)  # noqa: E731
                   - math.exp(eps) * stats.norm.cdf(-eps / m - m / 2) - delta)
    return optimize.brentq(f, 1e-3, 50.0, xtol=1e-13)


@pytest.mark.parametrize("kwargs", [
    {"target_fraction": 0.8},                      # AUDITING.md §4.1: certify 0.8 eps
    {"target_fraction": 1.0, "true_mu": 2 * MU0},  # §4.2: sensitivity x 2 flagged
])
def test_planner_blackbox_power_against_monte_carlo(kwargs, rng):
    plan = plan_samples(1.0, 1e-5, tests=1, **kwargs)
    a = 0.05 / 2  # one test, alpha/2 per proportion
    mc = _mc_power_blackbox(plan.n_per_side, plan.threshold, plan.true_mu,
                            plan.target_epsilon, 1e-5, a, rng)
    assert abs(mc - plan.power) <= MC_TOL and plan.power >= 0.8
    # minimal: at 80 % of the planned n the power is clearly short of the 0.8 asked for
    short = _mc_power_blackbox(int(0.8 * plan.n_per_side), plan.threshold, plan.true_mu,
                               plan.target_epsilon, 1e-5, a, rng)
    assert short < 0.8 - MC_TOL
    assert plan.n_total_per_side == math.ceil(plan.n_per_side / 0.75)


@pytest.mark.parametrize("kwargs", [
    {},                                            # AUDITING.md §4.1: the GDP route
    {"target_fraction": 1.0, "true_mu": 2 * MU0},  # §4.2: sensitivity x 2 flagged
])
def test_planner_gdp_power_against_monte_carlo(kwargs, rng):
    plan = plan_samples(1.0, 1e-5, method="gdp", **kwargs)
    mu_target = _mu_of_eps_plain(plan.target_epsilon, 1e-5)
    mc = _mc_power_gdp(plan.n_per_side, plan.threshold, plan.true_mu, mu_target, 0.025, rng)
    assert abs(mc - plan.power) <= MC_TOL and plan.power >= 0.8
    short = _mc_power_gdp(int(0.8 * plan.n_per_side), plan.threshold, plan.true_mu,
                          mu_target, 0.025, rng)
    assert short < 0.8 - MC_TOL


def test_planner_whitebox_and_fit_split():
    assert plan_samples(1.0, 1e-5, method="whitebox").n_per_side == 0
    bb = plan_samples(1.0, 1e-5, target_fraction=0.8, tests=1)
    half = plan_samples(1.0, 1e-5, target_fraction=0.8, tests=1, fit_fraction=0.5)
    assert half.n_total_per_side == pytest.approx(2 * bb.n_per_side, abs=1)


def test_planner_power_is_consistent_and_monotone():
    plan = plan_samples(1.0, 1e-5, target_fraction=1.0, true_mu=2 * MU0, method="gdp")
    assert plan.power >= 0.8
    p_small, _ = power_at(plan.n_per_side // 3, method="gdp", true_mu=2 * MU0,
                          target_epsilon=1.0, delta=1e-5)
    assert p_small < 0.8
    with pytest.raises(ValueError, match="does not exceed"):
        plan_samples(1.0, 1e-5, target_fraction=1.0)  # a correct mechanism is never flagged


# ------------------------------------------------- the rank x count test (issue 20 §5)


def _pvalue_by_quad(eps, r, m, k, n1, delta):
    """Independent reference: E[P(Bin(n1, min(1, e^eps B + delta)) >= k)], B ~ Beta, by quad."""
    from scipy import integrate

    beta = stats.beta(r + 1, m - r)
    lo, hi = beta.ppf(1e-13), beta.isf(1e-13)
    f = lambda b: beta.pdf(b) * stats.binom.sf(k - 1, n1, min(1.0, math.exp(eps) * b + delta))  # noqa: E731
    val, _ = integrate.quad(f, lo, hi, limit=400, points=[beta.mean()])
    return val


@pytest.mark.parametrize(("eps", "r", "m", "k", "n1", "delta"), [
    (0.17, 128, 1000, 193, 1000, 1e-5), (1.0, 0, 500, 6, 500, 0.0), (0.3, 40, 2000, 80, 1500, 0.0),
    (2.0, 5, 300, 60, 300, 0.01)])
def test_rank_count_pvalue_is_an_upper_bound_close_to_the_integral(eps, r, m, k, n1, delta):
    exact = _pvalue_by_quad(eps, r, m, k, n1, delta)
    coarse = rank_count_pvalue(eps, r, m, k, n1, delta, grid=128)
    fine = rank_count_pvalue(eps, r, m, k, n1, delta)
    assert exact <= fine + 1e-12 <= coarse + 2e-12  # upper Riemann sums: never below
    assert fine <= exact * 1.05 + 1e-9  # and within 5 % of it at the default grid


def test_rank_count_test_has_its_level_at_the_boundary():
    # The hypothesis at equality: P(S) ~ Beta exactly (continuous scores) and the other side's
    # proportion is e^eps P(S) + delta. 4000 simulated (B, K) pairs per case; the rejection
    # rate at a must not exceed a (binomial one-sided p >= 1e-3: a rate 1.3 a is detected
    # with probability > 0.9) and the test is not empty (rate above a / 3).
    rng = np.random.default_rng(5)
    for r, m, n1, eps, delta in ((0, 200, 200, 1.0, 0.0), (40, 1000, 1000, 0.5, 0.0),
                                 (20, 1000, 800, 1.0, 1e-3)):
        sims, a = 4000, 0.05
        B = rng.beta(r + 1, m - r, sims)
        K = rng.binomial(n1, np.minimum(1.0, np.exp(eps) * B + delta))
        rej = int(np.sum(rank_count_pvalue(eps, np.full(sims, r), m, K, n1, delta, grid=256)
                         <= a))
        assert stats.binomtest(rej, sims, a, alternative="greater").pvalue >= 1e-3
        assert rej > sims * a / 3


def test_rank_count_bound_inverts_its_pvalue_and_beats_two_clopper_pearsons():
    a = 0.0125
    e = epsilon_lower_bound_rank_count(128, 1000, 193, 1000, 1e-5, a)
    assert rank_count_pvalue(e, 128, 1000, 193, 1000, 1e-5) <= a
    assert rank_count_pvalue(e + 1e-3, 128, 1000, 193, 1000, 1e-5) > a
    # the same counts, the rank read as a count: two CP bounds at a/2 each certify less
    assert e > 2 * epsilon_lower_bound(193, 1000, 128, 1000, 1e-5, a)
    # no hits: nothing. A perfect distinguisher at rank 0: pi(eps) = P(B >= e^-eps) + a small
    # integral, with P(B >= x) = (1 - x)^n ~ exp(-n x): eps just below log(n / ln(1/a))
    assert epsilon_lower_bound_rank_count(10, 1000, 0, 1000, 0.0, a) == 0.0
    perfect = epsilon_lower_bound_rank_count(0, 1000, 1000, 1000, 0.0, a)
    assert perfect == pytest.approx(math.log(1000 / math.log(1 / a)), abs=0.01)
    assert perfect < math.log(1000 / math.log(1 / a))
    vec = epsilon_lower_bound_rank_count([128, 0], 1000, [193, 1000], 1000, 1e-5, a)
    assert vec.shape == (2,) and vec[0] == pytest.approx(e, abs=1e-5)  # bisection tolerance


def test_rank_count_input_validation():
    with pytest.raises(ValueError, match="rank"):
        rank_count_pvalue(0.1, 10, 10, 3, 10, 0.0)
    with pytest.raises(ValueError, match="delta"):
        epsilon_lower_bound_rank_count(1, 10, 3, 10, 1.0, 0.05)
    with pytest.raises(ValueError, match="k"):
        epsilon_lower_bound_rank_count(1, 10, 11, 10, 0.0, 0.05)
    with pytest.raises(ValueError, match="a"):
        epsilon_lower_bound_rank_count(1, 10, 3, 10, 0.0, 0.0)


# --------------------------------------------------------------- paired tails (issue 20 §5)
def test_paired_tails_majorant_is_hoeffdings_binomial():
    # Independent check of the step the p-value rests on (Hoeffding 1956, Thm. 4): two
    # binomials with different proportions exceed c >= M p_bar + 2 no more often than one
    # Binomial(M, p_bar); exact convolution by scipy, 400 random cases, every admissible c.
    rng = np.random.default_rng(11)
    for _ in range(400):
        m1, m0 = rng.integers(1, 120, 2)
        a, b = rng.uniform(0.0, 0.7, 2)
        total, p_bar = m1 + m0, (m1 * a + m0 * b) / (m1 + m0)
        pmf = np.convolve(stats.binom.pmf(np.arange(m1 + 1), m1, a),
                          stats.binom.pmf(np.arange(m0 + 1), m0, b))
        for c in range(int(math.ceil(total * p_bar + 2)), total + 1):
            if total * p_bar < 1:
                break
            bound = stats.binom.sf(c - 1, total, p_bar)
            assert pmf[c:].sum() <= bound * (1 + 1e-9) + 1e-300 or bound < 1e-250


def _paired_hits(s0, s1, r):
    """The paired-tails count of the docstring, written out independently (sorted copies)."""
    t_u = np.sort(s0)[::-1][r]  # (r+1)-th largest of the P-draws
    t_l = np.sort(s1)[r]  # (r+1)-th smallest of the Q-draws
    return int(np.sum(s1 > max(t_u, t_l)) + np.sum(s0 < min(t_l, t_u)))


def test_paired_tails_test_has_its_level_at_the_boundary():
    # Laplace(0, 1) against Laplace(1, 1) at eps = 1: every upper tail beyond 1 and every
    # lower tail below 0 has ratio exactly e, so both events of the pair sit on the boundary
    # of the hypothesis. 2000 runs per case; the rejection rate at a = 0.1 must not exceed a
    # (binomial p >= 1e-3: a rate of 1.3 a is detected with probability > 0.9) and the test
    # is not empty (rate above a / 4).
    rng = np.random.default_rng(12)
    for n, r in ((200, 0), (200, 8), (400, 30)):
        sims, a, rej = 2000, 0.1, 0
        for _ in range(sims):
            s0, s1 = rng.laplace(0.0, 1.0, n), rng.laplace(1.0, 1.0, n)
            rej += paired_tails_pvalue(1.0, r, n, n, _paired_hits(s0, s1, r), 0.0, grid=64) <= a
        assert stats.binomtest(rej, sims, a, alternative="greater").pvalue >= 1e-3
        assert rej > sims * a / 4


def test_paired_tails_bound_inverts_its_pvalue_and_pools_the_two_tails():
    a = 0.0125
    # the expected counts of the (1, 1e-5) Gaussian at rank 128 of 1000, in both tails
    e = epsilon_lower_bound_paired_tails(128, 1000, 1000, 2 * 193, 1e-5, a)
    assert paired_tails_pvalue(e, 128, 1000, 1000, 2 * 193, 1e-5) <= a
    assert paired_tails_pvalue(e + 1e-3, 128, 1000, 1000, 2 * 193, 1e-5) > a
    # pooling two tails' evidence beats either tail's exact test alone at the same a
    assert e > epsilon_lower_bound_rank_count(128, 1000, 193, 1000, 1e-5, a) + 0.03
    # a coarser grid is an upper Riemann sum: never a larger bound
    assert epsilon_lower_bound_paired_tails(128, 1000, 1000, 386, 1e-5, a, grid=64) <= e + 1e-5
    assert epsilon_lower_bound_paired_tails(10, 1000, 1000, 0, 0.0, a) == 0.0


def test_paired_tails_input_validation():
    with pytest.raises(ValueError, match="rank"):
        paired_tails_pvalue(0.1, 10, 10, 20, 3, 0.0)
    with pytest.raises(ValueError, match="hits"):
        paired_tails_pvalue(0.1, 1, 10, 10, 17, 0.0)
    with pytest.raises(ValueError, match="delta"):
        epsilon_lower_bound_paired_tails(1, 10, 10, 3, 1.0, 0.05)
    with pytest.raises(ValueError, match="a"):
        epsilon_lower_bound_paired_tails(1, 10, 10, 3, 0.0, 0.0)
