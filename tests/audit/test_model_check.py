"""A.2's model check (``audit/model_check.py``): the range test against ill-conditioned models.

A Gram matrix of a kernel on a fine grid keeps eigenvalues below the factor's cut-off
(10⁻¹⁰ of the largest) that are positive: the model's covariance says there is noise
there, and a sampler that keeps them draws it. The range test allows that noise (a
Gaussian concentration bound) and still rejects a release that leaves the model.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpgp_audit import Dataset
from dpgp_audit.audit.model_check import check_model, dropped_noise_allowance, tail_power
from dpgp_audit.audit.result import Verdict
from dpgp_audit.audit.whitebox import factor_covariance
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.privacy.functional import gram_factor

GRID = np.linspace(0.0, 1.0, 12)[:, None]  # lengthscale 1 over [0, 1]: eigenvalues to 1e-16
K = EQ(lengthscale=1.0)(GRID, GRID)


class _GramNoise:
    """mean m, noise F z with F Fᵀ = K (every positive eigenvalue kept), optional extra."""

    def __init__(self, shift: np.ndarray | None = None):
        self.shift = np.zeros(12) if shift is None else shift
        self.F = gram_factor(K)

    def mean(self, data):
        return np.zeros(12)

    def cov(self, data):
        return K

    def sample(self, data, n, rng):
        return self.shift + rng.standard_normal((n, self.F.shape[1])) @ self.F.T


DATA = Dataset(np.zeros((3, 1)), np.zeros(3))


def test_A2_the_gram_matrix_has_dropped_directions_with_noise():
    f = factor_covariance(K)
    assert f.rank < 12 and np.sum(np.linalg.eigvalsh(K) > 0) > f.rank  # the premise


def test_A2_noise_in_the_dropped_directions_is_not_a_contradiction():
    res = check_model(_GramNoise(), DATA, np.random.default_rng(0), n=4000)
    assert res.verdict is Verdict.NO_EVIDENCE, res.details["rejected"]


def test_A2_the_allowance_bounds_simulated_maxima_of_the_dropped_noise():
    f = factor_covariance(K)
    w, U = np.linalg.eigh(K)
    drop = (w > 0) & (w <= f.cutoff)
    rng = np.random.default_rng(1)
    g = (rng.standard_normal((20_000, int(drop.sum()))) * np.sqrt(w[drop])) @ U[:, drop].T
    top = float(np.max(np.linalg.norm(g, axis=1)))
    allowed = dropped_noise_allowance(f, 20_000)
    assert top < allowed < 20 * top  # valid, and not so loose that it hides a real leak


def test_A2_a_release_outside_the_range_is_still_rejected():
    # a shift along the least-variance direction, 50 times the allowance: the model says
    # that coordinate is the mean exactly (to within noise 1e-5 of the largest sd)
    f = factor_covariance(K)
    u = np.linalg.eigh(K)[1][:, 0]
    shift = 50 * dropped_noise_allowance(f, 4000) * u
    res = check_model(_GramNoise(shift), DATA, np.random.default_rng(0), n=4000)
    assert res.verdict is Verdict.VIOLATION
    assert any("outside range" in r for r in res.details["rejected"])


@pytest.mark.parametrize("mechanism", ["P.5/functional"])
def test_A2_the_functional_mechanism_on_inputs_in_the_unit_interval_matches_its_model(
        mechanism):
    # a user's 1-D inputs in [0, 1] with the factory's lengthscale 1: `make audit` once
    # reported VIOLATION here (the range test read the kept noise as a contradiction)
    from dpgp_audit.catalogue import get

    x = np.sort(np.random.default_rng(1).random(30))
    mech, data = get(mechanism).make(Dataset(x[:, None], 0.9 * np.sin(6 * x)))
    res = check_model(mech, data, np.random.default_rng(0), n=4000)
    assert res.verdict is Verdict.NO_EVIDENCE, res.details["rejected"]


# ----------------------------------------------------------------------------- tail counts
class _ScaledNormal:
    """N(0, s²) per draw against a stated N(0, 1); ``truncate``: redraw beyond ±t sd."""

    def __init__(self, scale: float = 1.0, truncate: float | None = None):
        self.scale, self.truncate = scale, truncate

    def mean(self, data):
        return np.zeros(1)

    def cov(self, data):
        return np.eye(1)

    def sample(self, data, n, rng):
        z = rng.standard_normal((n, 1))
        if self.truncate is not None:
            bad = np.abs(z) > self.truncate
            while bad.any():
                z[bad] = rng.standard_normal(int(bad.sum()))
                bad = np.abs(z) > self.truncate
        return self.scale * z


def test_A2_tail_counts_hold_their_level_on_an_exact_gaussian():
    """300 checks of an exact model at alpha = 0.2, half of it to the tail counts: the false
    alarms are binomial-tested against the level (Bonferroni makes the rate lower)."""
    alarms = sum(check_model(_ScaledNormal(), DATA, np.random.default_rng(s), n=200,
                             tail_n=20_000, alpha=0.2).details["tail_rejected"] > 0
                 for s in np.random.SeedSequence(29).spawn(300))
    assert stats.binomtest(alarms, 300, 0.1, alternative="greater").pvalue >= 1e-3


def test_A2_a_gaussian_truncated_at_3_sd_fails_the_tail_counts_at_4000_draws():
    # 4 000 draws of N(0, 1) hold 2 * Phi(-3) * 4000 = 10.8 beyond 3 sd on average; the
    # truncated sampler holds none: P(Bin(4000, 0.0027) = 0) = 2e-5, far below the level
    res = check_model(_ScaledNormal(truncate=3.0), DATA, np.random.default_rng(0), n=4000)
    assert res.verdict is Verdict.VIOLATION and res.details["tail_rejected"] >= 1
    assert any("beyond 3 sd (0 drawn" in r for r in res.details["rejected"])
    assert res.details["ks_rejected"] == 0  # the bulk is N(0, 1) to within 0.003
    # more noise than stated is no privacy concern: the tail counts leave it alone
    wide = check_model(_ScaledNormal(scale=1.05), DATA, np.random.default_rng(0), n=4000,
                       tail_n=100_000)
    assert wide.details["tail_rejected"] == 0


def test_A2_tail_power_matches_simulated_rejection_rates():
    """The stated power: a scale s whose mass beyond 3 sd is the returned ratio of the
    Gaussian's is rejected by the 3-sd count on about 80 % of runs (simulated with exact
    binomial counts, independent of the formula's root finding)."""
    n, level = 50_000, 0.01 / 9
    rho = tail_power(n, level, 3.0, 0.8)
    p0 = 2 * stats.norm.sf(3.0)
    s = 3.0 / stats.norm.isf(rho * p0 / 2)  # P(|s Z| > 3) = rho * p0
    assert s < 1
    counts = stats.binom.rvs(n, 2 * stats.norm.sf(3.0 / s), size=4000,
                             random_state=np.random.default_rng(3))
    rate = np.mean(stats.binom.cdf(counts, n, p0) <= level)
    assert 0.78 < rate < 0.82
