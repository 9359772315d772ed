"""Substitution positions: where one whole row weighs most on the release (catalogue A.9).

Under whole-row neighbours a record may be replaced by one at *any* input, not only at
the inputs of the user's data. A release evaluated at public points of its own — a
kernel sum or a GP mean at test inputs — is most sensitive to a row placed *at* one of
those points, and a sensitivity bound computed over the data's own inputs (or a design
grid) misses exactly that row. The generated pairs place substituted rows at the data's
corners, far outside it and at random points of its box; none of these need fall within
a short lengthscale of a test point that lies between the data's inputs.

This module finds such a place without knowing the release's points. For a release the
coupled survey found additive in its noise (:mod:`~dpgp_audit.audit.greybox`), one
coupled call on the pair "row ``i`` at ``x`` with the largest target" against "the same
row with the smallest target" shows the release's shift caused by that row alone, in
units of the spread of the releases of the call (the survey's point estimate,
:func:`~dpgp_audit.audit.greybox.coupled_shift`). Every position is
run on one and the same seed (common random numbers), so that the scores of two
positions differ only through the release, and the search

1. scores :data:`START_POINTS` positions drawn uniformly from the data's input box
   widened by :data:`MARGIN` of its width on each side — with a declared ``x_bound``, as
   many again in the whole declared box ``|x| <= x_bound``, where a release may be
   evaluated far from the data —
2. if every position scored alike (a release that does not depend on where the row sits,
   such as a plain sum) or none moved (a release of the inputs alone), moves the row
   between corners of the box instead, its target kept (:func:`_swings`: a contrast or a
   cross moment of the inputs moves most between corners that the box's diagonal never
   joins), and out of a cluster of every input at one corner to each first-pass place
   (:func:`_cluster_moves`: a statistic against public reference points moves most when
   the other rows sit far from them and one row lands among them); otherwise refines the
   best :data:`REFINE_STARTS` of them, each in a region of its own (not within four
   compass steps of a better one), by a compass search (each coordinate moved by
   ``± step``; the step halved when no move helps), and
3. keeps the best :data:`MAX_PAIRS` flip pairs of distinct peaks (two refinements that end
   within the first step of each other found one peak).

The pairs kept are ordinary neighbour pairs inside the declared domain. Nothing here is a
verdict: the coupled survey analyses them (an exact or grid bound beyond the claim,
reproduced on a fresh seed, is definitive, as for every other pair) and the white-box and
black-box auditors certify them on fresh draws. The search is deterministic given its
seed and spends at most :data:`MAX_CALLS` coupled calls of
:data:`~dpgp_audit.audit.greybox.PROBE_ROWS` releases per side; like the
structure-boundary search (:mod:`~dpgp_audit.audit.boundary`) it runs only for a release
that is reproducible from its generator, additive in its noise on some pair, with no
definitive finding yet.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import one_line
from dpgp_audit.audit.boundary import BOUNDARY_RELEASES, skip_reason
from dpgp_audit.audit.greybox import PROBE_ROWS, CouplingSurvey, couple, coupled_shift
from dpgp_audit.audit.neighbours import NeighbourPair
from dpgp_audit.contract import ContractError, Mechanism
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.claims import Neighbour, NeighbourRelation

__all__ = ["CLUSTER_CALLS", "MARGIN", "MAX_CALLS", "MAX_PAIRS", "REFINE_STARTS", "START_POINTS",
           "SWING_CALLS", "PositionSearch", "flip_pair", "search_positions", "with_positions"]

#: Positions drawn uniformly from the widened box in the first pass.
START_POINTS = 24
#: The best first-pass positions refined by compass search.
REFINE_STARTS = 2
#: Coupled calls the search may make in all (a deterministic allowance).
MAX_CALLS = 64
#: Flip pairs handed to the coupled survey, at most.
MAX_PAIRS = 2
#: The data's input box is widened by this fraction of its width on each side.
MARGIN = 0.1
#: Coupled calls more for the corner swings of a release the target does not move
#: (:func:`_swings`).
SWING_CALLS = 32
#: Coupled calls more for the moves out of a cluster at a corner of the box, for a release
#: the target does not move (:func:`_cluster_moves`).
CLUSTER_CALLS = 80
#: Halvings of the compass step after which a refinement stops.
_HALVINGS = 12


@dataclass
class PositionSearch:
    """What the search did: calls made, positions kept, pairs kept (JSON-ready)."""

    calls: int = 0
    max_calls: int = MAX_CALLS
    row: int = 0
    best: list[dict] = field(default_factory=list)
    pairs: list[NeighbourPair] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    #: the first pass saw the same score at every position (or no shift at all)
    flat: bool = False

    def as_dict(self) -> dict:
        """The record the grey-box result keeps (``details["positions"]``)."""
        return {"calls": self.calls, "max_calls": self.max_calls, "row": self.row,
                "best": self.best, "pairs": [p.label for p in self.pairs],
                "refused": self.refused, "flat": self.flat}


def _targets(relation: NeighbourRelation, y_bound: float | None,
             labels: Sequence[float] | None) -> tuple[float, float]:
    """The largest and smallest legal targets of a substituted row."""
    if labels:
        return float(max(labels)), float(min(labels))
    a = float(relation.d) if y_bound is None else min(float(relation.d), float(y_bound))
    return a, -a


def _box(data: Dataset, x_bound: float | None) -> tuple[np.ndarray, np.ndarray]:
    """The data's input box widened by :data:`MARGIN` (a unit width where it is flat).

    Inside a declared bound; the search as a whole spans the declared box too
    (:func:`_starts`).
    """
    X = np.asarray(data.X, dtype=float)
    lo, hi = X.min(axis=0), X.max(axis=0)
    width = np.where(hi > lo, hi - lo, 1.0)
    lo, hi = lo - MARGIN * width, hi + MARGIN * width
    if x_bound is not None:
        lo, hi = np.maximum(lo, -x_bound), np.minimum(hi, x_bound)
    return lo, hi


def _starts(data: Dataset, x_bound: float | None, rng: np.random.Generator
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first pass's positions and the box the compass search may move in.

    :data:`START_POINTS` uniform in the widened data box; with a declared bound
    (``|x| <= x_bound``, every input legal) as many again in the whole declared box, which
    the compass search may then reach — a release may be evaluated at points far from the
    data (a forecast beyond its range).
    """
    lo, hi = _box(data, x_bound)
    near = rng.uniform(lo, hi, size=(START_POINTS, lo.size))
    if x_bound is None:
        return near, lo, hi
    full = np.full(lo.size, float(x_bound))
    wide = rng.uniform(-full, full, size=(START_POINTS, lo.size))
    return np.vstack([near, wide]), -full, full


