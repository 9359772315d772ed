"""A.7 — the precision auditor: is floating-point rounding visible next to the noise?

A privacy proof is about real numbers. A float release ``fl(q(D) + noise)`` lives on a
grid whose spacing grows with |q(D)|: when the other targets are huge (legal for an
outputs-only claim with no bound on |y|), the spacing can exceed the noise sd, the
release takes a handful of distinct values, and a neighbour that pushes the exact value
across a rounding boundary moves the whole output distribution (Mironov 2012, §3–4, for
Laplace; Jin et al., S&P 2022, for Gaussian noise and DP-SGD).

:func:`audit_precision` works from samples only (a user's mechanism needs nothing but
``claim`` and ``sample``):

1. **Candidates.** Neighbouring pairs at adversarially large values that the claim
   allows (:func:`precision_pairs`): at the declared domain bound B (``claim.domain``,
   else ``mechanism.domain``; for whole rows the relation's own bound), or, without a
   domain, at each of the scales 1e15–1e19 (the mechanism may refuse: that is recorded
   as harmless). Per magnitude, two *aligned* pairs (equal powers of two whose exact sum
   lands half a float spacing from a rounding boundary, so that the move of one target
   by d crosses it) and random ones (magnitudes in [B/2, B], random signs: the exact
   release falls at random positions between grid points). Generated neighbour pairs can
   be added.
2. **Rounding visible?** For each candidate, a pilot of ``pilot`` releases per side gives
   per coordinate the ratio ``np.spacing(max |release|) / sd`` (the sd from ``cov`` when
   the mechanism exposes it, else from the pilot) and the fraction of distinct values.
   Rounding is *visible* when the ratio exceeds :data:`VISIBLE_RATIO`, or when fewer than
   :data:`MIN_DISTINCT` of the pilot values are distinct in some coordinate while the
   ratio is above :data:`SPACING_FLOOR`.
3. **Certified verdict.** The visible pairs are ranked by how well the pilot already
   separates them (total variation of the releases as categories when they are few,
   else a Kolmogorov–Smirnov distance), taken round robin over the magnitudes, and the
   top ``n_pairs`` are handed on fresh samples to the sequential black-box auditor (A.8:
   one anytime-valid audit over them, at most ``n`` draws per side and pair, stopping at
   the first certified violation) or, in fixed mode, to the split auditor (A.3, exactly
   ``n`` per side, α split over them). The score is learned (categorical or LDA), not
   the stated Gaussian model: rounding is where the float release departs from it. A
   certified ε above the claim is a ``VIOLATION`` with its witness pair.

Every step is budgeted in draws (issue 20 §1): the candidates are a fixed list, each is
piloted with ``pilot`` draws per side, and each certification draws at most ``n`` per side
and pair. A time guard (``guard``) may stop the screen or the certification; the result
is then ``INCONCLUSIVE`` and says so.

The pilot only chooses pairs; only the black-box step certifies, so the verdict keeps the
black-box guarantee (valid with confidence 1 − α, no assumptions). Discrete releases
(integer outputs) are out of scope: rounding applies to continuous outputs.

**Float supports at ordinary inputs** (issue 20 §4, ``support=True``). Rounding need not be
coarse to leak: where the noise cancels most of the query, ``fl(q + Y)`` is exact
(Sterbenz) and lies on the float grid of q, so below ½ the outputs of ``fl(1 + Y)`` are
multiples of 2⁻⁵³ while those of ``fl(0 + Y) = Y`` mostly are not — a set of outputs one
neighbour produces and the other never does (Mironov 2012, §3; any textbook Laplace or
Gaussian sampler). With ``support=True``:

4. **Candidates** also include :func:`support_pairs` (the query exactly 0 against one
   target moved, and a sum crossing a power of two), and every probe records how strongly
   its pilot says that one side's outputs reach a float category (binary exponent ×
   trailing zero bits of the significand, per coordinate or pooled over the coordinates)
   that the other side's never produced, in bits
   (:func:`~dpgp_audit.audit.blackbox.scores.float_support_evidence`). The support pairs'
   pilot is :func:`support_pilot_draws` per side (an eighth of the certification draws,
   at least :data:`SUPPORT_PILOT`). A pair is *support-visible* at :data:`SUPPORT_MIN_BITS`
   or more.
5. **Certified verdict.** For the :data:`SUPPORT_PAIRS` most support-visible pairs,
   ``min(n, SUPPORT_MAX_N)`` fresh draws per side: a quarter fits the float-support score
   (:class:`~dpgp_audit.audit.blackbox.scores.FloatSupportScore`, half of it builds the
   category table, per coordinate and pooled over the coordinates, half chooses for each
   direction the table and threshold with the larger predicted bound), three quarters certify
   the two events (one per direction) with Clopper–Pearson bounds
   (:func:`~dpgp_audit.audit.stats.epsilon_lower_bound`), Bonferroni over both directions
   and over every pair tested. An output that is *impossible* under the neighbour shows up
   as 0 hits there, so the certified ε grows like ``log(n p / ln(4J/α))`` (p: the rate
   under the other side, J: the tests): "never seen in n draws" is only ever used as a
   Clopper–Pearson bound, never as a proof of impossibility.

The support test is on by default (``support=True``, and on the default path of
``audit_mechanism`` and ``make audit``): the kit's continuous releases are rounded to a
public power-of-two grid (:mod:`dpgp_audit.privacy.float_release`) and its secure samplers
are exact, so none of them shows the leak; a textbook float sampler adding ``rng.normal``
or ``rng.laplace`` noise does (docs/auditors.md).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng, one_line
from dpgp_audit.audit.blackbox.scores import (
    fit_float_support,
    float_support_evidence,
    float_support_reading,
)
from dpgp_audit.audit.guard import TimeGuard, check_guard_s
from dpgp_audit.audit.neighbours import NeighbourPair, domain_labels, domain_y_bound, on_labels
from dpgp_audit.audit.result import AuditResult, Guarantee, Verdict
from dpgp_audit.audit.stats import epsilon_lower_bound
from dpgp_audit.contract import ContractError, checked_sample, same_release_shape
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.claims import Neighbour, NeighbourRelation

__all__ = ["CERTIFY_PAIRS", "HUGE_SCALES", "MIN_DISTINCT", "SPACING_FLOOR", "SUPPORT_MAX_N",
           "SUPPORT_MIN_BITS", "SUPPORT_MIN_N", "SUPPORT_PAIRS", "SUPPORT_PILOT",
           "SUPPORT_PILOT_SHARE",
           "VISIBLE_RATIO", "PrecisionProbe",
           "PrecisionScreen", "audit_precision", "certify_precision", "certify_support",
           "precision_pairs", "probe_pair", "screen_precision", "support_pairs",
           "support_pilot_draws"]

#: Target magnitudes tried when the mechanism declares no public domain (issue 10).
HUGE_SCALES: tuple[float, ...] = (1e15, 1e16, 1e17, 1e18, 1e19)
#: Rounding is visible when float spacing at the release exceeds this share of the noise sd.
VISIBLE_RATIO = 1e-3
#: ... or when fewer than this share of the pilot values of a coordinate are distinct
#: while the spacing is at least :data:`SPACING_FLOOR` of the sd (a release with discrete
#: values by design, such as a selected index, has repeats without any rounding).
MIN_DISTINCT = 0.9
SPACING_FLOOR = 1e-9
#: Visible pairs handed on to certification (step 3), at most.
CERTIFY_PAIRS = 5
#: A pair is *support-visible* when its pilot gives this many bits of evidence that one
#: side reaches a float category the other never does (the secure samplers' pilots stayed
#: below 6 bits in development; a textbook sampler at q = 0 against q = 1 gives 13–20).
#: Only which pairs are tested depends on it, never a verdict.
SUPPORT_MIN_BITS = 8.0
#: At most this many support-visible pairs are certified (the most visible first).
SUPPORT_PAIRS = 2
#: Pilot releases per side of each support pair, at least (whatever the rounding pilot):
#: the support evidence needs a few hundred draws to reach :data:`SUPPORT_MIN_BITS` (in
#: development the textbook samplers were chosen on 5 of 5 seeds at 200 draws per side
#: for the Laplace ones, 4 of 5 for Box–Muller, and on 0–2 of 5 at 8–32 draws).
SUPPORT_PILOT = 200
#: ... and at least this share of the draws its certification may use
#: (:func:`support_pilot_draws`: 2 500 per side at the 20 000 of ``make audit MECH=…``, the
#: :data:`SUPPORT_PILOT` floor at the smaller allowances of ``make audit`` (all)). A leak on
#: rare outputs needs it: the textbook SVT Alg. 3 (``planted/statdp-svt3``) releases a value
#: below ½ on about 0.5 % of draws, one a pilot of 200 rarely holds; in development its
#: exposing pair reached :data:`SUPPORT_MIN_BITS` on 3 of 20 seeds at 200 draws per side
#: and on 20 of 20 at 2 500 (pooled over coordinates, :func:`float_support_evidence`).
SUPPORT_PILOT_SHARE = 8
#: The support test runs only where it may draw at least this many per side and pair:
#: below, even a textbook sampler is certified inconsistently against a claim of 1 (in
#: development: Laplace 0.8–2.1 at 500 draws, 2.8–3.0 at 1 000; Box–Muller at most 0.6 at
#: 1 000, 1.4–1.9 at 2 000), and its pilot would cost more than its certification.
SUPPORT_MIN_N = 1_000
#: Draws per side of one support test (a quarter fits, the rest certifies): the ε ceiling
#: at 15 000 certifying draws is about 7 at α = 0.05, far above any claim the kit makes.
SUPPORT_MAX_N = 20_000


@dataclass(frozen=True)
class PrecisionProbe:
    """What a pilot saw for one pair.

    Attributes
    ----------
    label
        The pair's label.
    ratio
        Largest ``np.spacing(max |release_k|) / sd_k`` over coordinates k.
    distinct
        Smallest share of distinct pilot values over coordinates (1 = all distinct).
    separation
        How well the pilot already tells the sides apart: the total-variation distance of
        the releases as categories when the pilot holds few distinct releases
        (``regime="categorical"``), else the Kolmogorov–Smirnov distance of a projection
        (``regime="continuous"``). Used only to rank pairs.
    refused
        The mechanism refused the pair (``ValueError``/``TypeError``): harmless.
    reason
        The refusal message, if any.
    """

    label: str
    ratio: float = 0.0
    distinct: float = 1.0
    separation: float = 0.0
    refused: bool = False
    reason: str = ""
    regime: str = ""
    dim: int = 1
    support: float = 0.0

    @property
    def visible(self) -> bool:
        """Rounding visible next to the noise."""
        return not self.refused and (self.ratio > VISIBLE_RATIO or (
            self.distinct < MIN_DISTINCT and self.ratio > SPACING_FLOOR))

    @property
    def support_visible(self) -> bool:
        """The float supports of the two pilots differ (:data:`SUPPORT_MIN_BITS`)."""
        return not self.refused and self.support >= SUPPORT_MIN_BITS

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {"label": self.label, "ratio": self.ratio, "distinct": self.distinct,
                "separation": self.separation, "refused": self.refused,
                "reason": self.reason, "regime": self.regime, "visible": self.visible,
                "support_bits": self.support, "support_visible": self.support_visible}


def _domain_bound(mechanism: object, claim: object) -> float | None:
    """The declared bound on |y|: the claim's domain, else the mechanism's ``domain``."""
    return domain_y_bound(claim, mechanism)


def precision_pairs(data: Dataset, relation: NeighbourRelation, rng: np.random.Generator, *,
                    y_bound: float | None = None, per_scale: int = 6,
                    scales: Sequence[float] = HUGE_SCALES) -> list[NeighbourPair]:
    """Neighbouring pairs with adversarially large values allowed by the claim.

    Parameters
    ----------
    data
        The base dataset; its inputs are kept (outputs-only: X is public).
    relation
        The claim's relation: one target moves by at most ``d`` (outputs only), or one row
        is substituted with every ``|y| <= d`` (whole rows).
    rng
        Generator for signs, magnitudes and the moved row.
    y_bound
        The declared public domain ``|y| <= y_bound``; ``None``: unbounded, the scales
        ``scales`` are tried.
    per_scale
        Random pairs per scale.

    Returns
    -------
    list of NeighbourPair
        Every pair is a neighbour under ``relation`` (and inside ``y_bound`` if given).
    """
    rng = check_rng(rng)
    d = float(relation.d)
    n = data.n
    if relation.kind is Neighbour.ROWS:
        # the relation itself bounds |y| <= d: push every target to the bound
        levels = [d]
    else:
        levels = [float(y_bound)] if y_bound is not None else [float(s) for s in scales]
    pairs = []
    for level in levels:
        for k in range(per_scale):
            y0, i = _candidate_targets(n, level, d, k, relation.kind, rng)
            y1 = y0.copy()
            if relation.kind is Neighbour.ROWS:
                y1[i] = -y0[i]
            else:  # moved by d, or to the bound where d is wider than the room left
                y1[i] = min(y0[i] + d, level)
                while y1[i] - y0[i] > d:  # never a float move larger than d
                    y1[i] = np.nextafter(y1[i], y0[i])
            kind = "aligned" if k < 2 else "random"
            pairs.append(NeighbourPair(
                Dataset(data.X, y0, data.name), Dataset(data.X, y1, data.name),
                f"precision ({kind}): |y| ~ {level:.3g}, y[{i}] moved, draw {k}"))
    return pairs


def support_pairs(data: Dataset, relation: NeighbourRelation, *,
                  y_bound: float | None = None) -> list[NeighbourPair]:
    """Pairs at ordinary inputs where a float release's low bits depend on the query.

    Where noise Y cancels most of the query q, ``fl(q + Y)`` is exact and lies on the
    float grid of q (Sterbenz's lemma), so the outputs near 0 carry q's grid: nothing when
    q = 0 exactly, 2⁻⁵³ when q = 1, 2⁻⁵² when q = 2 (Mironov 2012, §3). The pairs:

    * every target 0 (a sum, a mean, a linear map: exactly 0) against one target moved by
      ``a = min(d, bound)`` up, and down;
    * one other target at ``a`` and the moved one from 0 to ``a`` (a sum from a to 2a: a
      power of two crossed when a is one).

    Whole rows: the same with the moved row's target (its input kept). All answers: the
    all-zero answer vector against one answer and all answers moved up by ``d``.
    Deterministic; every pair is a neighbour under ``relation`` inside ``y_bound``.
    """
    n = data.n
    zeros = Dataset(data.X, np.zeros(n), data.name)
    if relation.kind is Neighbour.ANSWERS:
        d = float(relation.d)
        return [NeighbourPair(zeros, zeros.with_target(0, d), "float support: answers 0, "
                              "one answer + d"),
                NeighbourPair(zeros, Dataset(data.X, np.full(n, d), data.name),
                              "float support: answers 0, all answers + d")]
    a = float(relation.d)
    if relation.kind is Neighbour.OUTPUTS and y_bound is not None:
        a = min(a, float(y_bound))
    move = ("row 0 y" if relation.kind is Neighbour.ROWS else "y[0]")
    out = [NeighbourPair(zeros, zeros.with_target(0, a),
                         f"float support: all targets 0, {move} -> {a:g}"),
           NeighbourPair(zeros, zeros.with_target(0, -a),
                         f"float support: all targets 0, {move} -> {-a:g}")]
    if n > 1:
        base = zeros.with_target(1, a)
        out.append(NeighbourPair(base, base.with_target(0, a),
                                 f"float support: one target {a:g}, {move} 0 -> {a:g}"))
    return out


def _candidate_targets(n: int, level: float, d: float, k: int, kind: Neighbour,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Targets at magnitude ``level`` and the index of the row that moves.

    Draws 0 and 1 are *aligned*: every other target is the power of two 2^e <= level
    (their sum is exact), and the moved target (the last row, then the first) sits at
    ``s/2 − d/2`` with ``s`` the float spacing at the total, so that moving it by ``d``
    carries the exact sum across a rounding boundary (after ``np.sum``'s trailing
    elements or under a correctly rounded sum). Later draws are random magnitudes in
    [level/2, level] with random signs: the exact release falls at random positions
    between grid points (what matters for a linear map with non-integer weights).
    """
    if kind is Neighbour.ROWS:
        y0 = level * (rng.choice([-1.0, 1.0], n) if k % 2 else np.ones(n))
        return y0, int(rng.integers(n))
    if k < 2:
        power = 2.0 ** math.floor(math.log2(level))
        y0 = np.full(n, power)
        i = n - 1 if k == 0 else 0
        total = power * (n - 1)
        half = float(np.spacing(total)) / 2.0
        y0[i] = max(min(max(half - d / 2.0, -level), level - d), -level)
        return y0, i
    y0 = level * rng.uniform(0.5, 1.0, n) * (rng.choice([-1.0, 1.0], n) if k % 2 else 1.0)
    i = int(rng.integers(n))
    # the moved target: a multiple of d below 2^50 d (so that y + d is exact and moves by
    # exactly d) and at most level − d (so that the move stays inside the bound); where d
    # is wider than that room (d > level, e.g. |y| <= 1 and d = 2), the lower bound, from
    # which the caller moves it as far as the bound allows
    top = min(level - d, d * 2.0**50)
    if top < 0:
        y0[i] = -level
        return y0, i
    y0[i] = float(np.floor(min(abs(y0[i]), top) / d)) * d * (1.0 if y0[i] >= 0 else -1.0)
    return y0, i


def _noise_sd(mechanism: object, d0: Dataset, pilot: np.ndarray) -> np.ndarray:
    cov = getattr(mechanism, "cov", None)
    if callable(cov):
        try:
            c = np.asarray(cov(d0), dtype=float)
            return np.sqrt(np.clip(np.diag(c.reshape(c.shape[0], -1)), 0.0, None))
        except (ValueError, TypeError, np.linalg.LinAlgError):
            pass
    return np.std(pilot, axis=0)


def _bits_vary(s: np.ndarray) -> np.ndarray:
    """Per coordinate of float64 draws ``s`` (shape ``(n, k)``): do their bit patterns vary?"""
    bits = np.ascontiguousarray(s).view(np.int64)
    return np.any(bits != bits[:1], axis=0)


def probe_pair(mechanism: object, pair: NeighbourPair, rng: np.random.Generator,
               pilot: int = 200, support: bool = False) -> PrecisionProbe:
    """Pilot ``pilot`` releases per side and measure the rounding (see module docstring).

    With ``support=True`` also the float-support evidence of the pilot (step 4).
    """
    rng0, rng1 = rng.spawn(2)
    try:
        s0 = checked_sample(mechanism, pair.d0, pilot, rng0)
        s1 = checked_sample(mechanism, pair.d1, pilot, rng1)
    except ContractError:
        raise
    except (ValueError, TypeError) as err:
        return PrecisionProbe(pair.label, refused=True, reason=one_line(err))
    same_release_shape(mechanism, (s0, s1))
    fmt = np.result_type(s0.dtype, s1.dtype)  # the spacing is that of the released format
    fmt = fmt if fmt.kind == "f" and fmt.itemsize < 8 else np.dtype(float)
    s0 = s0.reshape(pilot, -1).astype(float)
    s1 = s1.reshape(pilot, -1).astype(float)
    if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
        return PrecisionProbe(pair.label, ratio=math.inf, distinct=0.0, separation=1.0)
    sd = _noise_sd(mechanism, pair.d0, s0)
    top = np.maximum(np.max(np.abs(s0), axis=0), np.max(np.abs(s1), axis=0))
    spacing = np.spacing(top.astype(fmt)).astype(float)  # float32: 2^-23 relative, not 2^-52
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(sd > 0, spacing / sd, np.where(spacing > 0, math.inf, 0.0))
    noisy = sd > 0  # coordinates without noise are another auditor's business
    # ... except for their float support: a zero whose sign follows the data (0·m is -0.0
    # for m < 0) has no spread, yet its bits vary from draw to draw
    varied = noisy | _bits_vary(s0) | _bits_vary(s1)
    distinct = [len(np.unique(np.concatenate([s0[:, k], s1[:, k]]))) / (2 * pilot)
                for k in range(s0.shape[1]) if noisy[k]]
    ratio = float(np.max(ratios[noisy])) if np.any(noisy) else 0.0
    dmin = float(min(distinct)) if distinct else 1.0
    keys0 = [r.tobytes() for r in s0]
    keys1 = [r.tobytes() for r in s1]
    n_rows = len(set(keys0) | set(keys1))
    if n_rows <= pilot:  # few distinct releases: compare them as categories
        regime = "categorical"
        values, counts = np.unique(np.array(keys0 + keys1, dtype=object), return_inverse=True)
        c0 = np.bincount(counts[:pilot], minlength=len(values)) / pilot
        c1 = np.bincount(counts[pilot:], minlength=len(values)) / pilot
        separation = 0.5 * float(np.sum(np.abs(c0 - c1)))
    else:  # continuous with a visible grid: KS distance of a projection
        regime = "continuous"
        separation = _ks_projection(s0, s1)
    return PrecisionProbe(pair.label, ratio=ratio, distinct=dmin, separation=separation,
                          regime=regime, dim=int(s0.shape[1]),
                          support=(float_support_evidence(s0[:, varied], s1[:, varied])
                                   if support else 0.0))


def _ks_projection(s0: np.ndarray, s1: np.ndarray) -> float:
    """Two-sample Kolmogorov–Smirnov distance of the pilots on the standardised mean shift.

    A learned direction, not the mechanism's stated Gaussian model: rounding is exactly
    where the float release departs from that model.
    """
    sd = np.std(np.concatenate([s0, s1]), axis=0)
    safe = np.where(sd > 0, sd, 1.0)
    w = np.where(sd > 0, (s1.mean(axis=0) - s0.mean(axis=0)) / safe**2, 0.0)
    if not np.any(w):
        return 0.0
    p0, p1 = np.sort(s0 @ w), np.sort(s1 @ w)
    grid = np.concatenate([p0, p1])
    f0 = np.searchsorted(p0, grid, side="right") / p0.size
    f1 = np.searchsorted(p1, grid, side="right") / p1.size
    return float(np.max(np.abs(f0 - f1)))


@dataclass(frozen=True)
class PrecisionScreen:
    """The pilot phase of A.7: every probe and the visible pairs chosen for certification.

    The choice depends only on the pilot samples, so a caller may decide how much α to
    spend on the certification after seeing it (nothing, when no pair is chosen) without
    affecting the validity of any test run on fresh samples.
    """

    details: dict
    chosen: tuple[tuple[PrecisionProbe, NeighbourPair], ...] = ()
    skipped: str | None = None
    support_chosen: tuple[tuple[PrecisionProbe, NeighbourPair], ...] = ()

    @property
    def needs_test(self) -> bool:
        """True when some pair will be tested (black-box or float-support test)."""
        return bool(self.chosen) or bool(self.support_chosen)


def screen_precision(mechanism: object, data: Dataset, rng: np.random.Generator, *,
                     claim: object | None = None, pairs: Sequence[NeighbourPair] = (),
                     pilot: int = 200, n_pairs: int = CERTIFY_PAIRS, per_scale: int = 6,
                     guard: Callable[[], bool] | None = None, support: bool = True,
                     budget_s: float | None = None,
                     support_pilot: int | None = None) -> PrecisionScreen:
    """Steps 1–2 of A.7 (module docstring): candidates, pilots, visible pairs ranked.

    Every candidate is piloted (``pilot`` draws per side): the work is a function of the
    inputs (issue 20 §1). ``guard`` (a zero-argument callable, true once the audit's time
    guard has fired) stops the screen between candidates; ``details["stopped_by_guard"]``
    then says so. ``budget_s`` (former per-screen seconds) is a guard of its own now.

    With ``support=True`` also step 4: :func:`support_pairs` join the candidates, piloted
    with ``support_pilot`` draws per side (default: ``max(pilot, SUPPORT_PILOT)``; the
    runner and :func:`audit_precision` pass :func:`support_pilot_draws`), and the
    :data:`SUPPORT_PAIRS` most support-visible pairs are chosen for the float-support test
    (``screen.support_chosen``).
    """
    t0 = time.perf_counter()
    if budget_s is not None:
        own = TimeGuard(check_guard_s("budget_s", budget_s))
        outer = guard
        guard = own if outer is None else (lambda: own.expired() or bool(outer()))
    rng = check_rng(rng)
    pilot = check_positive_int("pilot", pilot)
    support_pilot = max(pilot, SUPPORT_PILOT) if support_pilot is None else \
        check_positive_int("support_pilot", support_pilot)
    claim = mechanism.claim if claim is None else claim  # type: ignore[attr-defined]
    rng_pairs, rng_pilot = rng.spawn(2)
    bound = _domain_bound(mechanism, claim)
    relation = claim.relation  # type: ignore[attr-defined]
    labels = domain_labels(claim, mechanism)  # declared class labels: the pairs stay on them

    def legal(found: list[NeighbourPair]) -> list[NeighbourPair]:
        return found if labels is None else on_labels(found, relation, labels)

    candidates = legal(precision_pairs(data, relation, rng_pairs, y_bound=bound,
                                       per_scale=per_scale) + list(pairs))
    n_rounding = len(candidates)  # then the support pairs, with their own pilot
    if support:
        candidates += legal(support_pairs(data, relation, y_bound=bound))
    details: dict = {"domain_y_bound": bound, "visible_ratio": VISIBLE_RATIO,
                     "min_distinct": MIN_DISTINCT, "pilot_per_side": pilot}
    if support:
        details["support_pilot_per_side"] = support_pilot
    probe_rngs = rng_pilot.spawn(len(candidates))
    probes: list[tuple[PrecisionProbe, NeighbourPair]] = []
    for idx, (pair, prng) in enumerate(zip(candidates, probe_rngs, strict=True)):
        if guard is not None and guard():
            details["stopped_by_guard"] = True
            details["probed"] = len(probes)
            break
        first_rng, probe_rng = prng.spawn(2)
        try:
            first = checked_sample(mechanism, pair.d0, 1, first_rng)
        except ContractError:
            raise
        except (ValueError, TypeError) as err:
            probes.append((PrecisionProbe(pair.label, refused=True,
                                          reason=one_line(err)), pair))
            continue
        if first.dtype.kind in "biu":
            details["skipped"] = "discrete (integer) release: float rounding does not apply"
            return PrecisionScreen(details, skipped=details["skipped"])
        probes.append((probe_pair(mechanism, pair, probe_rng,
                                  pilot if idx < n_rounding else support_pilot,
                                  support=support), pair))
    details["probes"] = [p.as_dict() for p, _ in probes]
    details["candidates"] = len(candidates)
    details["refused"] = sum(p.refused for p, _ in probes)
    details["max_ratio"] = max((p.ratio for p, _ in probes if not p.refused), default=0.0)
    visible = sorted(((p, q) for p, q in probes if p.visible),
                     key=lambda pq: (-pq[0].separation, abs(math.log10(pq[0].ratio))
                                     if 0 < pq[0].ratio < math.inf else math.inf))
    details["visible"] = len(visible)
    support_chosen: tuple = ()
    if support:
        by_bits = sorted(((p, q) for p, q in probes if p.support_visible),
                          key=lambda pq: -pq[0].support)
        details["support_visible"] = len(by_bits)
        details["support_min_bits"] = SUPPORT_MIN_BITS
        details["max_support_bits"] = max((p.support for p, _ in probes if not p.refused),
                                          default=0.0)
        support_chosen = tuple(by_bits[:SUPPORT_PAIRS])
    details["seconds_screen"] = time.perf_counter() - t0
    if probes and details["refused"] == len(probes):  # nothing compared: no evidence either way
        details["skipped"] = (f"no generated pair is accepted by the mechanism "
                              f"({details['refused']} refused)")
        return PrecisionScreen(details, skipped=details["skipped"])
    return PrecisionScreen(details, tuple(_spread(visible, n_pairs)), support_chosen=support_chosen)


def _spread(ranked: list[tuple[PrecisionProbe, NeighbourPair]], k: int
            ) -> list[tuple[PrecisionProbe, NeighbourPair]]:
    """The top ``k`` pairs, taking the best of each magnitude in turn (round robin).

    Pairs at one magnitude behave alike; spreading the certification budget over the
    magnitudes finds the regime where the grid and the noise interact.
    """
    groups: dict[str, list[tuple[PrecisionProbe, NeighbourPair]]] = {}
    for item in ranked:
        key = item[0].label.split(", y[")[0]
        groups.setdefault(key, []).append(item)
    out: list[tuple[PrecisionProbe, NeighbourPair]] = []
    while len(out) < k and any(groups.values()):
        for key in list(groups):
            if groups[key] and len(out) < k:
                out.append(groups[key].pop(0))
    return out


@dataclass(frozen=True, eq=False)
class _BothScores:
    """Two scores side by side, shape (n, 2) (picklable for process executors)."""

    first: object
    second: object

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return np.column_stack([self.first(X), self.second(X)])  # type: ignore[operator]


def certify_support(mechanism: object, pair: NeighbourPair, rng: np.random.Generator, *,
                    n: int, alpha: float, claim: object | None = None,
                    executor: object | None = None) -> dict:
    """Step 5 of A.7: the float-support test of one pair, on fresh samples.

    ``min(n, SUPPORT_MAX_N)`` draws per side: a quarter fits (half of it builds the
    :class:`~dpgp_audit.audit.blackbox.scores.FloatSupportScore` category tables of each
    direction, one per coordinate and one pooled over the coordinates, half chooses each
    direction's table and threshold by the Clopper–Pearson bound it
    predicts), the rest certifies both events ``{score ≥ t}``. Each certified bound holds
    with confidence ``1 − alpha/2`` (α/4 per proportion), so the pair's result — the larger
    of the two — holds with confidence ``1 − alpha``.

    Returns
    -------
    dict
        ``epsilon_lb`` (the certified bound), ``tests`` (per direction: threshold, counts,
        predicted and certified bounds), ``reading`` (whether exponents or low bits tell
        the fitting draws apart, descriptive:
        :func:`~dpgp_audit.audit.blackbox.scores.float_support_reading`),
        ``epsilon_ceiling``, the sample sizes and the pair (``witness``).
    """
    from dpgp_audit.audit.blackbox.fixed import _claim_epsilon_delta
    from dpgp_audit.audit.blackbox.sampling import ChunkedSampler, child_rngs
    from dpgp_audit.audit.stats import epsilon_ceiling

    rng = check_rng(rng)
    if not (0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    n = min(check_positive_int("n", n), SUPPORT_MAX_N)
    n_fit = max(4, n // 4)
    half = n_fit // 2
    n_cert = n - n_fit
    if n_cert < 1:
        raise ValueError(f"n={n} is too small for a float-support test (needs n >= 6)")
    claim = mechanism.claim if claim is None else claim  # type: ignore[attr-defined]
    _, delta, _ = _claim_epsilon_delta(claim, None)  # type: ignore[arg-type]
    a_test = alpha / 2.0  # two directions
    t0 = time.perf_counter()
    sampler = ChunkedSampler(mechanism, pair.d0, pair.d1, 4096, executor)  # type: ignore
    rng_fit, rng_cert = child_rngs(rng, 2)
    X0, X1 = sampler.raw(rng_fit, n_fit)
    chosen = []
    for sign in (1.0, -1.0):  # +1: an event of D′'s outputs, −1: of D's outputs
        best_fit = None
        for pooled in (False, True):  # per coordinate, then pooled over coordinates
            score = fit_float_support(X0[:half], X1[:half], sign, pooled=pooled)
            b0, b1 = np.sort(score(X0[half:])), np.sort(score(X1[half:]))
            hi, lo = (b1, b0) if sign > 0 else (b0, b1)
            ts = np.unique(hi)
            # counts predicted at n_cert draws; the product is rounded, so kept at most n_cert
            k_hi = np.minimum((hi.size - np.searchsorted(hi, ts, side="left")) * n_cert
                              / hi.size, n_cert)
            k_lo = np.minimum((lo.size - np.searchsorted(lo, ts, side="left")) * n_cert
                              / lo.size, n_cert)
            pred = np.atleast_1d(epsilon_lower_bound(k_hi, n_cert, k_lo, n_cert, delta,
                                                     a_test))
            j = int(np.argmax(pred))
            if best_fit is None or pred[j] > best_fit[2]:
                best_fit = (score, float(ts[j]), float(pred[j]))
        chosen.append(best_fit)
    S0, S1 = sampler.scores(rng_cert, n_cert, _BothScores(chosen[0][0], chosen[1][0]))
    tests, best = [], 0.0
    for j, (sign, (_, t, pred)) in enumerate(zip((1.0, -1.0), chosen, strict=True)):
        hi, lo = (S1[:, j], S0[:, j]) if sign > 0 else (S0[:, j], S1[:, j])
        k_hi, k_lo = int(np.sum(hi >= t)), int(np.sum(lo >= t))
        eps = float(epsilon_lower_bound(k_hi, n_cert, k_lo, n_cert, delta, a_test))
        best = max(best, eps)
        tests.append({"event": ("some coordinate in a float category favouring "
                                + ("D'" if sign > 0 else "D")), "score": chosen[j][0].name,
                      "threshold": t, "hits": k_hi, "hits_other_side": k_lo,
                      "predicted_epsilon_lb": pred, "epsilon_lb": eps})
    return {"label": pair.label, "epsilon_lb": best, "score": chosen[0][0].name,
            "tests": tests, "reading": float_support_reading(X0, X1),
            "n_per_side": n, "n_fit": n_fit, "n_cert": n_cert,
            "alpha": alpha, "delta": delta,
            "epsilon_ceiling": epsilon_ceiling(n_cert, a_test, delta),
            "witness": pair.as_dict(), "seconds": time.perf_counter() - t0}


def support_pilot_draws(n: int) -> int:
    """Pilot draws per side of each float-support pair when the test may certify with ``n``.

    ``max(SUPPORT_PILOT, min(n, SUPPORT_MAX_N) // SUPPORT_PILOT_SHARE)``: a share of the
    certification's own draws (a rule on the draw allowance, never on the clock), so a
    leak on rare outputs that a few hundred draws cannot see is screened at the allowances
    where it can be certified.
    """
    return max(SUPPORT_PILOT, min(check_positive_int("n", n), SUPPORT_MAX_N)
               // SUPPORT_PILOT_SHARE)


def support_skip_reason(n: int) -> str | None:
    """Why the float-support test does not run at ``n`` draws per side, or ``None``.

    It needs :data:`SUPPORT_MIN_N` (a deterministic rule on the draw allowance, never on
    the clock); the report then says it was not run.
    """
    if n >= SUPPORT_MIN_N:
        return None
    return (f"float-support test not run: {n} draws per side, it needs {SUPPORT_MIN_N} "
            f"(raise n to run it)")


def _precision_score(probe: PrecisionProbe) -> str:
    """Rounding breaks the stated Gaussian model, so the score is learned: categorical when
    the releases are few, else linear (LDA; the identity in one dimension).
    """
    return "categorical" if probe.regime == "categorical" else \
        "lda" if probe.dim > 1 else "identity"


def certify_precision(screen: PrecisionScreen, mechanism: object, rng: np.random.Generator, *,
                      n: int, alpha: float, claim: object | None = None,
                      executor: object | None = None, sequential: bool = False,
                      guard: Callable[[], bool] | None = None,
                      cost_per_draw_s: float | None = None) -> AuditResult:
    """Steps 3 and 5 of A.7: each chosen pair tested on fresh samples.

    Rounding-visible pairs go to the black-box auditor: with ``sequential=True`` (the
    default path) one anytime-valid sequential audit (A.8) over all of them, at most ``n``
    draws per side and pair, stopping at the first certified violation (their wealth is
    averaged: one test); otherwise the split auditor (A.3) with exactly ``n`` per side on
    each. Support-visible ones (``support=True`` in the screen) go to
    :func:`certify_support`. α is split evenly over these tests (Bonferroni). ``guard``
    (the audit's time guard) stops the sequential audit between pieces and the other tests
    between pairs: ``INCONCLUSIVE``, recorded in ``details["time_guard"]``.
    """
    from dpgp_audit.audit.blackbox.fixed import _claim_epsilon_delta, audit_blackbox

    t0 = time.perf_counter()
    rng = check_rng(rng)
    n = check_positive_int("n", n)
    if not (0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    claim = mechanism.claim if claim is None else claim  # type: ignore[attr-defined]
    eps_c, _, _ = _claim_epsilon_delta(claim, None)
    details = dict(screen.details)
    chosen = screen.chosen
    support_chosen = screen.support_chosen
    if support_chosen and support_skip_reason(n) is not None:
        details["support_skipped"] = support_skip_reason(n)
        support_chosen = ()
    one_audit = sequential and bool(chosen)
    n_tests = (1 if one_audit else len(chosen)) + len(support_chosen)
    best, best_res, checked = 0.0, None, []
    stopped = bool(details.get("stopped_by_guard"))
    used = 0
    if one_audit and not stopped:
        from dpgp_audit.audit.blackbox.sequential import audit_sequential

        res = audit_sequential(mechanism, [pair for _, pair in chosen], max_n=max(2, n),
                               rng=rng.spawn(1)[0], alpha=alpha / n_tests, claim=claim,
                               executor=executor, guard=guard,
                               score=[_precision_score(p) for p, _ in chosen],
                               cost_per_draw_s=cost_per_draw_s)
        best, best_res, used = res.estimate, res, int(res.details["n_per_side"])
        checked = [{"label": p.label, "verdict": res.verdict.value, "epsilon_lb": res.estimate,
                    "score": _precision_score(p),
                    "mode": "sequential (one audit over the chosen pairs)"} for p, _ in chosen]
        stopped = res.details.get("stopped") == "time_guard"
    elif chosen and not stopped:
        for (p, pair), brng in zip(chosen, rng.spawn(max(1, len(chosen))), strict=False):
            if guard is not None and guard():
                stopped = True
                break
            res = audit_blackbox(mechanism, pair.d0, pair.d1, n=n, rng=brng,
                                 alpha=alpha / n_tests, claim=claim, executor=executor,
                                 score=_precision_score(p))
            used = n
            checked.append({"label": p.label, "verdict": res.verdict.value,
                            "epsilon_lb": res.estimate, "score": res.details.get("score")})
            if best_res is None or res.estimate > best:
                best, best_res = res.estimate, res
    best_support = None
    if support_chosen and not stopped:
        support_rows = []
        for (_, pair), srng in zip(support_chosen, rng.spawn(len(support_chosen)),
                                   strict=True):
            if guard is not None and guard():
                stopped = True
                break
            row = certify_support(mechanism, pair, srng, n=n, alpha=alpha / n_tests,
                                  claim=claim, executor=executor)
            support_rows.append(row)
            used = max(used, int(row["n_per_side"]))
            if (best_res is None and best_support is None) or row["epsilon_lb"] > best:
                best, best_support, best_res = row["epsilon_lb"], row, None
        details["support_certified"] = support_rows
    details["certified"] = checked
    pilot_used = max(int(details.get("pilot_per_side", 0)),
                     int(details.get("support_pilot_per_side", 0)))
    details["used"] = {"pilot_draws": pilot_used, "draws": used,
                       "pairs": len(checked) + len(details.get("support_certified", []))}
    details["seconds_certify"] = time.perf_counter() - t0
    ceiling = None
    if best_support is not None:
        details["witness"] = best_support["witness"]
        details["witness_label"] = best_support["label"]
        details["witness_test"] = "float support"
        details["support_reading"] = best_support["reading"]
        ceiling = best_support["epsilon_ceiling"]
    elif best_res is not None:
        details["witness"] = best_res.details.get("witness")
        details["witness_label"] = best_res.details.get("witness_label") if one_audit else \
            next(c["label"] for c in checked if c["epsilon_lb"] == best)
        ceiling = best_res.details.get("epsilon_ceiling")
    if ceiling is not None:
        details["epsilon_ceiling"] = ceiling
    # the sequential audit rejects the claim when its bound reaches the claimed ε (the
    # claim's own grid value rejected), the split audit when its bound exceeds it
    if (best_res is not None and best_res.violation) or best > eps_c:
        verdict = Verdict.VIOLATION
    elif stopped:
        verdict = Verdict.INCONCLUSIVE
        note = best_res.details.get("time_guard") if best_res is not None else None
        if note is None:
            note = (guard.record("precision", "the precision screen or certification")
                    if isinstance(guard, TimeGuard) else
                    {"part": "precision", "message": "stopped by the time guard: INCONCLUSIVE"})
        details["time_guard"] = note
    elif best_support is None and chosen and best_res is not None \
            and best_res.verdict is Verdict.INCONCLUSIVE:
        verdict = Verdict.INCONCLUSIVE
    elif best_support is not None and best_support["epsilon_ceiling"] < eps_c:
        verdict = Verdict.INCONCLUSIVE
    else:
        verdict = Verdict.NO_EVIDENCE
    return AuditResult(auditor="precision", verdict=verdict, guarantee=Guarantee.LOWER_BOUND,
                       estimate=float(best), claimed=eps_c, quantity="epsilon",
                       alpha=alpha if n_tests else None, details=details)


def audit_precision(mechanism: object, data: Dataset, rng: np.random.Generator, *,
                    n: int = 20_000, alpha: float = 0.05, pairs: Sequence[NeighbourPair] = (),
                    claim: object | None = None, pilot: int = 200, n_pairs: int = CERTIFY_PAIRS,
                    per_scale: int = 6, time_guard_s: float | None = None,
                    executor: object | None = None, support: bool = True,
                    sequential: bool = False, budget_s: float | None = None) -> AuditResult:
    """A.7: look for visible rounding at adversarially large legal values; certify with A.3.

    Parameters
    ----------
    mechanism
        Anything with ``claim`` and ``sample``; the claim's ``domain`` (or the mechanism's
        ``domain``) sets the largest legal target, and an optional ``cov`` gives the noise
        sd.
    data
        The base dataset (its inputs are kept).
    rng
        Generator; the screen and the certification get spawned children.
    n
        Black-box samples per side for each pair handed on.
    alpha
        1 − confidence, split over the pairs handed to the black-box auditor.
    pairs
        Extra candidate pairs (e.g. the generated neighbours of A.1) probed as well.
    claim
        Override the mechanism's claim.
    pilot
        Pilot releases per side and candidate.
    n_pairs
        At most this many visible pairs are certified.
    per_scale
        Random candidates per magnitude (see :func:`precision_pairs`).
    time_guard_s
        A wall-clock guard (seconds; ``None``: none): when it fires the audit stops,
        ``INCONCLUSIVE``, and says so. The work is otherwise a function of the inputs.
    executor
        Passed to the black-box auditor.
    support
        Also test float supports at ordinary inputs (steps 4–5 of the module docstring:
        :func:`support_pairs`, the support evidence of every pilot, :func:`certify_support`;
        on by default, where ``n`` is at least :data:`SUPPORT_MIN_N`, else
        ``details["support_skipped"]`` says it was not run).
    sequential
        Certify the rounding-visible pairs with one sequential audit over them (at most
        ``n`` per side and pair) instead of ``n`` per side on each (:func:`certify_precision`).
    budget_s
        Former name of ``time_guard_s``.

    Returns
    -------
    AuditResult
        ``auditor="precision"``; ``estimate`` is the largest certified ε lower bound over
        the pairs handed on (0 when rounding was nowhere visible). ``details`` lists every
        probe, the pairs refused by the mechanism, and the black-box results with their
        witness; ``details["skipped"]`` says why nothing was probed (a discrete release).
    """
    rng = check_rng(rng)
    guard = TimeGuard(check_guard_s("time_guard_s", time_guard_s if budget_s is None
                                    else budget_s))
    rng_screen, rng_cert = rng.spawn(2)
    n = check_positive_int("n", n)
    not_run = support_skip_reason(n) if support else None
    screen = screen_precision(mechanism, data, rng_screen, claim=claim, pairs=pairs,
                              pilot=pilot, n_pairs=n_pairs, per_scale=per_scale,
                              guard=guard, support=support and not_run is None,
                              support_pilot=max(pilot, support_pilot_draws(n)))
    if not_run is not None:
        screen.details["support_skipped"] = not_run
    if screen.skipped is not None:
        from dpgp_audit.audit.blackbox.fixed import _claim_epsilon_delta

        claim = mechanism.claim if claim is None else claim  # type: ignore[attr-defined]
        return AuditResult(auditor="precision", verdict=Verdict.INCONCLUSIVE,
                           guarantee=Guarantee.LOWER_BOUND, estimate=0.0,
                           claimed=_claim_epsilon_delta(claim, None)[0], details=screen.details)
    return certify_precision(screen, mechanism, rng_cert, n=n, alpha=alpha, claim=claim,
                             executor=executor, sequential=sequential, guard=guard)
