"""Certified ε from thresholds at order statistics: no fitting split needed (catalogue A.3).

The split auditor (:func:`~dpgp_audit.audit.blackbox.audit_blackbox`) spends part of
its samples choosing a threshold. When the score needs no fitting (the exact
likelihood ratio of a GaussianRelease, or the identity of a scalar output), every
draw can certify instead, with thresholds placed at **order statistics** of one
side at ranks fixed in advance:

* For the test "P_{D′}(S) ≤ e^ε P_D(S) + δ" with S = {s > t}, put t at the
  (r+1)-th largest of the n₀ scores drawn from M(D). By the probability-integral
  transform, P_D(S) is then a Beta(r+1, n₀−r) variable (ties only make it smaller).
* The n₁ draws from M(D′) are independent of t, so given t their count above t is
  Binomial(n₁, P_{D′}(S)). The pair (Beta, count) has a known law under the
  hypothesis, so one exact test decides it
  (:func:`~dpgp_audit.audit.stats.epsilon_lower_bound_rank_count`): the whole α share
  of the event goes to the pair, instead of two Clopper–Pearson bounds at half of it.

The lower tail and the reversed order (thresholds from M(D′)'s draws) are the same
with the roles swapped. The ranks come from the claim (:func:`claim_ranks`: the rank
that would be best if the mechanism were exactly at the claim, and rank 0), so a
weighted Bonferroni over two ranks × four tail × order tests (two when the score is an
exact likelihood ratio, whose direction is known) gives a bound valid with confidence
1 − α without any split (Clopper & Pearson 1934; David & Nagaraja, *Order
Statistics*, §2.1). Issue 20 §5: at n = 10³–10⁶ per side this reaches 0.8–1.0 of the
oracle-threshold reference (:func:`~dpgp_audit.audit.blackbox.twosample.hindsight_epsilon`;
``docs/benchmarks.md``), and lies above the prescient reference
(:func:`~dpgp_audit.audit.blackbox.twosample.prescient_epsilon`: one Clopper–Pearson event
fixed from the true laws) in every Gaussian and Laplace cell.

Variants judged and not adopted (``benchmarks/bench_orderstat_variants.py``, fresh seeds;
numbers in ``docs/benchmarks.md``): more α to one tail pair (a shift either way shows in
the two upper-tail tests, but for a symmetric law the lower pair is an independent second
look at the same shift, worth more than the larger α share, and a lower-tail-only leak
loses its tests); no rank-0 test (gains under 0.01 and loses disjoint supports); a
Šidák or joint test across the two orders of one tail (of the two, one is informative
for a given direction, and for nearly independent tests Šidák's α/2 differs from
Bonferroni's in the fourth digit); the paired-tails test
(:func:`~dpgp_audit.audit.stats.epsilon_lower_bound_paired_tails`, which pools the two
informative tails of a location shift: ahead on the symmetric Gaussian only when it
takes all of α, and then blind to a one-tail leak).
"""

from __future__ import annotations

import time

import numpy as np
from scipy import special

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.audit.blackbox.fixed import _claim_epsilon_delta
from dpgp_audit.audit.blackbox.sampling import ChunkedSampler, child_rngs
from dpgp_audit.audit.blackbox.scores import IdentityScore, fixed_score
from dpgp_audit.audit.blackbox.twosample import NO_PROOF_NOTE, bound_verdict, witness_dict
from dpgp_audit.audit.result import AuditResult, Guarantee
from dpgp_audit.audit.stats import epsilon_lower_bound_rank_count
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy import gdp

__all__ = ["audit_order_statistics", "choose_threshold_strategy", "claim_ranks",
           "epsilon_from_order_statistics", "order_statistic_ranks"]

#: Share of α given to the claim's own rank (:func:`claim_ranks`); the rest goes to rank 0.
CLAIM_RANK_WEIGHT = 0.9

#: Scores that grow with evidence for D′ (exact likelihood ratios): two tests suffice.
ORIENTED_SCORES = frozenset({"lr-gaussian", "lr-gaussian (quadratic, unequal covariances)"})

#: Tests evaluated with the fine grid after screening every test on a coarse one.
_REFINE = 2
_COARSE_GRID = 128


def choose_threshold_strategy(n: int, delta: float) -> str:
    """The kit's rule for a score that needs no fitting, fixed before any sampling.

    ``"order-statistics"`` at every n and δ: with the claim's own ranks and one exact
    rank × count test per event, every draw certifies and the bound is at or above
    the split auditor's in every cell of ``benchmarks/bench_auditor_power.py``
    (n = 10³–10⁶, the (1, 1e-5) Gaussian and the ε = 1 Laplace; issue 20 §5). The
    split auditor remains the route for learned scores. Kept as a function so the
    rule stays one place, fixed by ``(n, δ)`` alone.
    """
    check_positive_int("n", n)
    if not (0 <= delta < 1):
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    return "order-statistics"


