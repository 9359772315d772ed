"""Anytime-valid sequential black-box auditing by betting (catalogue A.8).

The fixed-n auditor (:func:`~dpgp_audit.audit.blackbox.audit_blackbox`) must be
told n in advance and always spends it. :func:`audit_sequential` draws samples
in rounds and stops as soon as a violation is certified, or when a sample or
time budget is spent, with type-I error at most α **at any stopping time**.

The test (testing by betting; Shafer 2021, Waudby-Smith & Ramdas 2024; for DP
auditing González, Dulce-Rubio, Ramdas & Ribero, NeurIPS 2025, and Kutta,
Dunsche, Wei & Zikas 2026)
---------------------------------------------------------------------------
(ε′, δ)-DP forces, for every event S and both orders of a neighbour pair,
``P_{D′}(S) ≤ e^{ε′} P_D(S) + δ``. Draw X_i ~ M(D), Y_i ~ M(D′) independently
and set ``Z_i = 1[Y_i ∈ S_i] − e^{ε′} 1[X_i ∈ S_i] − δ``; under H₀(ε′) every
``E[Z_i | past] ≤ 0`` as long as the event S_i is chosen from earlier draws
only (it is *predictable*). The gambler's wealth

    K_t(ε′) = Π_{i ≤ t} (1 + λ_i Z_i),   0 ≤ λ_i < 1/(e^{ε′} + δ),

is then a non-negative supermartingale with K_0 = 1, and by Ville's inequality
``P(∃t: K_t(ε′) ≥ 1/α) ≤ α``. An average of such wealth processes with fixed
weights is again one, so several pairs, tails and orders are combined by
averaging their wealth (no Bonferroni split of α; the price is log of the
number of components in wealth).

Indicators take only four joint values, so a round of m draws updates the log
wealth from four counts; the bet λ and the event are refitted between rounds
from all earlier draws (plug-in Kelly betting on pessimistic rate estimates,
half-Kelly beside it as a hedge). Round 0 only fits the score (as the fixed-n
auditor's fitting split); every later round both bets and refits.

Candidate scores (issue 15 §1)
------------------------------
With ``score="auto"`` each pair's score is chosen between rounds among the main
score (the exact ``lr-gaussian`` one or a learned categorical/identity/lda score)
and the fixed-n auditor's extra candidates (atoms, quadratic, kde, classifier, a
learned score beside ``lr-gaussian``; :data:`~dpgp_audit.audit.blackbox.scores.CANDIDATE_RULE`),
fitted on one half of the earlier rounds' raw draws and judged on the other half
by the expected log growth of their best bet at the claimed ε. The main score
wins ties. Candidates are refitted only when the raw draws seen have grown fourfold
(issue 20 §2): at about 256, 1 024, 4 096, 16 384 and finally :data:`CANDIDATE_ROWS`
(32 768) draws per side; between refits the candidate that won the last judging (if any) is
judged again every round against the main score on the draws held out from it (the
others wait for the next refit); after the last refit the choice is frozen. The
gradient-boosted classifier, the audit's most expensive step, is trained on a bounded
subsample
(:data:`CLASSIFIER_ROWS` per side, refitted only when that subsample grows, so twice)
and judged on at most twice as many held-out draws. A learned main
score is refitted each round on every raw draw kept, up to :data:`MAIN_FIT_ROWS`
per side, then frozen; from then on only scores travel back from the workers.
Choice, events and bets use earlier rounds only, so anytime validity is untouched.

The certified ε bound (a confidence sequence)
---------------------------------------------
The wealth is tracked on a grid of ε′ that contains the claimed ε. A grid value
is *rejected* once its mixture wealth has reached 1/α. The reported bound is the
largest grid value g such that every grid value ≤ g has been rejected (the
monotone closure). If the true ε*(S) of the events bet on is at most g₀ (the
smallest grid value ≥ ε*), reporting more than ε* needs g₀ rejected, an event of
probability ≤ α: the bound is valid simultaneously over all stopping times.
VIOLATION is reported exactly when the bound reaches the claimed ε.

Stopping inside a round
-----------------------
Ville's inequality holds at every draw, not only at round ends. Each round is
drawn in pieces (eighths of the scheduled round size, but at least
:data:`MIN_PIECE` draws unless the mechanism declares an expensive draw; each piece
with its own child generator) with the round's events and bets, and the mixture
wealth is checked after every piece: a violation stops the audit within an eighth
of a round of the draw at which the evidence sufficed once rounds are large, so the
doubling schedule costs at most about 12 % of the draws instead of up to 2×
(``benchmarks/bench_sequential.py``). Small rounds are one piece: a ``sample``
call has a fixed cost that, for cheap draws, is worth hundreds of draws.

The time guard and reproducibility (issue 20 §1)
------------------------------------------------
The audit is budgeted in draws (``max_n``), never in seconds: round sizes follow a
fixed doubling schedule truncated at ``max_n``, the pieces are cut from the
scheduled size, and chunk boundaries depend on the piece size and the declared
cost per draw only, so a seed gives the same result on any machine, quiet or busy.
A wall-clock **time guard** (``time_guard_s``, or a shared ``guard``) may stop the
run after a piece: the result is then ``INCONCLUSIVE`` (unless a violation was
already certified) with ``details["time_guard"]`` saying where it fired and how many
draws it had, never a silently weaker "no evidence". The report records the draws
spent, so rerunning with ``max_n`` set to that number repeats the run bit for bit.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.audit.blackbox.executors import MIN_DRAW_S, as_batching
from dpgp_audit.audit.blackbox.fixed import _claim_epsilon_delta
from dpgp_audit.audit.blackbox.sampling import ChunkedSampler, child_rngs, split_sizes
from dpgp_audit.audit.blackbox.scores import (
    CANDIDATE_RULE,
    ClassifierScore,
    IdentityScore,
    LinearScore,
    fit_candidates,
    fixed_score,
    learn_score,
)
from dpgp_audit.audit.blackbox.twosample import (
    NO_PROOF_NOTE,
    tail_counts,
    witness_dict,
)
from dpgp_audit.audit.guard import TimeGuard, check_guard_s
from dpgp_audit.audit.result import AuditResult, Guarantee, Verdict
from dpgp_audit.audit.stats import cp_lower_raw, cp_upper_raw
from dpgp_audit.dataset import Dataset

__all__ = [
    "BET_FRACTIONS",
    "CANDIDATE_ROWS",
    "CLASSIFIER_ROWS",
    "EVIDENCE_KEEP",
    "EVIDENCE_WARMUP",
    "EVIDENCE_WEIGHT",
    "MAIN_FIT_ROWS",
    "MIN_PIECE",
    "SequentialPlan",
    "audit_sequential",
    "epsilon_grid",
    "evidence_warmup",
    "expected_log_growth",
    "log_wealth_increment",
    "sequential_ceiling",
]

#: Bet fractions u tried by the plug-in Kelly rule; the bet is λ = u / (e^ε′ + δ).
BET_FRACTIONS = np.concatenate([np.geomspace(1e-4, 0.5, 40), 1.0 - np.geomspace(0.45, 1e-3, 25)])
_COARSE_FRACTIONS = BET_FRACTIONS[::4]  # the short-listing of thresholds uses every fourth
_FIT_LEVEL = 0.2  # one-sided level of the pessimistic rates used to choose events and bets
_TAILS = ("upper", "lower")
#: Raw draws per side on which the extra candidate scores are fitted and chosen, at most
#: (half of them fit, half judge); they are refitted whenever the draws seen have grown
#: fourfold, then frozen. A power of two, so that the last refit falls at the end of a
#: doubling round (32 768 draws per side with the default first round) instead of one
#: round later on 45 000 held-out draws (issue 20 §2); about the fixed-n auditor's
#: :data:`~dpgp_audit.audit.blackbox.scores.EXTRA_RAW_ROWS` per half.
CANDIDATE_ROWS = 32_768
#: The classifier candidate (gradient-boosted trees, the one expensive fit) is trained on
#: at most this many rows per side, and judged on at most twice this many held-out rows.
CLASSIFIER_ROWS = 1_024
_CANDIDATE_GROWTH = 4  # refit the candidates when the raw draws have grown this much
_MIN_CANDIDATE_ROWS = 200  # ... and never on fewer (scores._MIN_EXTRA_ROWS)
#: Raw draws per side on which a learned main score (LDA, categorical) is refitted each
#: round, at most; then it is frozen and only scores travel back from the workers.
MAIN_FIT_ROWS = 32_768
#: Fewest draws in a piece of a round (a round smaller than eight of them is drawn in fewer
#: pieces), unless the mechanism declares a draw cost of at least
#: :data:`~dpgp_audit.audit.blackbox.executors.MIN_DRAW_S` (then every round has eight).
MIN_PIECE = 1_024
_THRESHOLDS = 120  # tail masses per tail and sample in the threshold grid
_MERGE_MAX = 4_096  # pooled scores up to which thresholds are read from a sorted merge
_PREFILTER = 24  # thresholds per tail and order whose exact pessimistic growth is computed
_Z_FIT = 0.8416212335729143  # standard normal quantile at 1 - _FIT_LEVEL (the proxy's z)
_DIRECTIONS = ("D'>D", "D>D'")
#: Evidence pairs (``evidence=``): the share of the wealth average they hold together, the
#: draws per side every one of them gets before its wealth decides (or a 32nd of the cap,
#: if less), and how many of them may keep drawing after that (those whose wealth or
#: predicted growth is positive).
EVIDENCE_WEIGHT = 0.25
EVIDENCE_WARMUP = 4_096
EVIDENCE_KEEP = 2


@dataclass(frozen=True)
class SequentialPlan:
    """Round schedule of a sequential audit.

    ``first`` draws per side in the fitting round 0, then rounds of
    ``first, 2·first, 4·first, …`` per side, the last one truncated at ``max_n``.
    Score, events and bets are refitted between rounds only; within a round the
    wealth is checked after each piece: ``pieces`` equal pieces of the untruncated
    round size, but none smaller than ``min_piece`` draws, so the audit stops within
    an eighth of a large round of the first certified violation instead of at the
    round's end.
    """

    max_n: int
    first: int
    pieces: int = 8
    min_piece: int = 1

    def rounds(self) -> list[tuple[int, int]]:
        """``(scheduled, drawn)`` draws per side of every round (round 0 fits only)."""
        out = [(self.first, min(self.first, self.max_n))]
        total, size = out[0][1], self.first
        while total < self.max_n:
            step = min(size, self.max_n - total)
            out.append((size, step))
            total += step
            size *= 2
        return out

    def sizes(self) -> list[int]:
        """Per-side draws of every round (round 0 fits only)."""
        return [drawn for _, drawn in self.rounds()]

    def piece_sizes(self, scheduled: int, drawn: int) -> list[int]:
        """Pieces of a round: ``max(ceil(scheduled / pieces), min_piece)`` draws, cut at ``drawn``.

        A function of the schedule only, so a run truncated by ``max_n`` at a piece
        boundary draws exactly what the longer run drew up to there.
        """
        return split_sizes(drawn, max(-(-scheduled // self.pieces), self.min_piece))


def evidence_warmup(max_n: int) -> int:
    """Draws per side every evidence pair gets before its wealth decides (``evidence=``).

    :data:`EVIDENCE_WARMUP`, or a 32nd of the cap ``max_n`` if that is less: a slow
    mechanism's small cap is not spent on every pair.
    """
    return min(EVIDENCE_WARMUP, max_n // 32)


def default_first_round(max_n: int) -> int:
    """Fitting-round size: 16 draws per side (fewer if ``max_n`` is tiny).

    Small, so that gross bugs stop after a few dozen draws; later rounds double,
    bets are only placed where earlier draws predict growth, and a learned score
    is refitted after each round, so little is lost on hard bugs.
    """
    return int(max(1, min(max_n // 2, 16)))


def epsilon_grid(epsilon: float, top: float | None = None) -> np.ndarray:
    """Grid of ε′ on which the confidence sequence is tracked; contains 0 and ``epsilon``."""
    top = max(4.0 * epsilon, epsilon + 8.0) if top is None else top
    below = np.linspace(0.0, epsilon, 41)
    above = epsilon + np.geomspace(1e-3, top - epsilon, 80) if top > epsilon else np.array([])
    return np.unique(np.concatenate([below, above]))


def _jump_values(eps: np.ndarray | float, delta: float) -> tuple:
    """The four values of Z = a − e^ε′ b − δ for (a, b) = (1,0), (0,1), (1,1), (0,0)."""
    e = np.exp(eps)
    return 1.0 - delta, -(e + delta), 1.0 - e - delta, -delta + 0 * e


def expected_log_growth(p1: np.ndarray | float, p0: np.ndarray | float, u: np.ndarray | float,
                        eps: np.ndarray | float, delta: float) -> np.ndarray:
    """E log(1 + λZ) for independent indicators a ~ Bern(p1), b ~ Bern(p0), λ = u/(e^ε′+δ).

    Broadcasts over all arguments; the Kelly criterion maximises it over ``u``.
    """
    p1, p0, u = (np.asarray(v, dtype=float) for v in (p1, p0, u))
    lam = u / (np.exp(eps) + delta)
    z10, z01, z11, z00 = _jump_values(eps, delta)
    with np.errstate(divide="ignore"):
        return (p1 * (1 - p0) * np.log1p(lam * z10) + p0 * (1 - p1) * np.log1p(lam * z01)
                + p1 * p0 * np.log1p(lam * z11) + (1 - p1) * (1 - p0) * np.log1p(lam * z00))


def log_wealth_increment(counts: tuple[int, int, int, int], u: np.ndarray,
                         eps: np.ndarray, delta: float) -> np.ndarray:
    """Log-wealth Π (1 + λZ_i) over draws with joint counts (n10, n01, n11, n00), λ = u/(e^ε′+δ)."""
    n10, n01, n11, n00 = counts
    lam = np.asarray(u, dtype=float) / (np.exp(eps) + delta)
    z10, z01, z11, z00 = _jump_values(eps, delta)
    out = np.zeros(np.broadcast(lam, np.asarray(eps)).shape)
    for n, z in ((n10, z10), (n01, z01), (n11, z11), (n00, z00)):
        if n:
            out = out + n * np.log1p(lam * z)
    return out


def _bet_logs(bets: list[dict], grid: np.ndarray, delta: float) -> tuple[np.ndarray, ...]:
    """``log(1 + λz)`` for the four jumps z, one row per bet and fraction (Kelly, half Kelly).

    A round's bets are fixed, so these are computed once per round and every piece only
    weighs them by its joint counts (:func:`_wealth_steps`; issue 20 §2). The values are
    those :func:`log_wealth_increment` computes.
    """
    if not bets:
        return ()
    u = np.array([frac * b["u"] for b in bets for frac in (1.0, 0.5)])
    lam = u / (np.exp(grid) + delta)
    return tuple(np.log1p(lam * z) for z in _jump_values(grid, delta))


def _wealth_steps(counts: np.ndarray, logs: tuple[np.ndarray, ...]) -> np.ndarray:
    """Log-wealth increments of rows of joint counts (n10, n01, n11, n00) from :func:`_bet_logs`.

    Row by row the arithmetic of :func:`log_wealth_increment` (a zero count adds nothing:
    every log here is finite, as the bet fractions stay below 1).
    """
    out = np.zeros(logs[0].shape)
    for col, lg in enumerate(logs):
        n = counts[:, col]
        if np.any(n):
            out = out + n[:, None] * lg
    return out


def sequential_ceiling(n_bet: int, alpha: float, delta: float, components: int = 1) -> float:
    """Largest ε′ any distinguisher could reject after ``n_bet`` betting draws per side.

    Each wealth process grows by at most ``log(1 + u_max(1 − δ)/(e^ε′ + δ))`` per draw,
    and their average never exceeds the largest of them, so solving
    ``n_bet · that = log(components/α)`` with ``components=1`` gives a true ceiling:
    no ε′ above it can be rejected, however many of the audit's processes grow together.
    (``components=k``: the lower ceiling of a perfect distinguisher on one process of
    ``k`` while the others stay flat.)
    """
    if n_bet <= 0:
        return 0.0
    u = float(BET_FRACTIONS.max())
    r = math.expm1(math.log(components / alpha) / n_bet)
    x = u * (1.0 - delta) / r - delta
    return math.log(x) if x > 1.0 else 0.0


def _merge_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sorted union (with repeats) of two sorted arrays (timsort merges the two runs)."""
    if a.size == 0:
        return b
    if b.size == 0:
        return a
    return np.sort(np.concatenate([a, b]), kind="stable")


