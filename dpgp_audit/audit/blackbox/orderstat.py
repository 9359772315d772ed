"""Certified ε from thresholds at order statistics: no fitting split needed (catalogue A.3).

The split auditor (:func:`~dpgp_audit.audit.blackbox.audit_blackbox`) spends part of
its samples choosing a threshold. When the score needs no fitting (the exact
likelihood ratio of a GaussianRelease, or the identity of a scalar output), every
draw can certify instead, with thresholds placed at **order statistics** of one
side at ranks fixed in advance:

* For the test "P_{D′}(S) ≤ e^ε P_D(S) + δ" with S = {s > t}, put t at the
  (r+1)-th largest of the n₀ scores drawn from M(D). By the probability-integral
  transform, P_D(S) is then dominated by the (r+1)-th largest of n₀ uniforms,
  a Beta(r+1, n₀−r) variable, whose upper 1−a quantile is exactly the
  Clopper–Pearson bound ``cp_upper(r, n₀, a)`` (ties only make P_D(S) smaller).
* The n₁ draws from M(D′) are independent of t, so given t their count above t is
  Binomial(n₁, P_{D′}(S)) and ``cp_lower(k₁, n₁, a)`` bounds P_{D′}(S) from below.

The lower tail and the reversed order (thresholds from M(D′)'s draws) are the same
with the roles swapped. A union bound over the two proportions, the ranks (a
geometric set fixed before sampling) and the four tail × order tests gives a
bound valid with confidence 1 − α without any split (Clopper & Pearson 1934;
David & Nagaraja, *Order Statistics*, §2.1). Its Bonferroni factor is 4·|ranks|
(about 100), against 2n for a Bonferroni over every observed threshold.
"""

from __future__ import annotations

import math
import time

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.audit.blackbox.fixed import _claim_epsilon_delta
from dpgp_audit.audit.blackbox.sampling import ChunkedSampler, child_rngs
from dpgp_audit.audit.blackbox.scores import IdentityScore, fixed_score
from dpgp_audit.audit.blackbox.twosample import NO_PROOF_NOTE, witness_dict
from dpgp_audit.audit.result import AuditResult, Guarantee, Verdict
from dpgp_audit.audit.stats import cp_lower, cp_upper, epsilon_ceiling
from dpgp_audit.dataset import Dataset

__all__ = ["audit_order_statistics", "choose_threshold_strategy",
           "epsilon_from_order_statistics", "order_statistic_ranks"]

#: Below this many draws per side the split's fitting share costs more than the rank grid.
SMALL_N = 5_000


def choose_threshold_strategy(n: int, delta: float) -> str:
    """The kit's rule for a score that needs no fitting, fixed before any sampling.

    ``"order-statistics"`` (every draw certifies) when δ > 0 — the best events are
    extreme tails, where the fixed ranks are dense — or when n < 5 000 per side,
    where a fitting split is the larger loss; ``"split"`` otherwise (pure DP at
    large n: the best event has moderate mass, where the split's threshold search
    is finer than the geometric ranks). Either choice is valid; the rule only
    picks which valid bound to compute (``benchmarks/bench_auditor_power.py``).
    """
    n = check_positive_int("n", n)
    return "order-statistics" if delta > 0 or n < SMALL_N else "split"