def flip_pair(data: Dataset, row: int, x: np.ndarray, y_hi: float, y_lo: float,
              tag: str = "") -> NeighbourPair:
    """Row ``row`` substituted by ``(x, y_hi)`` against the same row with ``y_lo``."""
    where = ", ".join(f"{v:.4g}" for v in np.ravel(x))
    return NeighbourPair(data.with_row(row, x, y_hi), data.with_row(row, x, y_lo),
                         f"row {row} substituted at x=({where}){tag}, "
                         f"y {y_hi:+g} -> {y_lo:+g}")


def _coupled_score(out: PositionSearch, mechanism: Mechanism, d0: Dataset, d1: Dataset,
                   seed: np.random.SeedSequence, label: str) -> float:
    """One coupled call on the search's one seed, counted in ``out``: its score.

    Every place is run on the same seed (common random numbers), so two scores differ only
    through the release. A place the mechanism refuses (a ``ValueError`` or an arithmetic
    error) scores ``-inf`` and is recorded in ``out.refused``; a broken contract travels on.
    """
    out.calls += 1
    try:
        run = couple(mechanism, d0, d1, PROBE_ROWS, seed)
    except ContractError:
        raise
    except (ValueError, ArithmeticError) as err:
        out.refused.append(one_line(f"{label}: {type(err).__name__}: {err}"))
        return -math.inf
    return coupled_shift(run.out0, run.out1)