def _distinct(s: np.ndarray) -> np.ndarray:
    """The distinct values of a sorted array."""
    if s.size == 0:
        return s
    keep = np.empty(s.size, dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def _candidate_thresholds(s0: np.ndarray, s1: np.ndarray, c_min: float,
                          size: int = _THRESHOLDS) -> np.ndarray:
    """Candidate thresholds from two *sorted* score samples, without merging them.

    Few distinct values (at most ``2 * size`` in all): every gap between them, plus the
    ends. Otherwise the pooled inverted-CDF quantiles at tail masses from ``c_min`` to ½
    in both tails — the rule of
    :func:`~dpgp_audit.audit.blackbox.twosample.threshold_grid` — found by a binary search
    in the two sorted arrays (:func:`_kth_of_two`) instead of a merge or a partition.
    """
    # a sorted subsample with more distinct values than the limit settles it without a scan
    few = _distinct(s0[:: max(1, s0.size // (8 * size))]).size <= 2 * size
    u0 = _distinct(s0) if few else s0
    if few and u0.size <= 2 * size:
        uniq = np.union1d(u0, _distinct(s1))
        if uniq.size <= 2 * size:
            mids = (uniq[:-1] + uniq[1:]) / 2 if uniq.size > 1 else uniq
            return np.unique(np.concatenate([[uniq[0] - 1.0], mids, [uniq[-1] + 1.0]]))
    m = s0.size + s1.size
    ranks = _threshold_ranks(max(c_min, 1.0 / m), m, size)
    if m <= _MERGE_MAX:  # small samples: merging is cheaper than the binary search
        return np.unique(np.sort(np.concatenate([s0, s1]))[ranks])
    return np.unique(_kth_of_two(s0, s1, ranks))


@functools.lru_cache(maxsize=256)
def _threshold_ranks(start: float, m: int, size: int) -> np.ndarray:
    """0-based pooled ranks of the inverted-CDF quantiles at tail masses ``start`` .. ½, both tails.

    A pure function of its arguments, computed once per round size (issue 20 §2), read-only.
    """
    masses = np.geomspace(start, 0.5, size)
    q = np.concatenate([masses, 1.0 - masses])
    ranks = np.clip(np.ceil(q * m).astype(np.int64) - 1, 0, m - 1)  # inverted CDF
    ranks.setflags(write=False)
    return ranks


def _kth_of_two(a: np.ndarray, b: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """The ``ranks``-th smallest values (0-based) of the union of two sorted arrays.

    A vectorised binary search for how many of the first ``rank + 1`` values come from
    ``a`` (O(log n) per rank, no merge): the pooled quantiles of the two samples.
    """
    na, nb = a.size, b.size
    take = ranks + 1  # values taken from the union
    lo = np.maximum(0, take - nb)
    hi = np.minimum(take, na)
    ia_max, ib_max = max(na - 1, 0), max(nb - 1, 0)
    last = take - 1
    open_ = lo < hi
    while open_.any():
        i = (lo + hi) >> 1
        # too few from a if a[i] < b[j - 1], j = take - i (more of a belongs to the first
        # take values). Where the search is open, lo <= i < hi <= min(take, na) and
        # i >= take - nb, so 0 <= i < na and 0 <= j - 1 < nb: no index needs a clamp there;
        # elsewhere the comparison is masked (an index of -1 or na is only read, clamped)
        more = a[np.minimum(i, ia_max)] < b[np.minimum(last - i, ib_max)]
        more &= open_
        lo = np.where(more, i + 1, lo)
        hi = np.where(open_ & ~more, i, hi)
        open_ = lo < hi
    i, j = lo, take - lo
    from_a = np.where(i > 0, a[np.minimum(np.maximum(i - 1, 0), ia_max)], -np.inf)
    from_b = np.where(j > 0, b[np.minimum(np.maximum(j - 1, 0), ib_max)], -np.inf)
    return np.maximum(from_a, from_b)


@dataclass
class _Stream:
    """One neighbour pair: its score, sampler and every scored draw seen so far.

    While not frozen, the raw draws are kept: a learned main score is refitted after
    every round on all of them (at most :data:`MAIN_FIT_ROWS` rows or ``raw_cap``
    values per side), so it is predictable: the draws of a round are scored with a
    score fitted on earlier rounds only. The extra candidates are refitted whenever
    the rows have grown :data:`_CANDIDATE_GROWTH`-fold, up to :data:`CANDIDATE_ROWS`.
    Once neither refits any more the score is frozen, the raw draws are dropped and
    only scores travel back from workers.
    """

    label: str
    d0: Dataset
    d1: Dataset
    sampler: ChunkedSampler
    score_kind: str
    raw_cap: int
    score: object = None
    score_name: str = ""
    frozen: bool = False
    fixed: object = None  # the exact model-based score, kept as the main score
    cand_rng: np.random.Generator | None = None  # None: no (more) extra candidates
    eps_c: float = 0.0
    delta: float = 0.0
    candidate_names: list = field(default_factory=list)
    next_choice: int = _MIN_CANDIDATE_ROWS  # rows per side at which candidates are refitted
    candidate_won: bool = False  # the current score is an extra candidate
    winner: int | None = None  # index in ``cands`` of the candidate that won the last judging
    cands: list = field(default_factory=list)  # the candidates of the latest refit
    cand_half: int = 0  # their fitting half: draws [0, cand_half) per side
    cache: dict = field(default_factory=dict)  # the classifier, reused while its rows stay
    X0: np.ndarray | None = None
    X1: np.ndarray | None = None
    pending: list = field(default_factory=list)  # raw pieces of the current round
    pending_scores: list = field(default_factory=list)  # its scored pieces
    s0: np.ndarray = field(default_factory=lambda: np.empty(0))  # sorted past scores, M(D)
    s1: np.ndarray = field(default_factory=lambda: np.empty(0))
    ranked: tuple | None = None  # (s0, s1, events): the events of these very arrays
    judged: dict = field(default_factory=dict)  # candidate index -> (rows scored, c0, c1)
    main_sorted: tuple | None = None  # (rows, s0, s1) of a main score that is not refitted

    def events(self) -> list[dict]:
        """:func:`_select_events` on the current past scores, computed once per pair of arrays."""
        if self.ranked is None or self.ranked[0] is not self.s0 or self.ranked[1] is not self.s1:
            self.ranked = (self.s0, self.s1,
                           _select_events(self.s0, self.s1, self.eps_c, self.delta))
        return self.ranked[2]

    def draw(self, rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Scores of ``size`` fresh draws per side (score fitted on earlier rounds).

        The draws are kept until :meth:`update` adds them at the round's end.
        """
        if self.frozen:
            s0, s1 = self.sampler.scores(rng, size, self.score)  # type: ignore[arg-type]
            self.pending_scores.append((s0, s1))
            return s0, s1
        X0, X1 = self.sampler.raw(rng, size)  # finite: checked by contract.checked_sample
        self.pending.append((X0, X1))  # joined to X0, X1 by update() at the round's end
        if self.score is None:
            return np.empty(0), np.empty(0)
        s0 = np.asarray(self.score(X0), dtype=float)  # type: ignore[operator]
        s1 = np.asarray(self.score(X1), dtype=float)  # type: ignore[operator]
        self.pending_scores.append((s0, s1))
        return s0, s1

    def _merge_pending_scores(self) -> None:
        if self.pending_scores:
            new0 = np.sort(np.concatenate([a for a, _ in self.pending_scores]))
            new1 = np.sort(np.concatenate([b for _, b in self.pending_scores]))
            self.s0, self.s1 = _merge_sorted(self.s0, new0), _merge_sorted(self.s1, new1)
        self.pending_scores = []

    def _freeze(self) -> None:
        self.frozen, self.X0, self.X1, self.pending = True, None, None, []

    def update(self) -> None:
        """Add the round's draws; refit a learned main score and, on schedule, the candidates.

        While candidates are open, every round re-judges the fitted ones against the main
        score on every draw held out from them (their fitting half grows only at a refit),
        so a candidate that wins by chance at one refit does not bet until the next.
        """
        if self.frozen:
            self._merge_pending_scores()
            return
        if self.pending:
            P0 = [X for X, _ in self.pending]
            P1 = [X for _, X in self.pending]
            self.X0 = np.concatenate(P0 if self.X0 is None else [self.X0, *P0])
            self.X1 = np.concatenate(P1 if self.X1 is None else [self.X1, *P1])
            self.pending = []
        assert self.X0 is not None and self.X1 is not None
        rows = self.X0.shape[0]
        self.pending_scores = []
        if self.fixed is not None:
            fn, name = self.fixed, self.fixed.name  # type: ignore[attr-defined]
        else:
            fn, name = learn_score(self.X0, self.X1, self.score_kind)
        self.score, self.score_name, self.candidate_won = fn, name, False
        self.s0, self.s1 = self._main_scores(fn, self.fixed is not None or name == "identity")
        if self.cand_rng is not None and self.fixed is None and name == "categorical":
            self.cand_rng = None  # discrete outputs: categorical is already the full LR
        if self.cand_rng is not None:
            refit = rows >= self.next_choice
            if refit:
                self._fit_candidates(rows)
                if rows >= CANDIDATE_ROWS:
                    self.cand_rng = None  # the last refit: the choice below is final
                else:
                    self.next_choice = min(_CANDIDATE_GROWTH * rows, CANDIDATE_ROWS)
            self._judge_candidates(rows, everyone=refit)
        if self.cand_rng is None and (self.candidate_won or self.fixed is not None
                                      or rows >= MAIN_FIT_ROWS or self.score_name == "identity"):
            self._freeze()  # nothing will be refitted any more
        elif self.X0.size >= self.raw_cap:  # memory stays bounded
            self.cand_rng = None
            self._freeze()

    def _main_scores(self, fn: Callable, kept: bool) -> tuple[np.ndarray, np.ndarray]:
        """Sorted main scores of every raw draw kept.

        A score that is never refitted (``kept``: the exact model-based one, the identity)
        scores only the rows new since the last round, merged into its sorted scores of
        the earlier ones (issue 20 §2); a learned one rescores every row.
        """
        assert self.X0 is not None and self.X1 is not None
        rows = self.X0.shape[0]
        if kept and self.main_sorted is not None and self.main_sorted[0] <= rows:
            done, m0, m1 = self.main_sorted
            if done < rows:
                m0 = _merge_sorted(m0, np.sort(np.asarray(fn(self.X0[done:]), dtype=float)))
                m1 = _merge_sorted(m1, np.sort(np.asarray(fn(self.X1[done:]), dtype=float)))
        else:
            m0 = np.sort(np.asarray(fn(self.X0), dtype=float))
            m1 = np.sort(np.asarray(fn(self.X1), dtype=float))
        self.main_sorted = (rows, m0, m1) if kept else None
        return m0, m1

    def _fit_candidates(self, rows: int) -> None:
        """Refit the extra candidates on the first half of the first ``CANDIDATE_ROWS`` draws."""
        assert self.X0 is not None and self.X1 is not None and self.cand_rng is not None
        k = min(rows, CANDIDATE_ROWS)
        cands, _, _ = fit_candidates(self.X0[:k], self.X1[:k], self.score_name,
                                     child_rngs(self.cand_rng, 1)[0],
                                     classifier_rows=CLASSIFIER_ROWS, cache=self.cache)
        self.cand_rng = child_rngs(self.cand_rng, 2)[1]
        if isinstance(self.fixed, LinearScore) and np.size(self.fixed.w) == 1:
            # a scalar output's exact linear LR score is a monotone map of the output: the
            # identity candidate would bet on the very same events (issue 20 §2)
            cands = [c for c in cands if not isinstance(c, IdentityScore)]
        self.cands, self.cand_half, self.judged = cands, k // 2, {}
        self.candidate_names = [getattr(c, "name", "candidate") for c in cands]

    def _judge_candidates(self, rows: int, everyone: bool = True) -> None:
        """Keep the main score or switch to the fitted candidate whose best bet grows most.

        Each candidate is judged, like the main score, by the expected log growth at the
        claimed ε of its best event, on its scores of every draw after its fitting half
        (the classifier on at most ``2 * CLASSIFIER_ROWS`` of them: its scoring is the
        costly part); a winning candidate bets with those scores as its past.

        ``everyone`` (the rounds of a refit): every candidate is judged. Between refits
        (issue 20 §2) only the candidate that won the last judging is judged again against
        the main score — so a chance winner still loses its bets as soon as the new draws
        speak against it — and the others wait for the next refit: their scores of the
        draws of these rounds would be thrown away by it (those draws join the next
        fitting half).
        """
        if not self.cands:
            return
        assert self.X0 is not None and self.X1 is not None
        h = self.cand_half
        best = self.events()[0]["growth"] if self.s0.size and self.s1.size else -math.inf
        judged = range(len(self.cands)) if everyone else \
            ([] if self.winner is None else [self.winner])
        self.winner = None
        for i in judged:
            c = self.cands[i]
            m = h + 2 * CLASSIFIER_ROWS if isinstance(c, ClassifierScore) else rows
            c0, c1 = self._candidate_scores(i, c, h, min(m, rows))
            if c0.size == 0 or c1.size == 0:
                continue
            ev = _select_events(c0, c1, self.eps_c, self.delta)
            g = float(ev[0]["growth"])
            if g > best:  # strictly: the main score wins ties
                best, self.score, self.s0, self.s1 = g, c, c0, c1
                self.ranked = (c0, c1, ev)
                self.score_name = str(getattr(c, "name", "candidate"))
                self.candidate_won, self.winner = True, i

    def _candidate_scores(self, i: int, c: object, h: int,
                          stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Sorted scores of candidate ``i`` on the held-out draws ``[h, stop)`` per side.

        Kept between rounds (the fitting half ``h`` changes only at a refit, which clears
        them): each round scores only the draws that are new since the last (issue 20 §2);
        a row's score does not depend on the rows scored with it, so the sorted arrays are
        those of scoring ``[h, stop)`` at once.
        """
        assert self.X0 is not None and self.X1 is not None
        done, c0, c1 = self.judged.get(i, (h, np.empty(0), np.empty(0)))
        if stop > done:
            n0 = np.sort(np.asarray(c(self.X0[done:stop]), dtype=float))  # type: ignore[operator]
            n1 = np.sort(np.asarray(c(self.X1[done:stop]), dtype=float))  # type: ignore[operator]
            c0, c1 = _merge_sorted(c0, n0), _merge_sorted(c1, n1)
            self.judged[i] = (stop, c0, c1)
        return c0, c1


def _best_growth(s0: np.ndarray, s1: np.ndarray, eps_c: float, delta: float) -> float:
    """Expected log growth at the claimed ε of the best event of a score (earlier draws)."""
    if s0.size == 0 or s1.size == 0:
        return -math.inf
    return float(_select_events(s0, s1, eps_c, delta)[0]["growth"])


def _choose_bets(st: _Stream, eps_c: float, grid: np.ndarray, delta: float,
                 tests: int) -> list[dict]:
    """The bets of :func:`_bets_from_scores` on a stream's past scores.

    The events of the stream's current scores are taken from :meth:`_Stream.events`,
    so scores already ranked when the candidates were judged are not ranked again.
    """
    return _bets_from_scores(st.s0, st.s1, eps_c, grid, delta, tests,
                             events=st.events() if st.s0.size and st.s1.size else None)


def _approx_bounds(k: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Wilson-score one-sided bounds at level :data:`_FIT_LEVEL` (a cheap stand-in for CP)."""
    z2 = _Z_FIT * _Z_FIT
    p = np.asarray(k, dtype=float) / n
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = _Z_FIT * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def _growth_logs(eps: np.ndarray | float, delta: float,
                 fractions: np.ndarray) -> tuple[np.ndarray, ...]:
    """The four ``log(1 + λz)`` terms of :func:`expected_log_growth`, λ = u/(e^ε′+δ).

    They depend on ε′, δ and the bet fractions only, not on the rates, so one audit
    computes them once per grid (issue 20 §2); the arithmetic is that of
    :func:`expected_log_growth`, so the growth is the same to the last bit.
    """
    key = (np.asarray(eps, dtype=float).tobytes(), np.shape(eps), float(delta),
           fractions.tobytes(), fractions.shape)
    hit = _LOG_CACHE.get(key)
    if hit is None:
        lam = np.asarray(fractions, dtype=float) / (np.exp(eps) + delta)
        with np.errstate(divide="ignore"):
            hit = tuple(np.log1p(lam * z) for z in _jump_values(eps, delta))
        if len(_LOG_CACHE) >= 64:
            _LOG_CACHE.clear()
        _LOG_CACHE[key] = hit
    return hit


_LOG_CACHE: dict = {}


def _growth(p1: np.ndarray | float, p0: np.ndarray | float, logs: tuple) -> np.ndarray:
    """:func:`expected_log_growth` from precomputed :func:`_growth_logs` (same operations)."""
    l10, l01, l11, l00 = logs
    return (p1 * (1 - p0) * l10 + p0 * (1 - p1) * l01
            + p1 * p0 * l11 + (1 - p1) * (1 - p0) * l00)


def _growth_inplace(p1: np.ndarray | float, p0: np.ndarray | float,
                    logs: tuple) -> np.ndarray:
    """:func:`_growth`, its sums taken in place (issue 20 §2).

    The same operations on every element in the same order, so the same values to the last
    bit; the first product must already have the full broadcast shape.
    """
    l10, l01, l11, l00 = logs
    q1, q0 = 1 - p1, 1 - p0
    out = (p1 * q0) * l10
    out += (p0 * q1) * l01
    out += (p1 * p0) * l11
    out += (q1 * q0) * l00
    return out


def _max_growth(p1: np.ndarray, p0: np.ndarray, logs: tuple) -> np.ndarray:
    """``_growth(p1[:, None], p0[:, None], logs).max(axis=1)`` for 1-D rates (issue 20 §2).

    Laid out with the bet fractions first, so that the maximum runs across long rows instead
    of along short ones (the values are those of :func:`_growth`).
    """
    return _growth_inplace(p1, p0, tuple(lg[:, None] for lg in logs)).max(axis=0)


def _select_events(s0: np.ndarray, s1: np.ndarray, eps_c: float,
                   delta: float) -> list[dict]:
    """The best threshold of every tail × order on sorted past scores, best first.

    For each tail × order, the threshold maximising the expected log growth at the
    claimed ε under pessimistic (one-sided 20 % Clopper–Pearson) rates. The exact
    Clopper–Pearson growth is evaluated on the :data:`_PREFILTER` thresholds whose growth
    under cheap Wilson-score bounds (on every fourth bet fraction) is largest (issue 20 §2:
    the inverse beta function at every threshold was most of a round's bookkeeping); ties
    go to the larger raw separation. Each event keeps its pessimistic rates (``"_p"``)
    for the bet fractions of :func:`_bets_from_scores`.
    """
    nf = s0.size
    cand = _candidate_thresholds(s0, s1, max(1.0 / nf, 1e-7))
    a0, b0 = tail_counts(s0, cand)
    a1, b1 = tail_counts(s1, cand)
    coarse = _growth_logs(eps_c, delta, _COARSE_FRACTIONS)
    # one call for the four tails x samples (the operations are elementwise, so the
    # values are those of four separate calls)
    lo_all, hi_all = _approx_bounds(np.stack([a0, a1, b0, b1]), nf)
    specs = []
    for t, tail in enumerate(_TAILS):
        k0, k1 = (a0, a1) if tail == "upper" else (b0, b1)
        i0, i1 = 2 * t, 2 * t + 1
        for direction in _DIRECTIONS:
            if direction == "D'>D":
                specs.append((tail, direction, k1, k0, lo_all[i1], hi_all[i0]))
            else:
                specs.append((tail, direction, k0, k1, lo_all[i0], hi_all[i1]))
    # the growth itself under the cheap bounds, on a coarse grid of bet fractions
    proxies = _max_growth(np.concatenate([s[4] for s in specs]),
                          np.concatenate([s[5] for s in specs]), coarse).reshape(len(specs), -1)
    combos, tops, nums, dens = [], [], [], []
    for (tail, direction, kn, kd, _, _), proxy in zip(specs, proxies, strict=True):
        sep = (kn - kd) / nf
        top = np.lexsort((-sep, -proxy))[:_PREFILTER]
        combos.append((tail, direction, sep))
        tops.append(top)
        nums.append(kn[top])
        dens.append(kd[top])
    # the exact pessimistic rates and growth of every short-listed event, in one call each
    sizes = [t.size for t in tops]
    # Clopper-Pearson at the fitting level, unchecked: the counts are valid by construction
    # (elementwise, so on the distinct counts only: about a third of them, issue 20 §2)
    k_num, i_num = np.unique(np.concatenate(nums).astype(float), return_inverse=True)
    k_den, i_den = np.unique(np.concatenate(dens).astype(float), return_inverse=True)
    p_num = cp_lower_raw(k_num, float(nf), _FIT_LEVEL)[i_num.ravel()]
    p_den = cp_upper_raw(k_den, float(nf), _FIT_LEVEL)[i_den.ravel()]
    g_all = _max_growth(p_num, p_den, _growth_logs(eps_c, delta, BET_FRACTIONS))
    out = []
    start = 0
    for (tail, direction, sep), top, m in zip(combos, tops, sizes, strict=True):
        g = g_all[start:start + m]
        i = int(np.lexsort((-sep[top], -g))[0])
        j = int(top[i])
        out.append({"tail": tail, "direction": direction, "threshold": float(cand[j]),
                    "growth": float(g[i]), "separation": float(sep[j]),
                    "_p": (float(p_num[start + i]), float(p_den[start + i]))})
        start += m
    out.sort(key=lambda c: (-c["growth"], -c["separation"]))
    return out


def _bets_from_scores(s0: np.ndarray, s1: np.ndarray, eps_c: float, grid: np.ndarray,
                      delta: float, tests: int, events: list[dict] | None = None) -> list[dict]:
    """Predictable choice of events and bets from earlier draws only (plug-in Kelly).

    ``s0`` and ``s1`` are sorted. The ``tests`` best events of :func:`_select_events`
    (or of ``events``, its result on these scores computed before), then the
    growth-optimal bet fraction at every ε′ of the grid (0 where no bet is expected to
    grow). Everything here depends on earlier draws only.
    """
    if events is None:
        events = _select_events(s0, s1, eps_c, delta)
    logs = _growth_logs(grid[:, None], delta, BET_FRACTIONS[None, :])
    out = []
    for ev in events[:tests]:
        c = {k: v for k, v in ev.items() if k != "_p"}
        pn_c, pd_c = ev["_p"]
        gu = _growth_inplace(pn_c, pd_c, logs)
        best = gu.argmax(axis=1)
        c["u"] = np.where(gu[np.arange(grid.size), best] > 0, BET_FRACTIONS[best], 0.0)
        out.append(c)
    return out


def _piece_steps(s0: np.ndarray, s1: np.ndarray, bets: list[dict],
                 logs: tuple[np.ndarray, ...]) -> np.ndarray:
    """Log-wealth increments of a piece's paired draws for a round's bets (Kelly, half Kelly)."""
    counts = np.array([_joint_counts(s0, s1, bet) for bet in bets])
    return _wealth_steps(np.repeat(counts, 2, axis=0), logs)


def _joint_counts(s0: np.ndarray, s1: np.ndarray, bet: dict) -> tuple[int, int, int, int]:
    """Counts of (a, b) ∈ {(1,0), (0,1), (1,1), (0,0)}, draws paired by position."""
    t = bet["threshold"]
    h0 = s0 > t if bet["tail"] == "upper" else s0 < t
    h1 = s1 > t if bet["tail"] == "upper" else s1 < t
    a, b = (h1, h0) if bet["direction"] == "D'>D" else (h0, h1)
    n11 = int(np.count_nonzero(a & b))
    n10 = int(np.count_nonzero(a)) - n11
    n01 = int(np.count_nonzero(b)) - n11
    return n10, n01, n11, a.size - n10 - n01 - n11


def _pairs(pairs: Sequence[object]) -> list[tuple[Dataset, Dataset, str]]:
    out = []
    for i, p in enumerate(pairs):
        if isinstance(p, tuple):
            out.append((p[0], p[1], p[2] if len(p) > 2 else f"pair {i}"))
        else:
            out.append((p.d0, p.d1, str(getattr(p, "label", f"pair {i}"))))  # type: ignore
    if not out:
        raise ValueError("pairs must contain at least one neighbour pair")
    return out


@dataclass
class _Evidence:
    """Pairs ranked by the wealth they win, not by a pilot (A.8, ``evidence=``).

    Every evidence pair bets from the first round, as the confirmed pairs do, with a
    share of :data:`EVIDENCE_WEIGHT` of the wealth average in all (the confirmed pairs
    keep the rest). Each draws :data:`EVIDENCE_WARMUP` per side in the doubling rounds (a
    32nd of the cap ``max_n`` if that is less, so that a small cap, a slow mechanism's,
    is not spent on every pair). After that, before every round, at most
    :data:`EVIDENCE_KEEP` of them draw on: those whose log-wealth at the claim is above 0
    or whose earlier draws predict growth, the largest wealth first. A pair left out then
    stops for good, and the wealth its processes hold passes to the processes of the pairs
    that draw on, in proportion to theirs, at every ε′ of the grid: the evidence share
    is one fund whose capital follows the pairs that win. If none draws on, every pair
    keeps what it holds.

    Validity does not depend on the allocation: who draws, and where the fund's capital
    goes, is decided from earlier rounds only, so the fund is one betting strategy, a
    nonnegative supermartingale under the claim, and so is its fixed-weight average with
    the confirmed pairs' processes (Ville's inequality at any stopping time).
    """

    streams: list[_Stream]
    tests: int
    round_rngs: list[np.random.Generator]
    warmup: int = EVIDENCE_WARMUP
    log_w: np.ndarray | None = None  # log-wealth of every process (rows) at every ε′
    log_cap: np.ndarray | None = None  # log of the capital each process bets with
    drawn: list[int] = field(default_factory=list)
    active: list[int] = field(default_factory=list)
    stopped: set = field(default_factory=set)  # pairs left out after the warm-up
    last_bets: list[list[dict]] = field(default_factory=list)
    piece_rngs: dict = field(default_factory=dict)
    steps: dict = field(default_factory=dict)
    bets: dict = field(default_factory=dict)
    rounds_active: list[int] = field(default_factory=list)

    @classmethod
    def open(cls, pairs: Sequence[object], rng: np.random.Generator, rounds: int, tests: int,
             max_n: int, first: int, opener: Callable) -> _Evidence | None:
        """Round 0 of every evidence pair (``None`` when there are none)."""
        if not pairs:
            return None
        triples = _pairs(pairs)
        fit_parent, round_parent = child_rngs(child_rngs(rng, 1)[0], 2)
        streams = [opener(d0, d1, label, r) for (d0, d1, label), r
                   in zip(triples, child_rngs(fit_parent, len(triples)), strict=True)]
        out = cls(streams, tests, child_rngs(round_parent, rounds),
                  warmup=evidence_warmup(max_n))
        out.drawn = [first] * len(streams)  # the fitting round
        out.last_bets = [[] for _ in streams]
        return out

    def _rows(self, j: int) -> slice:
        return slice(j * 2 * self.tests, (j + 1) * 2 * self.tests)

    def start_round(self, k_round: int, pieces: int, eps_c: float, grid: np.ndarray,
                    delta: float, i_claim: int) -> None:
        """Choose who draws this round (from earlier rounds only), their bets and generators."""
        n = len(self.streams)
        if self.log_w is None:
            self.log_w = np.zeros((n * self.tests * 2, grid.size))
            self.log_cap = np.full(self.log_w.shape,
                                   math.log(EVIDENCE_WEIGHT) - math.log(self.log_w.shape[0]))
        self.active = self._who_draws(i_claim)
        self.rounds_active.append(len(self.active))
        kids = child_rngs(self.round_rngs[k_round], n)  # one per pair, drawing or not
        self.piece_rngs = {j: child_rngs(kids[j], pieces) for j in self.active}
        self.bets = {j: _choose_bets(self.streams[j], eps_c, grid, delta, self.tests)
                     for j in self.active}
        self.steps = {j: _bet_logs(b, grid, delta) for j, b in self.bets.items()}
        for j, b in self.bets.items():
            self.last_bets[j] = b

    def _growth(self, j: int) -> float:
        st = self.streams[j]
        return float(st.events()[0]["growth"]) if st.s0.size and st.s1.size else -math.inf

    def _wealth(self, i_claim: int) -> np.ndarray:
        assert self.log_w is not None
        return self.log_w.reshape(len(self.streams), -1, self.log_w.shape[1])[:, :, i_claim] \
            .max(axis=1)

    def _who_draws(self, i_claim: int) -> list[int]:
        warm = [j for j, n in enumerate(self.drawn) if n < self.warmup]
        if warm:
            return warm
        wealth = self._wealth(i_claim)
        open_ = [j for j in range(len(self.streams)) if j not in self.stopped]
        growth = {j: self._growth(j) for j in open_}
        keen = [j for j in open_ if wealth[j] > 0 or growth[j] > 0]
        keen.sort(key=lambda j: (-wealth[j], -growth[j], j))
        keep = sorted(keen[:EVIDENCE_KEEP])
        if keep:
            self._pass_on([j for j in open_ if j not in keep], keep)
        return keep

    def _pass_on(self, leaving: list[int], staying: list[int]) -> None:
        """The wealth of ``leaving``'s processes to ``staying``'s, in proportion, at every ε′."""
        assert self.log_w is not None and self.log_cap is not None
        if not leaving:
            return
        value = self.log_cap + self.log_w  # log of what each process holds
        out = np.concatenate([np.arange(self.log_w.shape[0])[self._rows(j)] for j in leaving])
        into = np.concatenate([np.arange(self.log_w.shape[0])[self._rows(j)] for j in staying])
        moved = np.logaddexp.reduce(value[out], axis=0)
        held = np.logaddexp.reduce(value[into], axis=0)
        self.log_cap[into] += np.logaddexp(0.0, moved - held)  # × (1 + moved / held)
        self.log_cap[out] = -math.inf
        self.stopped.update(leaving)
        for j in leaving:  # they never draw again: their raw draws and scores can go
            self.streams[j]._freeze()
            self.streams[j].s0 = self.streams[j].s1 = np.empty(0)

    def piece(self, j_piece: int, m: int) -> np.ndarray:
        """Draw piece ``j_piece`` (``m`` per side) for the drawing pairs; the fund's log value."""
        assert self.log_w is not None and self.log_cap is not None
        for j in self.active:
            st = self.streams[j]
            s0, s1 = st.draw(self.piece_rngs[j][j_piece], m)
            self.drawn[j] += m
            if self.bets[j]:
                inc = _piece_steps(s0, s1, self.bets[j], self.steps[j])
                start = self._rows(j).start
                self.log_w[start:start + inc.shape[0]] += inc
        return np.logaddexp.reduce(self.log_cap + self.log_w, axis=0)

    def update(self) -> None:
        """Refit the scores of the pairs that drew this round."""
        for j in self.active:
            self.streams[j].update()

    def best(self, i_claim: int) -> tuple[int, float]:
        """The evidence pair whose wealth at the claim grew most, and its log-wealth."""
        wealth = self._wealth(i_claim) if self.log_w is not None else np.zeros(len(self.streams))
        j = int(np.argmax(wealth))
        return j, float(wealth[j])

    def summary(self) -> dict:
        """What the evidence pairs drew (reported in ``details["evidence"]``)."""
        far = sorted(range(len(self.streams)), key=lambda j: -self.drawn[j])[:EVIDENCE_KEEP]
        return {"pairs": len(self.streams), "weight": EVIDENCE_WEIGHT,
                "warmup_per_side": self.warmup, "keep": EVIDENCE_KEEP,
                "draws_per_side": int(sum(self.drawn)),
                "drawing_per_round": list(self.rounds_active),
                "most_drawn": [{"label": self.streams[j].label, "n_per_side": self.drawn[j]}
                               for j in far]}


def _declared_expensive(cost_per_draw_s: float | None) -> bool:
    """A declared draw cost at which chunks are spread and every round has eight pieces."""
    return cost_per_draw_s is not None and cost_per_draw_s >= MIN_DRAW_S


def audit_sequential(mechanism: object, pairs: Sequence[object], *, max_n: int,
                     rng: np.random.Generator, alpha: float = 0.05,
                     claim: object | None = None, time_guard_s: float | None = None,
                     guard: Callable[[], bool] | None = None,
                     score: str | Sequence[str] = "auto", executor: object | None = None,
                     first_round: int | None = None, tests: int = 2,
                     delta: float | None = None, chunk_size: int | None = None,
                     max_fit_values: int = 2**22, extra_scores: bool = True,
                     cost_per_draw_s: float | None = None,
                     clock: Callable[[], float] = time.perf_counter,
                     budget_s: float | None = None,
                     evidence: Sequence[object] = ()) -> AuditResult:
    """A.8: sequential black-box audit with an anytime-valid certified ε lower bound.

    Parameters
    ----------
    mechanism
        Anything with ``sample(data, n, rng)`` (and ``claim`` unless given).
    pairs
        Neighbour pairs: :class:`~dpgp_audit.audit.neighbours.NeighbourPair` objects
        or ``(d0, d1[, label])`` tuples. All are sampled every round; their wealth
        processes are averaged, so α is not split over them.
    max_n
        Largest number of draws per side *and pair* (fitting round included): the
        audit's budget, in draws.
    rng
        Generator; every round and pair gets a spawned child.
    alpha
        Type-I error, valid at any stopping time (Ville's inequality).
    claim
        Defaults to ``mechanism.claim``; GDP / zCDP claims are compared at ``delta``.
    time_guard_s
        Optional wall-clock guard in seconds (module docstring): checked after every
        piece; when it fires the run stops, ``INCONCLUSIVE`` unless a violation was
        certified, with ``details["time_guard"]``. ``None``: no guard.
    guard
        A shared guard instead (a zero-argument callable, true once it has fired, e.g.
        the runner's :class:`~dpgp_audit.audit.guard.TimeGuard`).
    score
        As for the fixed-n auditor (``"auto"``, ``"lr-gaussian"``, ``"lda"``, …), or one
        name per pair.
    executor, chunk_size
        Sampling executor and chunk size, as for the fixed-n auditor. Without
        ``chunk_size`` a piece is one chunk per side (up to a memory cap), or four when
        the mechanism declares an expensive draw (``cost_per_draw_s``), so that they can
        be spread.
    first_round
        Draws per side in the fitting round 0 (default :func:`default_first_round`).
    tests
        Events (tail × order) bet on per pair and round, chosen on earlier draws.
    delta
        δ for GDP / zCDP claims.
    max_fit_values
        Raw output values kept per side for refitting a learned score; the score
        is frozen once they are reached.
    extra_scores
        With ``score="auto"``: choose each pair's score between rounds among the
        main score and the extra candidates (module docstring, "Candidate scores");
        ``False``: the main score only.
    cost_per_draw_s
        The mechanism's declared seconds per draw (default: its ``declared_cost_per_draw_s``
        attribute, if any). A declared cost of at least
        :data:`~dpgp_audit.audit.blackbox.executors.MIN_DRAW_S` cuts every round into
        eight pieces of four chunks; otherwise small rounds are one piece of one chunk.
        Declared, never measured: the draws are a function of the inputs only.
    clock
        Zero-argument function returning seconds, for the time guard (injectable for
        tests).
    budget_s
        Former name of ``time_guard_s`` (a guard now, not a budget); kept for callers.
    evidence
        More pairs, ranked by the wealth they win rather than by a pilot
        (:class:`_Evidence`): each bets from the first round with a share of
        :data:`EVIDENCE_WEIGHT` of the average in all, draws :data:`EVIDENCE_WARMUP` per
        side (a 32nd of ``max_n`` if less), and then draws on only while its wealth or
        predicted growth is among the :data:`EVIDENCE_KEEP` best. ``()`` (default):
        ``pairs`` alone, whose draws, bets and verdict are then exactly those of a run
        without this argument.

    Returns
    -------
    AuditResult
        ``auditor="blackbox"``, guarantee ``LOWER_BOUND`` (anytime-valid, see
        ``details["guarantee_note"]``); ``estimate`` is the certified ε lower bound;
        details record the rounds, the draws spent, why the run stopped and the
        witness pair (the pair whose wealth grew most).
    """
    claim = mechanism.claim if claim is None else claim  # type: ignore[attr-defined]
    eps_c, del_c, conversion = _claim_epsilon_delta(claim, delta)
    rng = check_rng(rng)
    max_n = check_positive_int("max_n", max_n)
    if max_n < 2:
        raise ValueError(f"max_n must be >= 2 (one fitting and one betting draw), got {max_n}")
    if not (0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    if tests not in (1, 2, 3, 4):
        raise ValueError(f"tests must be 1..4, got {tests!r}")
    if budget_s is not None:
        time_guard_s = check_guard_s("budget_s", budget_s)
    own_guard = TimeGuard(check_guard_s("time_guard_s", time_guard_s), clock=clock)
    if not hasattr(mechanism, "sample"):
        raise TypeError("mechanism must implement sample(data, n, rng)")
    if cost_per_draw_s is None:  # a declaration only (never a measured cost: issue 20 §1)
        cost_per_draw_s = getattr(mechanism, "declared_cost_per_draw_s", None)
    expensive = _declared_expensive(cost_per_draw_s)
    first = default_first_round(max_n) if first_round is None else \
        check_positive_int("first_round", first_round)
    plan = SequentialPlan(max_n=max_n, first=min(first, max_n - 1),
                          min_piece=1 if expensive else MIN_PIECE)
    sizes = plan.sizes()
    triples = _pairs(pairs)
    kinds = [score] * len(triples) if isinstance(score, str) else [str(k) for k in score]
    if len(kinds) != len(triples):
        raise ValueError(f"score must be one name or one per pair ({len(triples)}), "
                         f"got {len(kinds)}")
    executor = as_batching(executor)  # shared by every pair: one timed chunk in all
    grid = epsilon_grid(eps_c)
    i_claim = int(np.searchsorted(grid, eps_c))
    rng_fit, *rng_rounds = child_rngs(rng, len(sizes))
    fit_rngs = child_rngs(rng_fit, len(triples))
    # a new child: the sampling streams above are those of the main score alone
    cand_rngs = child_rngs(child_rngs(rng, len(sizes) + 1)[-1], len(triples))

    def fired() -> bool:
        return own_guard.expired() or (guard is not None and bool(guard()))

    # chunks: a function of the piece size and the declared cost only (never of timings)
    min_chunk, per_call = (1, 4) if expensive else (2**62, 1)

    # Round 0: fit the score of every pair (these draws are never bet on).
    chunk0 = 50_000 if chunk_size is None else check_positive_int("chunk_size", chunk_size)

    def open_stream(d0: Dataset, d1: Dataset, label: str, r: np.random.Generator,
                    rc: np.random.Generator | None, kind: str) -> _Stream:
        fixed = fixed_score(mechanism, d0, d1, kind)
        st = _Stream(label, d0, d1, ChunkedSampler(mechanism, d0, d1, chunk0, executor,
                                                   fixed_chunk=chunk_size is not None,
                                                   min_chunk=min_chunk, chunks_per_call=per_call),
                     score_kind=kind, raw_cap=max_fit_values, fixed=fixed,
                     cand_rng=rc if kind == "auto" and extra_scores else None,
                     eps_c=eps_c, delta=del_c)
        if fixed is not None:
            st.score, st.score_name = fixed, fixed.name
            st.frozen = st.cand_rng is None
        st.draw(r, sizes[0])
        st.update()
        if chunk_size is None:
            dim = int(np.size(mechanism.mean(d0))) if fixed is not None else \
                int(np.prod(np.shape(st.X0)[1:], dtype=int)) if st.X0 is not None else 1
            st.sampler.chunk = int(min(200_000, max(10_000, 2**21 // max(dim, 1))))
        return st

    streams = [open_stream(d0, d1, label, r, rc, kind) for (d0, d1, label), r, rc, kind
               in zip(triples, fit_rngs, cand_rngs, kinds, strict=True)]
    # evidence pairs: a later spawn of rng, so the streams above draw what they drew without
    ev = _Evidence.open(evidence, rng, len(sizes), tests, max_n, sizes[0],
                        lambda d0, d1, label, r: open_stream(d0, d1, label, r, None,
                                                             kinds[0] if len(set(kinds)) == 1
                                                             else "auto"))
    n_drawn = sizes[0]

    comps = len(streams) * tests * 2  # pairs × events × {Kelly, half Kelly}
    log_w = np.zeros((comps, grid.size))
    # the weight of each process in the average: equal, or beside evidence pairs their share
    log_weight = -math.log(comps) if ev is None else \
        math.log1p(-EVIDENCE_WEIGHT) - math.log(comps)
    mix = np.full(grid.size, -math.inf)
    rejected = np.zeros(grid.size, dtype=bool)
    rounds: list[dict] = []
    stopped = "max_n"
    log_thr = math.log(1.0 / alpha)
    last_bets: list[list[dict]] = [[] for _ in streams]
    for k_round, ((scheduled, size), r_round) in enumerate(
            zip(plan.rounds()[1:], rng_rounds, strict=True), start=1):
        if fired():
            stopped = "time_guard"
            break
        t_round = clock()
        # events and bets are fixed for the whole round, from earlier rounds' draws only
        bets = [_choose_bets(st, eps_c, grid, del_c, tests) for st in streams]
        last_bets = bets
        steps = [_bet_logs(b, grid, del_c) for b in bets]  # log(1 + λz) of every bet, once
        pieces = plan.piece_sizes(scheduled, size)
        # the first len(pieces) children of a spawn are the same however many are spawned
        piece_rngs = [child_rngs(r, len(pieces)) for r in child_rngs(r_round, len(streams))]
        if ev is not None:
            ev.start_round(k_round, len(pieces), eps_c, grid, del_c, i_claim)
        drawn = 0
        for j, m in enumerate(pieces):
            c = 0
            for k, st in enumerate(streams):
                s0, s1 = st.draw(piece_rngs[k][j], m)
                if bets[k]:
                    inc = _piece_steps(s0, s1, bets[k], steps[k])
                    log_w[c:c + inc.shape[0]] += inc
                    c += inc.shape[0]
            drawn += m
            mix = np.logaddexp.reduce(log_w, axis=0) + log_weight
            if ev is not None:
                mix = np.logaddexp(mix, ev.piece(j, m))
            rejected |= mix >= log_thr  # Ville: checking after every piece costs nothing
            if rejected[: i_claim + 1].all():
                stopped = "violation"
                break
            if j + 1 < len(pieces) and fired():
                stopped = "time_guard"
                break
        n_drawn += drawn
        rounds.append({"n_per_side": n_drawn, "draws": drawn,
                       "log_wealth_at_claim": float(mix[i_claim]), "seconds": clock() - t_round})
        if stopped in ("violation", "time_guard"):
            break
        if k_round < len(sizes) - 1:  # nothing is refitted after the last round
            for st in streams:
                st.update()
            if ev is not None:
                ev.update()

    # a rerun capped at the draws made repeats them; with evidence pairs only the same cap
    # does, since their warm-up is a share of the cap
    again = n_drawn if ev is None else max_n
    closed = np.cumprod(rejected).astype(bool)
    bound = float(grid[np.flatnonzero(closed)[-1]]) if closed[0] else 0.0
    n_bet = n_drawn - sizes[0]
    # an upper bound on what any distinguisher could reject: every process may grow at once
    # (several pairs and events can expose one leak), and then the average is the largest
    ceiling = sequential_ceiling(n_bet, alpha, del_c)
    guard_note = None
    if closed[i_claim]:
        verdict = Verdict.VIOLATION
    elif stopped == "time_guard":
        verdict = Verdict.INCONCLUSIVE  # the guard is not evidence: never "no evidence"
        shared = isinstance(guard, TimeGuard) and guard.expired()
        guard_note = (guard if shared else own_guard).record(  # type: ignore[union-attr]
            "blackbox", f"the sequential rounds (round {len(rounds)})", draws=n_drawn,
            rerun=f"max_n={again} (--samples {again}) to repeat exactly these draws")
    elif ceiling <= eps_c:
        verdict = Verdict.INCONCLUSIVE
    else:
        verdict = Verdict.NO_EVIDENCE
    per_stream = log_w.reshape(len(streams), -1, grid.size)[:, :, i_claim].max(axis=1)
    w = int(np.argmax(per_stream))
    wit = streams[w]
    def reported(bets: list[dict]) -> list[dict]:  # without the bet fractions
        return [{k: v for k, v in b.items() if k != "u"} for b in bets]

    bets_out = reported(last_bets[w])
    if ev is not None and ev.streams:
        j, best = ev.best(i_claim)
        if best > per_stream[w]:  # an evidence pair grew most: it is the witness
            wit, bets_out = ev.streams[j], reported(ev.last_bets[j])
    extra = kinds[0] == "auto" and extra_scores if len(set(kinds)) == 1 else False
    details = {
        "mode": "sequential", "score": wit.score_name,
        "scores": {s.label: s.score_name for s in streams},
        "candidate_names": list(wit.candidate_names),
        "candidate_rule": CANDIDATE_RULE if extra else None,
        "n_per_side": n_drawn,
        "n_fit": sizes[0], "n_bet": n_bet, "max_n": max_n,
        "time_guard_s": own_guard.limit_s,
        "stopped": stopped, "rounds": rounds, "pairs": len(streams),
        "pair_labels": [s.label for s in streams], "witness_label": wit.label,
        "witness": {**witness_dict(wit.d0, wit.d1), "label": wit.label},
        "delta": del_c, "claimed_epsilon": eps_c, "claim": claim.as_dict(),  # type: ignore
        "claim_conversion": conversion, "tests": bets_out, "components": comps,
        "log_wealth_at_claim": float(rounds[-1]["log_wealth_at_claim"]) if rounds else 0.0,
        "log_threshold": log_thr, "epsilon_ceiling": ceiling, "alpha_spent": alpha,
        "n_cert": n_bet, "cost_per_draw_s": cost_per_draw_s,
        "guarantee_note": ("anytime-valid: the bound and the verdict hold with confidence "
                           "1 - alpha at whatever round the audit stopped (Ville's inequality)"),
        "reproduce": {"max_n": again, "first_round": plan.first},
        "seconds": {"total": own_guard.elapsed()},
        "note": NO_PROOF_NOTE,
    }
    if ev is not None:
        details["evidence"] = ev.summary()
    if guard_note is not None:
        details["time_guard"] = guard_note
    return AuditResult(auditor="blackbox", verdict=verdict, guarantee=Guarantee.LOWER_BOUND,
                       estimate=bound, claimed=eps_c, quantity="epsilon", alpha=alpha,
                       details=details)