def order_statistic_ranks(n: int, count: int = 24) -> np.ndarray:
    """Ranks r (0 = the most extreme draw) fixed before sampling: 0 and a geometric set to n/2."""
    n = check_positive_int("n", n)
    top = max(1, n // 2)
    r = np.unique(np.concatenate([[0], np.round(np.geomspace(1, top, count)).astype(int)]))
    return r[r < n]


def epsilon_from_order_statistics(s0: np.ndarray, s1: np.ndarray, *, delta: float,
                                  alpha: float, ranks: np.ndarray | None = None) -> dict:
    """Certified ε lower bound from two independent score samples (module notes).

    Parameters
    ----------
    s0, s1
        Scores of draws from M(D) and M(D′) (never used to choose anything else).
    delta
        δ of the (ε, δ) statement tested.
    alpha
        Overall error, split over 2 proportions × ranks × 4 tests (Bonferroni).
    ranks
        Ranks to use (default :func:`order_statistic_ranks` of the smaller sample).

    Returns
    -------
    dict
        ``epsilon_lb`` and the winning test (tail, order, rank, threshold, counts).
    """
    s0 = np.sort(np.asarray(s0, dtype=float))
    s1 = np.sort(np.asarray(s1, dtype=float))
    n0, n1 = s0.size, s1.size
    if n0 < 1 or n1 < 1:
        raise ValueError("both score samples must be non-empty")
    if not (0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    if not (0 <= delta < 1):
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    ranks = order_statistic_ranks(min(n0, n1)) if ranks is None else np.asarray(ranks, int)
    a = alpha / (4 * ranks.size) / 2.0  # per proportion
    best = {"epsilon_lb": 0.0}
    # (reference sample: supplies thresholds and the Beta upper bound; other: the count)
    for order, ref, other in (("D'>D", s0, s1), ("D>D'", s1, s0)):
        m, k = ref.size, other.size
        for tail in ("upper", "lower"):
            r = ranks[ranks < m]
            if tail == "upper":
                t = ref[m - 1 - r]  # r reference draws lie strictly above t (no ties)
                hits = k - np.searchsorted(other, t, side="right")
            else:
                t = ref[r]
                hits = np.searchsorted(other, t, side="left")
            p_ref = np.asarray(cp_upper(r, m, a))
            p_other = np.asarray(cp_lower(hits, k, a)) - delta
            with np.errstate(divide="ignore", invalid="ignore"):
                eps = np.where(p_other > 0, np.log(np.maximum(p_other, 1e-320)) - np.log(p_ref),
                               0.0)
            j = int(np.argmax(eps))
            if eps[j] > best["epsilon_lb"]:
                best = {"epsilon_lb": float(eps[j]), "order": order, "tail": tail,
                        "rank": int(r[j]), "threshold": float(t[j]), "count": int(hits[j]),
                        "n_reference": m, "n_count": k}
    best.update(ranks=ranks.size, alpha_per_proportion=a)
    return best


def audit_order_statistics(mechanism: object, d0: Dataset, d1: Dataset, *, n: int,
                           rng: np.random.Generator, alpha: float = 0.05,
                           claim: object | None = None, score: str = "auto",
                           executor: object | None = None, delta: float | None = None,
                           chunk_size: int | None = None) -> AuditResult:
    """A.3 without a fitting split: thresholds at order statistics of fixed ranks.

    Needs a score that needs no fitting: the exact likelihood ratio of a
    GaussianRelease (``score="auto"``/``"lr-gaussian"``) or the scalar output
    itself (``score="identity"``); learned scores need the split auditor.

    Returns
    -------
    AuditResult
        ``auditor="blackbox"``, guarantee ``LOWER_BOUND``; details name the test,
        rank and counts behind the bound.
    """
    t_start = time.perf_counter()
    claim = mechanism.claim if claim is None else claim  # type: ignore[attr-defined]
    eps_c, del_c, conversion = _claim_epsilon_delta(claim, delta)
    rng = check_rng(rng)
    n = check_positive_int("n", n)
    if not (0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    fn = IdentityScore() if score == "identity" else fixed_score(mechanism, d0, d1, score)
    if fn is None:
        raise ValueError("order-statistic thresholds need a score without fitting: "
                         "score='identity' for scalar outputs, or a GaussianRelease")
    sampler = ChunkedSampler(mechanism, d0, d1, 200_000 if chunk_size is None else
                             check_positive_int("chunk_size", chunk_size), executor,
                             fixed_chunk=chunk_size is not None)
    (r_cert,) = child_rngs(rng, 1)
    s0, s1 = sampler.scores(r_cert, n, fn)
    res = epsilon_from_order_statistics(s0, s1, delta=del_c, alpha=alpha)
    best = res["epsilon_lb"]
    a_eff = alpha / (4 * res["ranks"])
    ceiling = epsilon_ceiling(n, a_eff, del_c)
    if best > eps_c:
        verdict = Verdict.VIOLATION
    elif ceiling <= eps_c:
        verdict = Verdict.INCONCLUSIVE
    else:
        verdict = Verdict.NO_EVIDENCE
    details = {"score": fn.name, "n_per_side": n, "n_fit": 0, "n_cert": n,
               "thresholds": "order statistics at fixed ranks", "test": res,
               "delta": del_c, "claimed_epsilon": eps_c, "claim": claim.as_dict(),  # type: ignore
               "claim_conversion": conversion, "alpha_spent": alpha,
               "epsilon_ceiling": ceiling, "witness": witness_dict(d0, d1),
               "seconds": {"total": time.perf_counter() - t_start}, "note": NO_PROOF_NOTE}
    if not math.isfinite(best):
        raise ValueError("non-finite bound: the score samples contain non-finite values")
    return AuditResult(auditor="blackbox", verdict=verdict, guarantee=Guarantee.LOWER_BOUND,
                       estimate=best, claimed=eps_c, quantity="epsilon", alpha=alpha,
                       details=details)
