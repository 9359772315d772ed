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
   one anytime-valid audit over them, at most ``n`` draws per side and pair, stopping
   at the first certified violation) or, in fixed mode, to the split auditor (A.3,
   exactly ``n`` per side, α split over them). The score is learned (categorical or
   LDA), not the stated Gaussian model: rounding is where the float release departs
   from it. A certified ε above the claim is a ``VIOLATION`` with its witness pair.

Every step is budgeted in draws (issue 20 §1): the candidates are a fixed list, each is
piloted with ``pilot`` draws per side, and the certification draws at most ``n`` per side
and pair. A time guard (``guard``) may stop the screen or the certification; the result
is then ``INCONCLUSIVE`` and says so.

The pilot only chooses pairs; only the black-box step certifies, so the verdict keeps the
black-box guarantee (valid with confidence 1 − α, no assumptions). Discrete releases
(integer outputs) are out of scope: rounding applies to continuous outputs.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.audit.guard import TimeGuard, check_guard_s
from dpgp_audit.audit.neighbours import NeighbourPair
from dpgp_audit.audit.result import AuditResult, Guarantee, Verdict
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.claims import Neighbour, NeighbourRelation

__all__ = ["CERTIFY_PAIRS", "HUGE_SCALES", "MIN_DISTINCT", "SPACING_FLOOR", "VISIBLE_RATIO",
           "PrecisionProbe", "PrecisionScreen", "audit_precision", "certify_precision",
           "precision_pairs", "probe_pair", "screen_precision"]

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

    @property
    def visible(self) -> bool:
        """Rounding visible next to the noise."""
        return not self.refused and (self.ratio > VISIBLE_RATIO or (
            self.distinct < MIN_DISTINCT and self.ratio > SPACING_FLOOR))

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {"label": self.label, "ratio": self.ratio, "distinct": self.distinct,
                "separation": self.separation, "refused": self.refused,
                "reason": self.reason, "regime": self.regime, "visible": self.visible}


def _domain_bound(mechanism: object, claim: object) -> float | None:
    """The declared bound on |y|: the claim's domain, else the mechanism's ``domain``."""
    for holder in (claim, mechanism):
        domain = getattr(holder, "domain", None)
        bound = getattr(domain, "y_bound", None)
        if bound is not None:
            return float(bound)
    return None


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
            else:
                y1[i] = y0[i] + d
                while y1[i] - y0[i] > d:  # never a float move larger than d
                    y1[i] = np.nextafter(y1[i], y0[i])
            kind = "aligned" if k < 2 else "random"
            pairs.append(NeighbourPair(
                Dataset(data.X, y0, data.name), Dataset(data.X, y1, data.name),
                f"precision ({kind}): |y| ~ {level:.3g}, y[{i}] moved, draw {k}"))
    return pairs


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
        y0[i] = min(max(half - d / 2.0, -level), level - d)
        return y0, i
    y0 = level * rng.uniform(0.5, 1.0, n) * (rng.choice([-1.0, 1.0], n) if k % 2 else 1.0)
    i = int(rng.integers(n))
    # the moved target: a multiple of d below 2^50 d (so that y + d is exact and moves by
    # exactly d) and at most level − d (so that the move stays inside the bound)
    top = min(level - d, d * 2.0**50)
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


def probe_pair(mechanism: object, pair: NeighbourPair, rng: np.random.Generator,
               pilot: int = 200) -> PrecisionProbe:
    """Pilot ``pilot`` releases per side and measure the rounding (see module docstring)."""
    rng0, rng1 = rng.spawn(2)
    try:
        s0 = np.asarray(mechanism.sample(pair.d0, pilot, rng0))  # type: ignore[attr-defined]
        s1 = np.asarray(mechanism.sample(pair.d1, pilot, rng1))  # type: ignore[attr-defined]
    except (ValueError, TypeError) as err:
        return PrecisionProbe(pair.label, refused=True, reason=" ".join(str(err).split())[:200])
    s0 = s0.reshape(pilot, -1).astype(float)
    s1 = s1.reshape(pilot, -1).astype(float)
    if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
        return PrecisionProbe(pair.label, ratio=math.inf, distinct=0.0, separation=1.0)
    sd = _noise_sd(mechanism, pair.d0, s0)
    top = np.maximum(np.max(np.abs(s0), axis=0), np.max(np.abs(s1), axis=0))
    spacing = np.spacing(top)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(sd > 0, spacing / sd, np.where(spacing > 0, math.inf, 0.0))
    noisy = sd > 0  # coordinates without noise are another auditor's business
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
                          regime=regime, dim=int(s0.shape[1]))


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

    @property
    def needs_test(self) -> bool:
        """True when some pair will be handed to the black-box auditor."""
        return bool(self.chosen)


