"""Sample-size planner for the black-box and GDP-fit auditors (catalogue A.3, AUDITING.md §4).

The planning model is the scalar (or whitened, projected) Gaussian shift: the
auditor sees N(0, 1) under D and N(μ, 1) under D′, thresholds at t, and
counts the event ``x > t`` on ``n`` fresh samples per side. Everything is
exact binomial arithmetic except the average over the D-side count, which uses
61 stratified quantile nodes of its binomial law.

* ``method="blackbox"`` — power of the certified bound
  ``log((CP_lower(k1) − δ)/CP_upper(k0)) ≥ target`` (α split over ``tests``
  Bonferroni tests, α/2 of each per proportion, as :func:`audit_blackbox` does).
  ``CP_lower(k1, n; a) ≥ c`` is equivalent to ``P(Bin(n, c) ≥ k1) ≤ a``, so the
  smallest sufficient ``k1`` is a binomial quantile.
* ``method="gdp"`` — power of ``Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub) ≥ μ_target`` with
  ``μ_target = gdp_mu(target ε, δ)`` (CP at α/2 per rate, as
  :func:`audit_gdp_fit` does).
* ``method="whitebox"`` — needs no samples.

The threshold is optimised over a grid; the returned ``n`` is the
*certification* sample per side. The auditors also spend a fitting split, so
``n_total_per_side = n / (1 − fit_fraction)`` is what to pass as ``n``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from dpgp_audit._validation import check_delta, check_epsilon
from dpgp_audit.privacy import gdp

__all__ = ["SamplePlan", "plan_samples", "power_at"]

_NODES = (np.arange(61) + 0.5) / 61  # stratified quantile nodes of the D-side count


@dataclass(frozen=True)
class SamplePlan:
    """A sample-size plan.

    Attributes
    ----------
    n_per_side
        Certification samples per side reaching ``power``.
    n_total_per_side
        ``n_per_side / (1 − fit_fraction)``: the ``n`` to pass to the auditor.
    method
        ``"blackbox"``, ``"gdp"`` or ``"whitebox"``.
    target_epsilon
        The ε the certified bound must exceed.
    true_mu
        GDP parameter of the mechanism the plan assumes.
    threshold
        Best threshold in noise-σ units (event ``x > t``).
    power
        Achieved power at ``n_per_side``.
    """

    n_per_side: int
    n_total_per_side: int
    method: str
    target_epsilon: float
    true_mu: float
    threshold: float
    power: float
    alpha: float
    tests: int
    fit_fraction: float

    def describe(self) -> str:
        """One line of prose."""
        return (f"{self.method}: {self.n_per_side:,} certification samples per side "
                f"({self.n_total_per_side:,} with the fitting split) give power "
                f"{self.power:.2f} to certify epsilon > {self.target_epsilon:.3g} "
                f"when the true mechanism is {self.true_mu:.4g}-GDP")


def _k0_nodes(n: int, p0: np.ndarray) -> np.ndarray:
    """Stratified quantiles of Bin(n, p0), shape (len(p0), len(_NODES))."""
    return stats.binom.ppf(_NODES[None, :], n, p0[:, None])


def _power_blackbox(n: int, t: np.ndarray, mu: float, target: float, delta: float,
                    a: float) -> np.ndarray:
    p0 = special.ndtr(-t)
    p1 = special.ndtr(mu - t)
    k0 = _k0_nodes(n, p0)
    hi = stats.beta.isf(a, k0 + 1, np.maximum(n - k0, 1e-300))
    hi = np.where(k0 >= n, 1.0, hi)
    c = delta + math.exp(target) * hi
    ok = c < 1
    c = np.where(ok, c, 0.5)
    k1_min = stats.binom.isf(a, n, c) + 1  # smallest k1 with CP_lower(k1) ≥ c
    pw = stats.binom.sf(k1_min - 1, n, p1[:, None])
    return np.mean(np.where(ok, pw, 0.0), axis=1)


def _power_gdp(n: int, t: np.ndarray, mu: float, mu_target: float, a: float) -> np.ndarray:
    p0 = special.ndtr(-t)  # FPR
    q1 = special.ndtr(t - mu)  # FNR
    k0 = _k0_nodes(n, p0)
    fpr_ub = stats.beta.isf(a, k0 + 1, np.maximum(n - k0, 1e-300))
    fpr_ub = np.where(k0 >= n, 1.0, fpr_ub)
    c = special.ndtr(special.ndtri(1 - fpr_ub) - mu_target)  # FNR_ub must stay below c
    m_max = stats.binom.ppf(a, n, c) - 1  # largest misses m with P(Bin(n, c) ≤ m) ≤ a
    pw = np.where(m_max >= 0, stats.binom.cdf(m_max, n, q1[:, None]), 0.0)
    return np.mean(pw, axis=1)


def _t_grid(n: int, mu: float) -> np.ndarray:
    top = float(special.ndtri(1 - 1.0 / (4 * n))) + mu
    return np.linspace(min(-1.0, mu / 2 - 1), max(top, 1.0), 31)


def power_at(n: int, *, method: str, true_mu: float, target_epsilon: float, delta: float,
          alpha: float = 0.05, tests: int = 2) -> tuple[float, float]:
    """Best power over thresholds at ``n`` certification samples per side: (power, threshold)."""
    if method == "blackbox":
        t = _t_grid(n, true_mu)
        pw = _power_blackbox(n, t, true_mu, target_epsilon, delta, alpha / (2 * tests))
    elif method == "gdp":
        t = np.linspace(-1.0, true_mu + 3.0, 31)
        pw = _power_gdp(n, t, true_mu, gdp.gdp_mu(target_epsilon, delta), alpha / 2)
    else:
        raise ValueError(f"method must be 'blackbox' or 'gdp', got {method!r}")
    j = int(np.argmax(pw))
    # refine around the best grid point
    lo, hi = t[max(j - 1, 0)], t[min(j + 1, t.size - 1)]
    tf = np.linspace(lo, hi, 13)
    if method == "blackbox":
        pf = _power_blackbox(n, tf, true_mu, target_epsilon, delta, alpha / (2 * tests))
    else:
        pf = _power_gdp(n, tf, true_mu, gdp.gdp_mu(target_epsilon, delta), alpha / 2)
    k = int(np.argmax(pf))
    return float(pf[k]), float(tf[k])


def plan_samples(epsilon: float, delta: float, *, target_fraction: float = 0.8,
                 alpha: float = 0.05, power: float = 0.8, method: str = "blackbox",
                 true_mu: float | None = None, tests: int | None = None,
                 fit_fraction: float = 0.25, n_max: int = 10**9) -> SamplePlan:
    """Samples per side needed to certify ε̂ ≥ ``target_fraction · epsilon``.

    Parameters
    ----------
    epsilon, delta
        The claim (δ > 0).
    target_fraction
        Certify ε̂ ≥ ``target_fraction · epsilon``. Use 1 (with ``true_mu`` of a
        broken mechanism) to plan the detection of a violation.
    alpha
        1 − confidence of the auditor.
    power
        Required probability of reaching the target.
    method
        ``"blackbox"`` (Clopper–Pearson ε bound), ``"gdp"`` (GDP fit) or
        ``"whitebox"`` (0 samples).
    true_mu
        The mechanism's true GDP μ (default: ``gdp_mu(epsilon, delta)``, a correct
        mechanism exactly at its claim). A bug with sensitivity × 2 has twice that.
    tests
        Bonferroni count of the black-box auditor (default 2, its default); 1 for GDP.
    fit_fraction
        Fitting share used to report ``n_total_per_side`` (default 0.25, the
        auditors' default for the exact likelihood-ratio score this plan models;
        use 0.5 for learned scores such as LDA, which also lose some power to
        the estimated direction, AUDITING.md §4.3).
    n_max
        Give up above this n (raises ``ValueError``).

    Examples
    --------
    AUDITING.md §4: black-box certification of ε̂ ≥ 0.8 at (1, 1e-5) needs about
    3.3 M samples per side; the GDP route about 18 k.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if not (0 < target_fraction <= 10):
        raise ValueError(f"target_fraction must be in (0, 10], got {target_fraction!r}")
    if not (0 < alpha < 1) or not (0 < power < 1):
        raise ValueError("alpha and power must lie in (0, 1)")
    mu = gdp.gdp_mu(epsilon, delta) if true_mu is None else float(true_mu)
    target = target_fraction * epsilon
    if tests is None:
        tests = 2 if method == "blackbox" else 1
    if method == "whitebox":
        return SamplePlan(0, 0, method, target, mu, math.nan, 1.0, alpha, 0, 0.0)
    if method not in ("blackbox", "gdp"):
        raise ValueError(f"method must be 'blackbox', 'gdp' or 'whitebox', got {method!r}")
    true_eps = gdp.gdp_epsilon(delta, mu)
    if true_eps <= target * (1 + 1e-9):
        raise ValueError(f"the mechanism's true epsilon {true_eps:.4g} at delta={delta:g} does "
                         f"not exceed the target {target:.4g}: no n certifies it")

    def pw(n: int) -> float:
        return power_at(n, method=method, true_mu=mu, target_epsilon=target,
                                  delta=delta, alpha=alpha, tests=tests)[0]

    lo, hi = 2, 64
    while pw(hi) < power:
        lo, hi = hi, hi * 4
        if hi > n_max:
            raise ValueError(f"more than n_max={n_max:g} samples per side would be needed")
    # power is not exactly monotone in n (binomial lattice); bisect on a 1 % grid
    while hi > lo * 1.01 + 1:
        mid = int(math.sqrt(lo * hi))
        if pw(mid) >= power:
            hi = mid
        else:
            lo = mid
    p, t = power_at(hi, method=method, true_mu=mu, target_epsilon=target,
                              delta=delta, alpha=alpha, tests=tests)
    return SamplePlan(hi, int(math.ceil(hi / (1 - fit_fraction))), method, target, mu, t, p,
                      alpha, tests, fit_fraction)