def search_positions(mechanism: Mechanism, data: Dataset, relation: NeighbourRelation,
                     rng: np.random.Generator, *, y_bound: float | None = None,
                     labels: Sequence[float] | None = None, x_bound: float | None = None,
                     row: int | None = None, max_calls: int = MAX_CALLS,
                     max_pairs: int = MAX_PAIRS) -> PositionSearch:
    """Flip pairs at the substitution positions where the release moves most (module docstring).

    Parameters
    ----------
    mechanism
        Anything with ``sample(data, n, rng)`` that draws from the generator it is handed.
    data
        The user's D: its other rows stay, its inputs give the box searched.
    relation
        The claim's relation; only whole rows have positions to search (else no pairs).
    rng
        Source of the search's seeds.
    y_bound, labels, x_bound
        The declared domain: the targets of the substituted row (the largest and the
        smallest legal ones) and the inputs' bound.
    row
        The row substituted (default: the central row).
    max_calls, max_pairs
        The allowance (coupled calls; with ``x_bound``, :data:`START_POINTS` more for the
        pass over the declared box) and the most pairs kept.

    Returns
    -------
    PositionSearch
        Its ``pairs`` are neighbours under ``relation`` inside the domain.
    """
    # a declared input box adds a second first pass over it: its calls are added too
    out = PositionSearch(max_calls=max_calls + (0 if x_bound is None else START_POINTS))
    if relation.kind is not Neighbour.ROWS or data.n == 0:
        return out
    out.row = i = data.n // 2 if row is None else int(row)
    y_hi, y_lo = _targets(relation, y_bound, labels)
    seed = np.random.SeedSequence([int(v) for v in rng.integers(0, 2**32, size=4)])
    starts, lo, hi = _starts(data, x_bound, rng)
    dim = lo.size
    seen: dict[bytes, float] = {}

    def score(x: np.ndarray) -> float:
        key = x.tobytes()
        if key not in seen:
            if out.calls >= out.max_calls:
                return -math.inf
            pair = flip_pair(data, i, x, y_hi, y_lo)
            seen[key] = _coupled_score(out, mechanism, pair.d0, pair.d1, seed, pair.label)
        return seen[key]

    first = [(score(x), k) for k, x in enumerate(starts)]
    first.sort(key=lambda t: (-t[0], t[1]))
    finite = [s for s, _ in first if s > -math.inf]
    if not finite or max(finite) <= 0 or min(finite) == max(finite):
        out.flat = True  # the target moves nothing, or moves alike wherever the row sits:
        out = _swings(out, mechanism, data, i, y_hi, lo, hi, seed, max_pairs)  # the inputs
        return _cluster_moves(out, mechanism, data, i, starts[-START_POINTS:], lo, hi, seed,
                              max_pairs)
    found: list[tuple[float, np.ndarray]] = []
    near_lo, near_hi = _box(data, x_bound)  # the compass steps are sized to the data's box
    first_step = 0.5 * (near_hi - near_lo) / START_POINTS ** (1.0 / dim)
    chosen: list[int] = []  # the best starts, one per region (not within 4 steps of another)
    for s, k in first:
        if len(chosen) < REFINE_STARTS and s > 0 and not any(
                np.all(np.abs(starts[k] - starts[j]) <= 4 * first_step) for j in chosen):
            chosen.append(k)
    for k in chosen:
        found.append(_compass(starts[k], seen[starts[k].tobytes()], first_step, lo, hi, score,
                              out))
    found.sort(key=lambda t: -t[0])
    kept: list[np.ndarray] = []
    for s, x in found:
        if len(kept) >= max_pairs or not s > 0:
            break
        if any(np.all(np.abs(x - k) <= first_step) for k in kept):
            continue  # the same peak, reached from two starts
        kept.append(x)
        out.best.append({"x": [float(v) for v in x], "score": s})
        out.pairs.append(flip_pair(data, i, x, y_hi, y_lo, " (position search)"))
    return out


