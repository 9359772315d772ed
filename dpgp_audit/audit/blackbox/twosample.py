"""Threshold tests between two samples of scores (catalogue A.3).

The candidate thresholds, the tail counts at each, the empirical trade-off points
(for plots) and the constants shared by :mod:`~dpgp_audit.audit.blackbox.fixed` and
:mod:`~dpgp_audit.audit.blackbox.gdp_fit`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import special

from dpgp_audit.audit.result import Verdict
from dpgp_audit.audit.stats import (
    cp_lower,
    cp_upper,
    epsilon_lower_bound,
)
from dpgp_audit.dataset import Dataset

__all__ = [
    "DEFAULT_DELTA",
    "FIT_LEVEL",
    "NO_PROOF_NOTE",
    "bound_verdict",
    "hindsight_epsilon",
    "prescient_epsilon",
    "SMOOTH_WIDTH",
    "smooth",
    "tail_counts",
    "tail_rates",
    "threshold_grid",
    "tradeoff_points",
    "witness_dict",
]


DEFAULT_DELTA = 1e-5


FIT_LEVEL = 0.2  # one-sided level of the pessimistic rates used to choose thresholds


SMOOTH_WIDTH = 9  # width of the running mean applied to predicted bounds before the argmax


NO_PROOF_NOTE = ("No violation found is not a proof of privacy: only the tests listed were run, "
                 "and the epsilon ceiling at this n bounds what they could show.")


def bound_verdict(lower_bound: float, ceiling: float, claimed: float) -> Verdict:
    """The verdict of a certified lower bound on a privacy parameter (A.3, A.6).

    VIOLATION when the bound exceeds the claim; INCONCLUSIVE when even a perfect
    distinguisher could not have exceeded it at this n (``ceiling <= claimed``: the test
    had no power to see a violation); NO_EVIDENCE otherwise.
    """
    if lower_bound > claimed:
        return Verdict.VIOLATION
    if ceiling <= claimed:
        return Verdict.INCONCLUSIVE
    return Verdict.NO_EVIDENCE


def threshold_grid(s0: np.ndarray, s1: np.ndarray, c_min: float, size: int = 120) -> np.ndarray:
    """Candidate thresholds: pooled-score quantiles at tail masses from c_min to ½, both tails."""
    pooled = np.concatenate([s0, s1])
    uniq = np.unique(pooled)
    if uniq.size <= 2 * size:
        # discrete scores: every gap between distinct values, plus the ends
        mids = (uniq[:-1] + uniq[1:]) / 2 if uniq.size > 1 else uniq
        return np.unique(np.concatenate([[uniq[0] - 1.0], mids, [uniq[-1] + 1.0]]))
    masses = np.geomspace(max(c_min, 1.0 / pooled.size), 0.5, size)
    q = np.concatenate([masses, 1.0 - masses])
    return np.unique(np.quantile(pooled, q, method="inverted_cdf"))


def smooth(values: np.ndarray, width: int) -> np.ndarray:
    """Running mean over ``width`` neighbouring grid points (edges use what exists).

    The predicted bound on the fitting split is noisy from threshold to threshold;
    maximising the raw curve picks noise, maximising a locally averaged one picks
    a region that is good on average.
    """
    if width <= 1 or values.size < 3:
        return values
    kernel = np.ones(width)
    num = np.convolve(values, kernel, mode="same")
    den = np.convolve(np.ones_like(values), kernel, mode="same")
    return num / den


def tail_counts(s: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """#{s > t} and #{s < t} for each threshold t, ``s`` sorted.

    One binary search per threshold: ``#{s <= t}`` equals ``#{s < t}`` unless ``s`` holds
    ``t`` itself, and only those thresholds are searched again (issue 20 §2; on large
    sorted samples the searches are most of the cost).
    """
    t = np.asarray(t)
    below = np.searchsorted(s, t, side="left")
    if t.ndim == 0 or s.size == 0:
        return s.size - np.searchsorted(s, t, side="right"), below
    right = below.copy()
    # s[below] > t (or below = size) leaves nothing equal to t; otherwise search again
    again = ~(s[np.minimum(below, s.size - 1)] > t) & (below < s.size)
    if again.any():
        right[again] = np.searchsorted(s, t[again], side="right")
    return s.size - right, below


def tail_rates(counts: dict[str, np.ndarray], tail: str) -> tuple[np.ndarray, np.ndarray]:
    """The (D, D') tail counts of ``tail`` (``'upper'`` or ``'lower'``)."""
    key = "above" if tail == "upper" else "below"
    return counts[f"{key}0"], counts[f"{key}1"]


def tradeoff_points(counts: dict[str, np.ndarray], grid: np.ndarray, n: int, alpha: float,
                     max_points: int = 40) -> dict:
    """Empirical (FPR, FNR) of the upper-tail tests with two-sided CP boxes (for plots)."""
    k0, k1 = counts["above0"], counts["above1"]
    idx = np.unique(np.linspace(0, grid.size - 1, min(max_points, grid.size)).astype(int))
    fp, fn_ = k0[idx], n - k1[idx]
    a = alpha / 2
    return {"fpr": (fp / n).tolist(), "fnr": (fn_ / n).tolist(),
            "fpr_lo": np.atleast_1d(cp_lower(fp, n, a)).tolist(),
            "fpr_hi": np.atleast_1d(cp_upper(fp, n, a)).tolist(),
            "fnr_lo": np.atleast_1d(cp_lower(fn_, n, a)).tolist(),
            "fnr_hi": np.atleast_1d(cp_upper(fn_, n, a)).tolist(),
            "box_level": 1 - alpha, "n": n, "threshold": grid[idx].tolist(),
            "note": "display only: boxes are per point, not simultaneous"}


def witness_dict(d0: Dataset, d1: Dataset) -> dict:
    """The neighbouring pair as JSON-ready lists."""
    return {"d0": {"X": d0.X.tolist(), "y": d0.y.tolist()},
            "d1": {"X": d1.X.tolist(), "y": d1.y.tolist()}}


#: Above this many distinct thresholds :func:`hindsight_epsilon` prescreens by a normal
#: approximation and evaluates the exact bound at the best :data:`_HINDSIGHT_KEEP` of each test.
_HINDSIGHT_EXACT = 50_000
_HINDSIGHT_KEEP = 2_000


def hindsight_epsilon(s0: np.ndarray, s1: np.ndarray, delta: float, alpha: float) -> float:
    """The oracle-threshold reference: NOT a confidence bound (issue 20 §5).

    The Clopper–Pearson ε bound (:func:`~dpgp_audit.audit.stats.epsilon_lower_bound`,
    α/2 per proportion) at the best threshold chosen with hindsight *on the same
    draws* — every distinct score, both tails, both orders — with no split and no
    multiplicity correction. Choosing the event after seeing the counts makes it
    optimistic (a winner's curse, pitfall §3.1): it is above 0 on identical
    distributions far more often than α. The power benchmark reports a valid
    bound as a fraction of it (``benchmarks/bench_auditor_power.py``).

    With more than 50 000 distinct thresholds, each test's thresholds are ranked by
    a normal approximation of the same bound and the exact bound is evaluated at
    the best 2 000 (the reference may then be a hair low, never invalidly high:
    it is not a guarantee either way).
    """
    s0 = np.sort(np.asarray(s0, dtype=float))
    s1 = np.sort(np.asarray(s1, dtype=float))
    n0, n1 = s0.size, s1.size
    t = np.unique(np.concatenate([s0, s1]))
    above0, below0 = tail_counts(s0, t)
    above1, below1 = tail_counts(s1, t)
    best = 0.0
    z = float(special.ndtri(1.0 - alpha / 2.0))  # the normal quantile of each proportion
    for num, n_num, den, n_den in ((above1, n1, above0, n0), (below0, n0, below1, n1),
                                   (above0, n0, above1, n1), (below1, n1, below0, n0)):
        idx = np.arange(t.size)
        if t.size > _HINDSIGHT_EXACT:
            p1 = (num + 0.5) / (n_num + 1.0)
            p0 = (den + 0.5) / (n_den + 1.0)
            lo = np.maximum(p1 - z * np.sqrt(p1 * (1 - p1) / n_num) - delta, 1e-300)
            hi = p0 + z * np.sqrt(p0 * (1 - p0) / n_den)
            idx = np.argsort(-(np.log(lo) - np.log(hi)))[:_HINDSIGHT_KEEP]
        e = np.asarray(epsilon_lower_bound(num[idx], n_num, den[idx], n_den, delta, alpha))
        best = max(best, float(np.max(e)) if e.size else 0.0)
    return best



def prescient_epsilon(s0: np.ndarray, s1: np.ndarray, sf0: Callable[[np.ndarray], np.ndarray],
                      sf1: Callable[[np.ndarray], np.ndarray], grid: np.ndarray,
                      delta: float, alpha: float) -> float:
    """The prescient-threshold reference: a valid bound that knows the true laws (issue 20 §5).

    The event — a threshold from ``grid``, a tail and an order — is the one whose
    Clopper–Pearson bound (:func:`~dpgp_audit.audit.stats.epsilon_lower_bound`,
    α/2 per proportion) is largest at the *expected* counts of the true laws
    (survival functions ``sf0`` of M(D)'s score and ``sf1`` of M(D′)'s, continuous),
    fixed before the draws are looked at; the bound is then that one test on the
    draws. One event chosen without the data: a confidence bound at level
    1 − α, but only an oracle could choose it (it needs the true laws). Beside
    :func:`hindsight_epsilon` it shows how much of that reference's lead is the
    choice made after seeing the counts (the power benchmark prints both).

    Parameters
    ----------
    s0, s1
        Scores of the draws from M(D) and M(D′).
    sf0, sf1
        ``t ↦ P(score > t)`` under the true laws of M(D) and M(D′) (vectorised).
    grid
        Candidate thresholds, fixed without the draws.
    delta, alpha
        δ of the statement tested and the error of the one test.
    """
    s0 = np.sort(np.asarray(s0, dtype=float))
    s1 = np.sort(np.asarray(s1, dtype=float))
    n0, n1 = s0.size, s1.size
    t = np.asarray(grid, dtype=float)
    u0, u1 = np.clip(sf0(t), 0.0, 1.0), np.clip(sf1(t), 0.0, 1.0)
    # (numerator mass, its n, denominator mass, its n) of the four tail x order events
    events = ((u1, n1, u0, n0), (1 - u0, n0, 1 - u1, n1),
              (u0, n0, u1, n1), (1 - u1, n1, 1 - u0, n0))
    pred = np.stack([np.asarray(epsilon_lower_bound(q * nq, nq, p * n_p, n_p, delta, alpha))
                     for q, nq, p, n_p in events])
    e, j = np.unravel_index(int(np.argmax(pred)), pred.shape)
    above0, below0 = tail_counts(s0, t[j:j + 1])
    above1, below1 = tail_counts(s1, t[j:j + 1])
    k_num, n_num, k_den, n_den = ((above1, n1, above0, n0), (below0, n0, below1, n1),
                                  (above0, n0, above1, n1), (below1, n1, below0, n0))[e]
    bound = np.asarray(epsilon_lower_bound(k_num, n_num, k_den, n_den, delta, alpha))
    return float(bound.ravel()[0])