def order_statistic_ranks(n: int, count: int = 24) -> np.ndarray:
    """Ranks r (0 = the most extreme draw) fixed before sampling: 0 and a geometric set to n/2."""
    n = check_positive_int("n", n)
    top = max(1, n // 2)
    r = np.unique(np.concatenate([[0], np.round(np.geomspace(1, top, count)).astype(int)]))
    return r[r < n]


def _claim_other_tail(epsilon: float, delta: float, p0: np.ndarray) -> np.ndarray:
    """Q(S) of the upper tail S with P(S) = p0 for the mechanism exactly at the claim.

    δ > 0: the Gaussian mechanism whose privacy profile passes through (ε, δ)
    (μ-GDP with δ(ε; μ) = δ; Dong, Roth & Su 2022, Cor. 2.13). δ = 0: the Laplace
    mechanism with scale Δ/ε (its tails beyond the shift have ratio exactly e^ε).
    """
    if delta > 0:
        mu = gdp.gdp_mu(epsilon, delta)
        return special.ndtr(special.ndtri(p0) + mu) if mu < 40 else np.ones_like(p0)
    b = 1.0 / epsilon  # Laplace(0, b) against Laplace(1, b)
    t = np.where(p0 <= 0.5, -b * np.log(2.0 * p0), b * np.log(2.0 * (1.0 - p0)))
    return np.where(t >= 1.0, 0.5 * np.exp(-(t - 1.0) / b), 1.0 - 0.5 * np.exp((t - 1.0) / b))


def claim_ranks(epsilon: float, delta: float, n: int, alpha: float, *,
                tests: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Ranks and α weights fixed before sampling from the claim itself (issue 20 §5).

    The main rank is the one that maximises the expected certified bound at
    ``n`` per side if the mechanism were *exactly* at the claim (module notes of
    :func:`_claim_other_tail`), predicted with a normal approximation of the
    rank × count test at its share of α; it gets :data:`CLAIM_RANK_WEIGHT` of α.
    Rank 0 (the most extreme draw) gets the rest: it certifies the largest ε a
    sample of this size can show (disjoint tails, deterministic outputs). Only
    ``(ε, δ, n, α)`` enter, so the choice costs no α.

    Returns
    -------
    ranks, weights
        Ranks (ascending, distinct) and their shares of α (summing to 1).
    """
    n = check_positive_int("n", n)
    if n == 1:
        return np.array([0]), np.array([1.0])
    a = alpha * CLAIM_RANK_WEIGHT / tests
    p0 = np.geomspace(1.0 / (n + 1), 0.5, 400)
    p1 = np.asarray(_claim_other_tail(float(epsilon), float(delta), p0))
    num = np.maximum(p1 - delta, 1e-300)
    with np.errstate(divide="ignore", over="ignore"):
        sd = np.sqrt((1.0 - p0) / (n * p0) + p1 * (1.0 - p1) / (n * num * num))
        pred = np.log(num / p0) - special.ndtri(1.0 - a) * sd
    best = int(np.clip(np.round(p0[int(np.argmax(pred))] * (n + 1) - 1.0), 0, n - 1))
    if best == 0:
        return np.array([0]), np.array([1.0])
    return np.array([0, best]), np.array([1.0 - CLAIM_RANK_WEIGHT, CLAIM_RANK_WEIGHT])


def epsilon_from_order_statistics(s0: np.ndarray, s1: np.ndarray, *, delta: float,
                                  alpha: float, ranks: np.ndarray | None = None,
                                  weights: np.ndarray | None = None,
                                  claim_epsilon: float | None = None,
                                  oriented: bool = False) -> dict:
    """Certified ε lower bound from two independent score samples (module notes).

    Parameters
    ----------
    s0, s1
        Scores of draws from M(D) and M(D′) (never used to choose anything else).
    delta
        δ of the (ε, δ) statement tested.
    alpha
        Overall error, split over ranks × tests (weighted Bonferroni).
    ranks, weights
        Ranks to use and their shares of α (default: :func:`claim_ranks` when
        ``claim_epsilon`` is given, else :func:`order_statistic_ranks` of the
        smaller sample with equal shares).
    claim_epsilon
        The claimed ε: fixes the ranks from the claim (:func:`claim_ranks`).
    oriented
        The score grows with evidence for D′ (an exact likelihood ratio): only the
        two tests that can show it are run (upper tail of D′ over D, lower tail of
        D over D′), each with twice the α share. Otherwise all four tail × order tests.

    Returns
    -------
    dict
        ``epsilon_lb`` and the winning test (tail, order, rank, threshold, counts,
        its α), with the rank set and weights used.
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
    n_tests = 2 if oriented else 4
    if ranks is None:
        if claim_epsilon is not None:
            ranks, weights = claim_ranks(claim_epsilon, delta, min(n0, n1), alpha,
                                         tests=n_tests)
        else:
            ranks = order_statistic_ranks(min(n0, n1))
    ranks = np.asarray(ranks, dtype=int)
    weights = (np.full(ranks.size, 1.0 / ranks.size) if weights is None
               else np.asarray(weights, dtype=float))
    if weights.shape != ranks.shape or np.any(weights < 0) or abs(weights.sum() - 1) > 1e-9:
        raise ValueError("weights must be non-negative, one per rank, summing to 1")
    rows = []  # (order, tail, rank, threshold, hits, n_reference, n_count, a)
    # (reference sample: supplies thresholds and the Beta law; other: the count)
    tests = ((("D'>D", s0, s1), "upper"), (("D>D'", s1, s0), "lower")) if oriented else \
        tuple((o, t) for o in (("D'>D", s0, s1), ("D>D'", s1, s0)) for t in ("upper", "lower"))
    for (order, ref, other), tail in tests:
        m, k = ref.size, other.size
        keep = (ranks < m) & (weights > 0)
        r, w = ranks[keep], weights[keep]
        if tail == "upper":
            t = ref[m - 1 - r]  # r reference draws lie strictly above t (no ties)
            hits = k - np.searchsorted(other, t, side="right")
        else:
            t = ref[r]
            hits = np.searchsorted(other, t, side="left")
        for j in range(r.size):
            rows.append((order, tail, int(r[j]), float(t[j]), int(hits[j]), m, k,
                         alpha * w[j] / n_tests))
    best: dict = {"epsilon_lb": 0.0}
    if rows:
        cols = list(zip(*rows, strict=True))
        rk, ht, nr, nk, aa = (np.asarray(cols[i], dtype=float) for i in (2, 4, 5, 6, 7))
        # Screen every test on a coarse grid (each value is itself a valid bound), then
        # refine the best few: reporting the largest of valid bounds at their own α is valid.
        coarse = np.atleast_1d(epsilon_lower_bound_rank_count(rk, nr, ht, nk, delta, aa,
                                                              grid=_COARSE_GRID, tol=1e-4))
        top = np.argsort(-coarse, kind="stable")[:_REFINE]
        top = top[coarse[top] > 0]
        fine = np.atleast_1d(epsilon_lower_bound_rank_count(rk[top], nr[top], ht[top], nk[top],
                                                            delta, aa[top])) \
            if top.size else np.zeros(0)
        eps = coarse.copy()
        eps[top] = np.maximum(fine, coarse[top])
        j = int(np.argmax(eps))
        if eps[j] > 0:
            order, tail, rank, thr, hits, m, k, a = rows[j]
            best = {"epsilon_lb": float(eps[j]), "order": order, "tail": tail, "rank": rank,
                    "threshold": thr, "count": hits, "n_reference": m, "n_count": k,
                    "alpha_test": a}
    best.update(ranks=ranks.tolist(), weights=weights.tolist(), tests_per_rank=n_tests,
                bound="exact rank x count test (one test per event, whole alpha share)")
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
    if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
        raise ValueError("non-finite bound: the score samples contain non-finite values")
    oriented = fn.name in ORIENTED_SCORES
    res = epsilon_from_order_statistics(s0, s1, delta=del_c, alpha=alpha, claim_epsilon=eps_c,
                                        oriented=oriented)
    best = res["epsilon_lb"]
    # the ceiling: every rank's test with a perfect distinguisher (all n draws beyond it)
    r_all, w_all = np.asarray(res["ranks"]), np.asarray(res["weights"])
    ceiling = float(np.max(epsilon_lower_bound_rank_count(
        r_all, n, n, n, del_c, alpha * w_all / res["tests_per_rank"])))
    verdict = bound_verdict(best, ceiling, eps_c)
    details = {"score": fn.name, "n_per_side": n, "n_fit": 0, "n_cert": n,
               "thresholds": "order statistics at fixed ranks", "test": res,
               "delta": del_c, "claimed_epsilon": eps_c, "claim": claim.as_dict(),  # type: ignore
               "claim_conversion": conversion, "alpha_spent": alpha,
               "epsilon_ceiling": ceiling, "witness": witness_dict(d0, d1),
               "seconds": {"total": time.perf_counter() - t_start}, "note": NO_PROOF_NOTE}
    return AuditResult(auditor="blackbox", verdict=verdict, guarantee=Guarantee.LOWER_BOUND,
                       estimate=best, claimed=eps_c, quantity="epsilon", alpha=alpha,
                       details=details)