def screen_precision(mechanism: object, data: Dataset, rng: np.random.Generator, *,
                     claim: object | None = None, pairs: Sequence[NeighbourPair] = (),
                     pilot: int = 200, n_pairs: int = CERTIFY_PAIRS, per_scale: int = 6,
                     guard: Callable[[], bool] | None = None,
                     budget_s: float | None = None) -> PrecisionScreen:
    """Steps 1–2 of A.7 (module docstring): candidates, pilots, visible pairs ranked.

    Every candidate is piloted (``pilot`` draws per side): the work is a function of
    the inputs. ``guard`` (a zero-argument callable, true once the audit's time guard
    has fired) stops the screen between candidates; ``details["stopped_by_guard"]`` then
    says so. ``budget_s`` (former per-screen seconds) is a guard of its own now.
    """
    t0 = time.perf_counter()
    if budget_s is not None:
        own = TimeGuard(check_guard_s("budget_s", budget_s))
        outer = guard
        guard = own if outer is None else (lambda: own.expired() or bool(outer()))
    rng = check_rng(rng)
    pilot = check_positive_int("pilot", pilot)
    claim = mechanism.claim if claim is None else claim  # type: ignore[attr-defined]
    rng_pairs, rng_pilot = rng.spawn(2)
    bound = _domain_bound(mechanism, claim)
    candidates = precision_pairs(data, claim.relation, rng_pairs,  # type: ignore[attr-defined]
                                 y_bound=bound, per_scale=per_scale) + list(pairs)
    details: dict = {"domain_y_bound": bound, "visible_ratio": VISIBLE_RATIO,
                     "min_distinct": MIN_DISTINCT, "pilot_per_side": pilot}
    probe_rngs = rng_pilot.spawn(len(candidates))
    probes: list[tuple[PrecisionProbe, NeighbourPair]] = []
    for pair, prng in zip(candidates, probe_rngs, strict=True):
        if guard is not None and guard():
            details["stopped_by_guard"] = True
            details["probed"] = len(probes)
            break
        first_rng, probe_rng = prng.spawn(2)
        try:
            first = np.asarray(mechanism.sample(pair.d0, 1, first_rng))  # type: ignore
        except (ValueError, TypeError) as err:
            probes.append((PrecisionProbe(pair.label, refused=True,
                                          reason=" ".join(str(err).split())[:200]), pair))
            continue
        if first.dtype.kind in "biu":
            details["skipped"] = "discrete (integer) release: float rounding does not apply"
            return PrecisionScreen(details, skipped=details["skipped"])
        probes.append((probe_pair(mechanism, pair, probe_rng, pilot), pair))
    details["probes"] = [p.as_dict() for p, _ in probes]
    details["candidates"] = len(candidates)
    details["refused"] = sum(p.refused for p, _ in probes)
    details["max_ratio"] = max((p.ratio for p, _ in probes if not p.refused), default=0.0)
    visible = sorted(((p, q) for p, q in probes if p.visible),
                     key=lambda pq: (-pq[0].separation, abs(math.log10(pq[0].ratio))
                                     if 0 < pq[0].ratio < math.inf else math.inf))
    details["visible"] = len(visible)
    details["seconds_screen"] = time.perf_counter() - t0
    return PrecisionScreen(details, tuple(_spread(visible, n_pairs)))


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
    """Step 3 of A.7: the black-box auditor on fresh samples for the chosen pairs.

    ``sequential=True`` (the default path): one anytime-valid sequential audit (A.8) over
    every chosen pair, at most ``n`` draws per side and pair, stopping at the first
    certified violation; α is not split (the pairs' wealth is averaged). ``False``: the
    split auditor (A.3) with exactly ``n`` per side on each pair, α split evenly over them
    (Bonferroni). ``guard`` (the audit's time guard) stops the sequential audit between
    pieces, or the fixed audits between pairs: ``INCONCLUSIVE``, recorded in
    ``details["time_guard"]``.
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
    best, best_res, checked = 0.0, None, []
    stopped = bool(details.get("stopped_by_guard"))
    used = 0
    if chosen and sequential and not stopped:
        from dpgp_audit.audit.blackbox.sequential import audit_sequential

        res = audit_sequential(mechanism, [pair for _, pair in chosen], max_n=max(2, n),
                               rng=rng, alpha=alpha, claim=claim, executor=executor,
                               score=[_precision_score(p) for p, _ in chosen], guard=guard,
                               cost_per_draw_s=cost_per_draw_s)
        best, best_res, used = res.estimate, res, int(res.details["n_per_side"])
        checked = [{"label": p.label, "verdict": res.verdict.value, "score": _precision_score(p),
                    "mode": "sequential (one audit over the chosen pairs)"} for p, _ in chosen]
        stopped = res.details.get("stopped") == "time_guard"
        details["witness_label"] = res.details["witness_label"]
    elif chosen and not stopped:
        for (p, pair), brng in zip(chosen, rng.spawn(max(1, len(chosen))), strict=False):
            if guard is not None and guard():
                stopped = True
                break
            res = audit_blackbox(mechanism, pair.d0, pair.d1, n=n, rng=brng,
                                 alpha=alpha / len(chosen), claim=claim, executor=executor,
                                 score=_precision_score(p))
            used = n
            checked.append({"label": p.label, "verdict": res.verdict.value,
                            "epsilon_lb": res.estimate, "score": res.details.get("score")})
            if best_res is None or res.estimate > best:
                best, best_res = res.estimate, res
        if best_res is not None:
            details["witness_label"] = next(c["label"] for c in checked
                                            if c["epsilon_lb"] == best)
    details["certified"] = checked
    details["used"] = {"pilot_draws": int(details.get("pilot_per_side", 0)),
                       "draws": used, "pairs": len(checked)}
    details["seconds_certify"] = time.perf_counter() - t0
    if best_res is not None:
        details["witness"] = best_res.details.get("witness")
        details["epsilon_ceiling"] = best_res.details.get("epsilon_ceiling")
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
    elif chosen and best_res is not None and best_res.verdict is Verdict.INCONCLUSIVE:
        verdict = Verdict.INCONCLUSIVE
    else:
        verdict = Verdict.NO_EVIDENCE
    return AuditResult(auditor="precision", verdict=verdict, guarantee=Guarantee.LOWER_BOUND,
                       estimate=float(best), claimed=eps_c, quantity="epsilon",
                       alpha=alpha if chosen else None, details=details)


def audit_precision(mechanism: object, data: Dataset, rng: np.random.Generator, *,
                    n: int = 20_000, alpha: float = 0.05, pairs: Sequence[NeighbourPair] = (),
                    claim: object | None = None, pilot: int = 200, n_pairs: int = CERTIFY_PAIRS,
                    per_scale: int = 6, time_guard_s: float | None = None,
                    executor: object | None = None, sequential: bool = False,
                    budget_s: float | None = None) -> AuditResult:
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
    sequential
        Certify with one sequential audit over the chosen pairs (at most ``n`` per side
        and pair) instead of ``n`` per side on each (:func:`certify_precision`).
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
    screen = screen_precision(mechanism, data, rng_screen, claim=claim, pairs=pairs,
                              pilot=pilot, n_pairs=n_pairs, per_scale=per_scale, guard=guard)
    if screen.skipped is not None:
        from dpgp_audit.audit.blackbox.fixed import _claim_epsilon_delta

        claim = mechanism.claim if claim is None else claim  # type: ignore[attr-defined]
        return AuditResult(auditor="precision", verdict=Verdict.INCONCLUSIVE,
                           guarantee=Guarantee.LOWER_BOUND, estimate=0.0,
                           claimed=_claim_epsilon_delta(claim, None)[0], details=screen.details)
    return certify_precision(screen, mechanism, rng_cert, n=n, alpha=alpha, claim=claim,
                             executor=executor, sequential=sequential, guard=guard)