def _compass(x: np.ndarray, s: float, step: np.ndarray, lo: np.ndarray, hi: np.ndarray,
             score: Callable[[np.ndarray], float], out: PositionSearch
             ) -> tuple[float, np.ndarray]:
    """Compass search from ``x`` (score ``s``) inside ``[lo, hi]``: the best (score, place).

    Each coordinate is moved by ``± step`` in turn and the first move that raises the score
    is taken; when none does, the step is halved, at most :data:`_HALVINGS` times, and the
    search stops early once the allowance of calls is spent.
    """
    x = x.copy()
    for _ in range(_HALVINGS):
        if math.isinf(s) or out.calls >= out.max_calls:
            break
        moved = False
        for j in range(x.size):
            for sign in (1.0, -1.0):
                y = x.copy()
                y[j] = np.clip(y[j] + sign * step[j], lo[j], hi[j])
                sy = score(y)
                if sy > s:
                    x, s, moved = y, sy, True
                    break
        if not moved:
            step = step / 2
    return s, x


def _swings(out: PositionSearch, mechanism: Mechanism, data: Dataset, row: int, y: float,
            lo: np.ndarray, hi: np.ndarray, seed: np.random.SeedSequence,
            max_pairs: int) -> PositionSearch:
    """Pairs that move row ``row`` from one corner of the input box to another, target kept.

    When flipping the target moves the release nowhere, or alike everywhere, the inputs
    may still move it: a release of the inputs alone (a second-moment matrix, a projection
    on a public direction, a sketch) is most sensitive to a row moved between two corners
    that the box's diagonal never joins, such as ``(1, -1)`` and ``(-1, 1)`` for a contrast,
    or ``(1, 1)`` and ``(1, -1)`` for a cross moment. With :data:`SWING_CALLS` more
    coupled calls (on the search's one seed), every pair of corners is scored for up to
    three inputs; beyond that a coordinate ascent starts from the diagonal's two ends and
    flips one sign of either corner at a time while the score grows. The best
    ``max_pairs`` pairs that move the release are kept.
    """
    out.max_calls += SWING_CALLS
    dim = lo.size
    scores: dict[tuple[bytes, bytes], float] = {}

    def corner(signs: np.ndarray) -> np.ndarray:
        return np.where(signs > 0, hi, lo)

    def score(a: np.ndarray, b: np.ndarray) -> float:
        key = tuple(sorted((a.tobytes(), b.tobytes())))
        if key not in scores:
            if out.calls >= out.max_calls:
                return -math.inf
            d0, d1 = data.with_row(row, corner(a), y), data.with_row(row, corner(b), y)
            scores[key] = _coupled_score(out, mechanism, d0, d1, seed,
                                         f"row {row} at corners {a} and {b}")
        return scores[key]

    ends = (np.ones(dim), -np.ones(dim))
    if dim <= 3:  # every pair of the 2^dim corners: at most 28 calls
        signs = [np.array(c, dtype=float) for c in itertools.product((1.0, -1.0), repeat=dim)]
        for a, b in itertools.combinations(signs, 2):
            score(a, b)
    else:  # coordinate ascent from the diagonal's ends
        a, b = ends
        best = score(a, b)
        moved = True
        while moved and out.calls < out.max_calls:
            moved = False
            for j in range(2 * dim):
                a2, b2 = a.copy(), b.copy()
                (a2 if j < dim else b2)[j % dim] *= -1.0
                s2 = score(a2, b2)
                if s2 > best:
                    a, b, best, moved = a2, b2, s2, True
    ranked = sorted(((s, k) for k, s in scores.items() if s > 0), key=lambda t: -t[0])
    for s, (ka, kb) in ranked[:max_pairs]:
        xa, xb = corner(np.frombuffer(ka)), corner(np.frombuffer(kb))
        where = [", ".join(f"{v:.4g}" for v in x) for x in (xa, xb)]
        out.best.append({"x": [float(v) for v in xa], "x_to": [float(v) for v in xb],
                         "score": s})
        out.pairs.append(NeighbourPair(
            data.with_row(row, xa, y), data.with_row(row, xb, y),
            f"row {row} moved across the input box: x=({where[0]}) -> ({where[1]}), "
            f"y {y:+g} (position search)"))
    return out


