"""Exact binomial confidence bounds and the ε / μ lower bounds built on them (catalogue A.3).

Everything a black-box auditor certifies reduces to two proportions: how often
an event S happens under M(D) (a false-positive rate) and under M(D′) (a true
positive rate). (ε, δ)-DP forces ``P(S) ≤ e^ε Q(S) + δ`` in both orders, so
one-sided Clopper–Pearson bounds on the two proportions, combined by a union
bound, give an ε lower bound that holds with confidence 1 − α without any
assumption on the mechanism (Kairouz et al. 2015, Thm 2.1; Jagielski et al.
2020, §4; AUDITING.md §1).

Functions accept scalars or numpy arrays (broadcast), so threshold searches can
evaluate whole grids at once; non-integer counts are allowed for *predicted*
counts (the Beta quantiles are defined for real parameters).
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = [
    "cp_lower",
    "cp_lower_raw",
    "cp_upper",
    "cp_upper_raw",
    "epsilon_ceiling",
    "epsilon_lower_bound",
    "mu_ceiling",
    "mu_lower_bound",
]


def _check_level(a: float | np.ndarray, name: str = "a") -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if not np.all((a > 0) & (a < 1)):
        raise ValueError(f"{name} (a one-sided error level) must lie in (0, 1), got {a!r}")
    return a


def _check_counts(k: float | np.ndarray, n: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    if not (np.all(np.isfinite(k)) and np.all(np.isfinite(n))):
        raise ValueError("counts k and n must be finite")
    if np.any(n <= 0):
        raise ValueError(f"n (number of trials) must be > 0, got {n!r}")
    if np.any(k < 0) or np.any(k > n):
        raise ValueError(f"k (successes) must satisfy 0 <= k <= n, got k={k!r}, n={n!r}")
    return k, n


def _out(x: np.ndarray) -> float | np.ndarray:
    return float(x) if np.ndim(x) == 0 else x


def cp_lower(k: float | np.ndarray, n: float | np.ndarray,
             a: float | np.ndarray) -> float | np.ndarray:
    """One-sided Clopper–Pearson lower bound on a binomial proportion.

    ``P(p < cp_lower(k, n, a)) <= a`` for ``k ~ Bin(n, p)``: the ``a`` quantile
    of Beta(k, n − k + 1), and 0 when ``k = 0`` (Clopper & Pearson 1934).

    Parameters
    ----------
    k, n
        Successes and trials (arrays broadcast; real ``k`` allowed for predictions).
    a
        One-sided error level in (0, 1).
    """
    k, n = _check_counts(k, n)
    return _out(cp_lower_raw(k, n, _check_level(a)))


def cp_lower_raw(k: np.ndarray, n: np.ndarray | float, a: float) -> np.ndarray:
    """:func:`cp_lower` on float arrays already checked (no validation: hot loops only)."""
    with np.errstate(invalid="ignore"):  # inverse regularised incomplete beta = Beta ppf
        out = special.betaincinv(np.maximum(k, 1e-300), n - k + 1.0, a)
    return np.where(k <= 0, 0.0, out)


def cp_upper(k: float | np.ndarray, n: float | np.ndarray,
             a: float | np.ndarray) -> float | np.ndarray:
    """One-sided Clopper–Pearson upper bound: ``P(p > cp_upper(k, n, a)) <= a``.

    The ``1 − a`` quantile of Beta(k + 1, n − k), and 1 when ``k = n``.
    """
    k, n = _check_counts(k, n)
    return _out(cp_upper_raw(k, n, _check_level(a)))


def cp_upper_raw(k: np.ndarray, n: np.ndarray | float, a: float) -> np.ndarray:
    """:func:`cp_upper` on float arrays already checked (no validation: hot loops only)."""
    with np.errstate(invalid="ignore"):  # complementary inverse = Beta isf (accurate for tiny a)
        out = special.betainccinv(k + 1.0, np.maximum(n - k, 1e-300), a)
    return np.where(k >= n, 1.0, out)


def epsilon_lower_bound(k1: float | np.ndarray, n1: float | np.ndarray,
                        k0: float | np.ndarray, n0: float | np.ndarray,
                        delta: float, alpha: float) -> float | np.ndarray:
    """Certified ε lower bound from one pre-chosen event (union bound, α/2 per proportion).

    With ``k1`` hits of the event S among ``n1`` draws of M(D′) and ``k0`` among
    ``n0`` draws of M(D), (ε, δ)-DP implies ``Q(S) ≤ e^ε P(S) + δ``, hence with
    confidence ``1 − alpha``

        ε ≥ log( (CP_lower(k1, n1; α/2) − δ) / CP_upper(k0, n0; α/2) )

    (AUDITING.md §1; Jagielski et al. 2020). The bound is floored at 0 (every
    mechanism satisfies ε ≥ 0), which also covers a numerator ≤ 0. If several
    events were tested, pass ``alpha / J`` (Bonferroni).

    Examples
    --------
    500 hits against 0 at α = 0.01 (the TF-Privacy reference) certify ε ≈ 4.54:

    >>> round(epsilon_lower_bound(500, 500, 0, 500, 0.0, 0.01), 2)
    4.54
    """
    if not (0 <= delta < 1):
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    alpha = float(_check_level(alpha, "alpha"))
    lo = np.asarray(cp_lower(k1, n1, alpha / 2.0)) - delta
    hi = np.asarray(cp_upper(k0, n0, alpha / 2.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = np.where(lo > 0, np.log(np.maximum(lo, 1e-320)) - np.log(hi), 0.0)
    return _out(np.maximum(eps, 0.0))


def epsilon_ceiling(n: float, alpha: float, delta: float = 0.0) -> float:
    """Largest ε certifiable with ``n`` draws per side (a perfect distinguisher).

    The event hits all ``n`` draws of M(D′) and none of M(D):
    ``log((CP_lower(n, n; α/2) − δ) / CP_upper(0, n; α/2))`` ≈ ``log(n / ln(2/α))``.
    A claim above this ceiling cannot be refuted at this sample size, whatever
    the mechanism does (AUDITING.md §1 table; the "curator attack" pitfall).
    """
    return float(epsilon_lower_bound(n, n, 0, n, delta, alpha))


def mu_lower_bound(fpr_ub: float | np.ndarray, fnr_ub: float | np.ndarray) -> float | np.ndarray:
    """GDP lower bound from upper bounds on a test's error rates.

    If M is μ-GDP every test has ``FNR ≥ G_μ(FPR) = Φ(Φ⁻¹(1 − FPR) − μ)``
    (Dong, Roth & Su 2022, Def. 2.3), i.e. ``μ ≥ Φ⁻¹(1 − FPR) − Φ⁻¹(FNR)``. The
    right-hand side decreases in both rates, so upper confidence bounds on them
    give a lower confidence bound on μ (Nasr et al. 2023, §5). Floored at 0.
    """
    fpr = np.asarray(fpr_ub, dtype=float)
    fnr = np.asarray(fnr_ub, dtype=float)
    if np.any((fpr < 0) | (fpr > 1)) or np.any((fnr < 0) | (fnr > 1)):
        raise ValueError("fpr_ub and fnr_ub must lie in [0, 1]")
    with np.errstate(invalid="ignore"):
        mu = special.ndtri(1.0 - fpr) - special.ndtri(fnr)
    mu = np.where(np.isnan(mu), 0.0, mu)  # (0, 0) or (1, 1): no information / perfect
    return _out(np.maximum(mu, 0.0))


def mu_ceiling(n: float, alpha: float) -> float:
    """Largest μ certifiable with ``n`` draws per side (no errors on either side, α/2 each)."""
    a = float(_check_level(alpha, "alpha")) / 2.0
    u = float(cp_upper(0, n, a))
    return float(mu_lower_bound(u, u)) if u < 1 else 0.0


def _ceiling_table(ns: tuple[int, ...] = (10, 100, 1000, 10**4, 10**5, 10**6, 10**7),
                   alpha: float = 0.05) -> dict[int, float]:
    """The ε ceilings of AUDITING.md §1 (for docs and notebooks)."""
    return {n: round(epsilon_ceiling(n, alpha), 2) for n in ns}

