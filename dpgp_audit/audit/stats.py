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

**One event, one test.** When the event's threshold is an order statistic of the
reference sample at a rank fixed in advance (the order-statistic auditor), the
reference side's uncertainty has a *known* law — a Beta variable — and the two
proportions need not be bounded separately at α/2 each:
:func:`epsilon_lower_bound_rank_count` inverts one exact test of "Q(S) ≤ e^ε P(S) + δ"
that spends the whole α on the pair (issue 20 §5).
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
    "epsilon_lower_bound_paired_tails",
    "epsilon_lower_bound_rank_count",
    "mu_ceiling",
    "mu_lower_bound",
    "paired_tails_pvalue",
    "rank_count_pvalue",
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


#: Grid points per test of the rank × count integral. Any grid gives a valid (upper)
#: p-value; with this many the excess over the exact integral stays near 1 % of it where
#: the p-value is small, which moves a certified ε by about 1e-3 (measured in the tests).
RANK_COUNT_GRID = 1024


def _beta_bins(rank: np.ndarray, n_ref: np.ndarray,
               size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Right ends ``b`` and exact masses ``w`` of bins of Beta(rank + 1, n_ref − rank).

    Bins ``[0, b_1], (b_1, b_2], …`` cover the central ``1 − 2e-15`` of the law on a
    uniform grid; ``tail`` is the mass above the last point (shapes ``(T, size)``,
    ``(T, size)``, ``(T,)``).
    """
    a = rank[:, None] + 1.0
    b_ = (n_ref - rank)[:, None].astype(float)
    lo = special.betaincinv(a, b_, 1e-15)
    hi = special.betaincinv(a, b_, 1.0 - 1e-15)
    b = lo + (hi - lo) * np.linspace(0.0, 1.0, size)[None, :]
    cdf = special.betainc(a, b_, b)
    w = np.diff(cdf, axis=1, prepend=0.0)
    return b, w, 1.0 - cdf[:, -1]


def _rank_count_upper(epsilon: np.ndarray, b: np.ndarray, w: np.ndarray, tail: np.ndarray,
                      hits: np.ndarray, n_other: np.ndarray, delta: float) -> np.ndarray:
    """Upper Riemann sum of E[P(Bin(n_other, min(1, e^ε B + δ)) ≥ hits)] on the bins."""
    p = np.minimum(1.0, np.exp(epsilon)[:, None] * b + delta)
    k = hits[:, None]
    # P(Bin(n, p) >= k) = I_p(k, n - k + 1); 1 for k = 0
    with np.errstate(invalid="ignore"):
        h = np.where(k > 0, special.betainc(np.maximum(k, 1.0), n_other[:, None] - k + 1.0, p),
                     1.0)
    return np.sum(w * h, axis=1) + tail


def rank_count_pvalue(epsilon: float | np.ndarray, rank: float | np.ndarray,
                      n_ref: float | np.ndarray, hits: float | np.ndarray,
                      n_other: float | np.ndarray, delta: float,
                      grid: int = RANK_COUNT_GRID) -> float | np.ndarray:
    """Exact p-value (an upper bound on it) of "Q(S) ≤ e^ε P(S) + δ" for a rank-fixed tail.

    The event S is the tail beyond the (rank + 1)-th most extreme of ``n_ref``
    reference draws (from the law P), and ``hits`` of ``n_other`` independent
    draws from Q fall in it. For a continuous score P(S) follows Beta(rank + 1,
    n_ref − rank) exactly (ties only make it smaller), and given S the hits are
    Binomial(n_other, Q(S)); under the hypothesis Q(S) ≤ e^ε P(S) + δ

        P(hits ≥ k) ≤ π(ε) = E[ P(Bin(n_other, min(1, e^ε B + δ)) ≥ k) ],  B ~ Beta,

    because the binomial tail grows with its proportion (David & Nagaraja,
    *Order Statistics*, §2.1; the same Beta law gives :func:`cp_upper`). π is a
    one-dimensional integral, computed as an upper Riemann sum over bins of B
    with exact masses (regularised incomplete beta), so the value returned is
    never below the exact π, whatever ``grid``. Unlike two Clopper–Pearson bounds
    at α/2 each (:func:`epsilon_lower_bound`), this is one test of the pair: the
    two sides' errors add in quadrature rather than linearly.

    Parameters
    ----------
    epsilon
        ε of the hypothesis (arrays broadcast with the counts).
    rank, n_ref
        Rank of the threshold (0 = the most extreme reference draw) and reference size.
    hits, n_other
        Draws of the other side in the tail, and their number.
    delta
        δ of the hypothesis.
    grid
        Bins of the Beta law (more: closer to the exact integral, never below it).
    """
    if not (0 <= delta < 1):
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    e, r, m, k, n1 = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v, dtype=float))
                                            for v in (epsilon, rank, n_ref, hits, n_other)))
    _check_counts(r, m)
    _check_counts(k, n1)
    if np.any(r >= m):
        raise ValueError("rank must be below n_ref (ranks count from 0)")
    b, w, tail = _beta_bins(r.ravel(), m.ravel(), int(grid))
    out = _rank_count_upper(e.ravel(), b, w, tail, k.ravel(), n1.ravel(), float(delta))
    out = np.minimum(out, 1.0).reshape(e.shape)
    return float(out[0]) if np.ndim(epsilon) == 0 and out.size == 1 else out


def epsilon_lower_bound_rank_count(rank: float | np.ndarray, n_ref: float | np.ndarray,
                                   hits: float | np.ndarray, n_other: float | np.ndarray,
                                   delta: float, a: float | np.ndarray,
                                   grid: int = RANK_COUNT_GRID,
                                   tol: float = 1e-6) -> float | np.ndarray:
    """Certified ε from one rank-fixed tail: the largest ε that :func:`rank_count_pvalue` rejects.

    π(ε) grows with ε, so ``sup{ε ≥ 0 : π(ε) ≤ a}`` is found by bisection; the value
    returned always satisfies π ≤ a (it is rounded down, by at most ``tol``). With
    confidence ``1 − a`` the mechanism's ε at this δ is at least it; several tests
    need a Bonferroni split of the overall α (pass each its ``a``). Floored at 0.

    Examples
    --------
    With 193 of 1000 draws of M(D′) beyond the 129th largest of 1000 draws of M(D) (the
    expected counts of the (1, 1e-5) Gaussian at that tail), one test at a = 0.0125
    certifies about 0.17, where two Clopper–Pearson bounds at a/2 each certify 0.076:

    >>> round(float(epsilon_lower_bound_rank_count(128, 1000, 193, 1000, 1e-5, 0.0125)), 2)
    0.17
    """
    if not (0 <= delta < 1):
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    r, m, k, n1, a_ = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v, dtype=float))
                                            for v in (rank, n_ref, hits, n_other, a)))
    shape = r.shape
    r, m, k, n1, a_ = (v.ravel() for v in (r, m, k, n1, a_))
    _check_counts(r, m)
    _check_counts(k, n1)
    _check_level(a_, "a")
    if np.any(r >= m):
        raise ValueError("rank must be below n_ref (ranks count from 0)")
    b, w, tail = _beta_bins(r, m, int(grid))

    def pv(e: np.ndarray) -> np.ndarray:
        return _rank_count_upper(e, b, w, tail, k, n1, float(delta))

    lo = np.zeros(r.size)
    ok = pv(lo) <= a_
    # bracket: hi with pi(hi) > a (the bound cannot pass log(n_ref + 1) + 40 for any counts)
    hi = np.ones(r.size)
    cap = np.log(m + 1.0) + 40.0
    for _ in range(8):
        grow = ok & (pv(hi) <= a_) & (hi < cap)
        if not np.any(grow):
            break
        lo = np.where(grow, hi, lo)
        hi = np.where(grow, np.minimum(2.0 * hi, cap), hi)
    while np.any(ok & (hi - lo > tol)):
        mid = 0.5 * (lo + hi)
        rej = pv(mid) <= a_
        lo = np.where(rej, mid, lo)
        hi = np.where(rej, hi, mid)
    out = np.where(ok, lo, 0.0).reshape(shape)
    return float(out[0]) if out.size == 1 and np.ndim(rank) == 0 else out


#: Bins per side of the two-dimensional integral of :func:`paired_tails_pvalue`.
PAIRED_GRID = 256


def paired_tails_pvalue(epsilon: float, rank: int, n0: int, n1: int, hits: int, delta: float,
                        grid: int = PAIRED_GRID) -> float:
    """Upper bound on the p-value of one **paired-tails** test of (ε, δ) between P and Q.

    The pair of events, for a shift of Q above P: ``t_u`` is the (rank + 1)-th
    largest of ``n0`` draws from P and ``t_l`` the (rank + 1)-th smallest of ``n1``
    draws from Q; ``hits`` = #{Q-draws > max(t_u, t_l)} + #{P-draws < min(t_l, t_u)}.
    (ε, δ)-DP both ways bounds both events' masses, and the test pools their counts,
    so each side's noise is averaged over twice the draws (issue 20 §5).

    Why the bound holds (continuous scores; break ties at random first):
    ``P_u = P(X > t_u)`` and ``Q_l = Q(Y < t_l)`` are independent Beta(rank + 1,
    n − rank) variables (David & Nagaraja, *Order Statistics*, §2.1). Given ``t_l``,
    the n1 − rank − 1 Q-draws above it are i.i.d. from Q restricted there, so the
    first count is Binomial(n1 − rank − 1, π_u) with
    π_u ≤ min(1, (e^ε P_u + δ) / (1 − Q_l)) under "Q(S) ≤ e^ε P(S) + δ"; likewise the
    second is Binomial(n0 − rank − 1, π_l), π_l ≤ min(1, (e^ε Q_l + δ) / (1 − P_u)),
    and given (t_u, t_l) the two counts are independent. A sum of independent
    Bernoulli trials exceeds c ≥ M p̄ + 2 (M trials, mean probability p̄ ≥ 1/M) no
    more often than Binomial(M, p̄) does (Hoeffding 1956, Ann. Math. Statist. 27; checked
    against exact convolutions in the tests), and the tail grows
    with every trial's probability, so an upper Riemann sum over bins of (P_u, Q_l)
    with exact masses, at each cell's upper corner, bounds the p-value from above
    whatever ``grid`` (the mass beyond the bins counts as 1).
    """
    if not (0 <= delta < 1):
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    r, n0, n1, c = int(rank), int(n0), int(n1), int(hits)
    if not (0 <= r < min(n0, n1)):
        raise ValueError("rank must lie in [0, min(n0, n1)) (ranks count from 0)")
    m1, m0 = n1 - r - 1, n0 - r - 1
    total = m0 + m1
    if not (0 <= c <= total):
        raise ValueError(f"hits must lie in [0, {total}], got {hits!r}")
    if c == 0:
        return 1.0
    b, w, tail = _beta_bins(np.array([r, r], dtype=float), np.array([n0, n1], dtype=float),
                            int(grid))
    bu, bl = b[0][:, None], b[1][None, :]  # P_u down the rows, Q_l across the columns
    g = float(np.exp(epsilon))
    pi_u = np.minimum(1.0, (g * bu + delta) / np.maximum(1.0 - bl, 1e-300))
    pi_l = np.minimum(1.0, (g * bl + delta) / np.maximum(1.0 - bu, 1e-300))
    mean = (m1 * pi_u + m0 * pi_l) / total
    ok = (c >= total * mean + 2.0) & (total * mean >= 1.0)
    with np.errstate(invalid="ignore"):
        h = np.where(ok, special.betainc(float(c), total - c + 1.0, np.where(ok, mean, 0.5)),
                     1.0)
    inner = float(np.sum(w[0][:, None] * w[1][None, :] * h))
    return min(1.0, inner + 1.0 - (1.0 - tail[0]) * (1.0 - tail[1]))


def epsilon_lower_bound_paired_tails(rank: int, n0: int, n1: int, hits: int, delta: float,
                                     a: float, grid: int = PAIRED_GRID,
                                     tol: float = 1e-5) -> float:
    """Certified ε of one paired-tails test: the largest ε :func:`paired_tails_pvalue` rejects.

    The p-value grows with ε; the value returned satisfies p ≤ ``a`` (bisection,
    rounded down by at most ``tol``). Floored at 0.
    """
    a = float(_check_level(a, "a"))

    def rejects(e: float) -> bool:
        return paired_tails_pvalue(e, rank, n0, n1, hits, delta, grid) <= a

    if not rejects(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    cap = float(np.log(max(n0, n1) + 1.0) + 40.0)
    while rejects(hi) and hi < cap:
        lo, hi = hi, min(2.0 * hi, cap)
    if lo >= cap:
        return lo
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if rejects(mid):
            lo = mid
        else:
            hi = mid
    return lo


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