def _cluster_moves(out: PositionSearch, mechanism: Mechanism, data: Dataset, row: int,
                   starts: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                   seed: np.random.SeedSequence, max_pairs: int) -> PositionSearch:
    """Pairs on a base whose inputs all sit at one corner of the box, one row moved out.

    A release of the inputs that compares them with public points of its own (a kernel
    two-sample statistic against a reference sample, a density at public points) can move
    most when the other rows sit far from those points and the one row lands among them:
    an interior point that no corner reaches, on a dataset unlike the user's. For each end
    of the box's diagonal, every input of D is placed there (targets kept), and row ``row``
    is moved from the corner to each of ``starts`` (the first pass's positions over the
    box), scored on the search's one seed; the best start of each corner is refined by
    compass search, with :data:`CLUSTER_CALLS` more coupled calls in all. The best move of
    each corner, if it moves the release, is kept (at most ``max_pairs``, the larger
    first), after the corner swings' pairs.
    """
    out.max_calls += CLUSTER_CALLS
    dim = lo.size
    step = 0.5 * (hi - lo) / START_POINTS ** (1.0 / dim)
    found: list[tuple[float, np.ndarray, Dataset, np.ndarray]] = []
    for corner in (lo, hi):
        base = Dataset(np.tile(corner, (data.n, 1)), data.y)
        seen: dict[bytes, float] = {}

        def score(x: np.ndarray, base: Dataset = base, seen: dict = seen) -> float:
            key = x.tobytes()
            if key not in seen:
                if out.calls >= out.max_calls:
                    return -math.inf
                where = ", ".join(f"{v:.4g}" for v in x)
                seen[key] = _coupled_score(out, mechanism, base, base.with_row(row, x,
                                                                               base.y[row]),
                                           seed, f"row {row} moved out of the cluster to "
                                                 f"x=({where})")
            return seen[key]

        first = [(score(x), k) for k, x in enumerate(starts)]
        s, k = max(first, key=lambda t: (t[0], -t[1]))
        if s > 0:
            s, x = _compass(starts[k], s, step, lo, hi, score, out)
            found.append((s, corner, base, x))
    kept = 0
    for s, corner, base, x in sorted(found, key=lambda t: -t[0]):
        if kept >= max_pairs:
            break
        where = [", ".join(f"{v:.4g}" for v in p) for p in (corner, x)]
        out.best.append({"x": [float(v) for v in corner], "x_to": [float(v) for v in x],
                         "score": s, "cluster": True})
        out.pairs.append(NeighbourPair(
            base, base.with_row(row, x, base.y[row]),
            f"every x at the corner ({where[0]}), row {row} moved to x=({where[1]}) "
            f"(position search)"))
        kept += 1
    return out


def with_positions(mechanism: Mechanism, survey: CouplingSurvey, data: Dataset,
                   relation: NeighbourRelation, rng: np.random.Generator, *,
                   y_bound: float | None = None, labels: Sequence[float] | None = None,
                   x_bound: float | None = None
                   ) -> tuple[CouplingSurvey, list[NeighbourPair]]:
    """The default path's grey-box step after the structure-boundary search.

    Under whole rows runs :func:`search_positions` unless
    :func:`~dpgp_audit.audit.boundary.skip_reason` says why not, surveys the pairs it
    keeps (at most :data:`~dpgp_audit.audit.boundary.BOUNDARY_RELEASES` releases per side,
    findings confirmed on a second seed as every other pair's) and returns the survey
    extended by them, with the search's record in ``positions``, and the pairs added.
    """
    if relation.kind is not Neighbour.ROWS:
        return survey, []
    why = skip_reason(survey)
    if why is not None:
        return dataclasses.replace(survey, positions={"skipped": why}), []
    search = search_positions(mechanism, data, relation, rng, y_bound=y_bound,
                              labels=labels, x_bound=x_bound)
    survey = survey.with_pairs(mechanism, search.pairs, rng, max_releases=BOUNDARY_RELEASES)
    return dataclasses.replace(survey, positions=search.as_dict()), list(search.pairs)
