"""Sensitivity checker: search neighbours for a query change above the proven bound (catalogue A.4).

A mechanism that implements :class:`~dpgp_audit.contract.SensitivityQuery`
states a deterministic query ``q``, the norm its proof uses and the bound
``Δ`` with ``norm(q(D) − q(D′)) <= Δ`` for all neighbours. Because ``q`` is
deterministic, one pair with a larger change is a **definitive
counterexample** (up to a relative floating-point tolerance); no statistics
are needed. Not finding one proves nothing: the largest value found is only a
lower bound on the true supremum.

The search, cheapest first (AUDITING.md §5.4):

1. **closed form** — under outputs-only neighbours an affine query has change
   ``t·c_i`` for a move ``t`` of target ``i``, so the supremum is
   ``d · max_i norm(c_i)`` exactly (checked for affinity first);
2. **extreme replacements** — the adversarial pairs of
   :func:`~dpgp_audit.audit.neighbours.neighbour_pairs` (y at ±d or ±b,
   far-away x, duplicate x, tiny N);
3. **whole-dataset bases** (issue 20 §4) — the other n − 1 rows placed structurally
   (:func:`~dpgp_audit.audit.neighbours.structural_pairs` with ``thorough=True``: all at
   one end, alternating ±bound, half at each end, on a round value, at the median; for
   whole rows also every input at a corner or at the centre of the data's box, where
   group and bin edges sit) with every move of three rows, and the full swing over
   cancelling rows (:func:`~dpgp_audit.audit.neighbours.full_swing_pairs`) and a few rows
   at one end crossing an order statistic
   (:func:`~dpgp_audit.audit.neighbours.tail_count_pairs`). Every such pair
   is a real pair of neighbours in the declared domain, so an excess found there is as
   definitive as one found at D;
4. **random search** over replacement records;
5. **differential evolution** (global, gradient-free) over the replacement —
   the new target and, for whole rows, the new input — for the most promising rows,
   on the base of the best pair so far (D, or the structural base that holds it);
6. **multi-start L-BFGS-B** polishing from the best points.

Local sensitivity at the user's D (pairs with D itself on one side) and the
searched global value (pairs where D is also modified) are reported separately.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from dpgp_audit._validation import check_rng
from dpgp_audit.audit.neighbours import (
    NeighbourPair,
    changed_rows,
    clip_inputs,
    full_swing_pairs,
    label_pairs,
    neighbour_pairs,
    on_labels,
    structural_pairs,
    tail_count_pairs,
)
from dpgp_audit.audit.result import AuditResult, Guarantee, Verdict
from dpgp_audit.contract import SensitivityQuery, same_release_shape
from dpgp_audit.dataset import Dataset
from dpgp_audit.norms import L1, L2, Norm
from dpgp_audit.privacy.claims import ApproxDP, Neighbour, NeighbourRelation

__all__ = ["check_sensitivity", "noise_norm", "witness_pair"]

# Objective value for infinite / rejected candidates: large, but its square (which
# differential_evolution takes for its convergence test) must stay finite.
_SENTINEL = 1e150


@dataclass
class _Search:
    """Book-keeping for one search: the best pair so far (global and local)."""

    query: Callable[[Dataset], np.ndarray]
    norm: Callable[[np.ndarray], float]
    base: Dataset
    best: float = -math.inf
    best_pair: NeighbourPair | None = None
    best_strategy: str = ""
    best_local: float = -math.inf
    evaluations: int = 0
    rejected: int = 0
    per_strategy: dict = field(default_factory=dict)
    relation: NeighbourRelation | None = None
    labels: tuple[float, ...] | None = None  # declared class labels: pairs are moved onto them
    x_bound: float | None = None  # a declared input bound: inputs are clipped into it
    noise_norm: Callable[[np.ndarray], float] | None = None  # the norm the claim's noise needs
    noise_best: float = -math.inf
    _cache: dict = field(default_factory=dict)

    def q(self, data: Dataset) -> np.ndarray | None:
        key = hash(data)
        if key in self._cache:
            return self._cache[key]
        self.evaluations += 1
        try:
            out = np.ravel(np.asarray(self.query(data), dtype=float))
        except ValueError:  # outside the mechanism's domain (e.g. y beyond its declared bound)
            self.rejected += 1
            out = None
        if len(self._cache) < 4096:
            self._cache[key] = out
        return out

    def value(self, pair: NeighbourPair, strategy: str) -> float:
        clipped = clip_inputs(pair, self.x_bound)  # a pair of the declared domain only
        if clipped is None:
            return -math.inf
        pair = clipped
        if self.labels is not None and self.relation is not None:
            on = on_labels([pair], self.relation, self.labels)  # off-label targets: nearest
            if not on:
                return -math.inf
            pair = on[0]
        q0, q1 = self.q(pair.d0), self.q(pair.d1)
        if q0 is None or q1 is None:
            return -math.inf
        same_release_shape(getattr(self.query, "__self__", self.query), (q0, q1), method="query")
        v = float(self.norm(q1 - q0))
        if math.isnan(v):
            v = -math.inf
        if self.noise_norm is not None:
            self.noise_best = max(self.noise_best, float(self.noise_norm(q1 - q0)))
        if v > self.per_strategy.get(strategy, -math.inf):
            self.per_strategy[strategy] = v
        if v > self.best:
            self.best, self.best_pair, self.best_strategy = v, pair, strategy
        if (pair.d0 == self.base or pair.d1 == self.base) and v > self.best_local:
            self.best_local = v
        return v


def witness_pair(result: AuditResult) -> NeighbourPair | None:
    """The witness pair recorded in an :class:`AuditResult`'s details, if any."""
    w = result.details.get("witness")
    return None if w is None else NeighbourPair.from_dict(w)


def _affine_columns(search: _Search, data: Dataset, d: float, rng: np.random.Generator,
                    y_bound: float | None = None) -> np.ndarray | None:
    """The columns ``c_i`` of an affine-in-y query, or ``None`` if the query is not affine.

    With a declared target bound the probes stay inside it: they start from the
    targets clipped to half the bound and move by at most half the bound.
    """
    n = data.n
    if y_bound is None:
        base, h = data, d
    else:
        base, h = Dataset(data.X, np.clip(data.y, -y_bound / 2, y_bound / 2)), min(d, y_bound / 2)
    q0 = search.q(base)
    if q0 is None:
        return None
    scale = max(1.0, float(np.abs(q0).max(initial=0.0)))
    # Affinity probes: q(y+u) + q(y−u) = 2 q(y) and q(y+u+v) − q(y+u) − q(y+v) + q(y) = 0.
    for _ in range(2):
        u = rng.uniform(-h, h, n) / (2 * math.sqrt(n))
        v = rng.uniform(-h, h, n) / (2 * math.sqrt(n))
        qs = [search.q(Dataset(base.X, base.y + w)) for w in (u, -u, u + v, v)]
        if any(q is None for q in qs):
            return None
        qu, qmu, quv, qv = qs
        tol = 1e-8 * scale
        if (np.abs(qu + qmu - 2 * q0).max(initial=0.0) > tol
                or np.abs(quv - qu - qv + q0).max(initial=0.0) > tol):
            return None
    cols = []
    for i in range(n):
        qi = search.q(base.with_target(i, float(base.y[i]) + h))
        if qi is None:
            return None
        cols.append((qi - q0) / h)
    return np.stack(cols, axis=1)


def check_sensitivity(mechanism: SensitivityQuery, data: Dataset, rng: np.random.Generator, *,
                      relation: NeighbourRelation | None = None, budget: int = 400,
                      rtol: float = 1e-9, y_bound: float | None = None,
                      labels: tuple[float, ...] | None = None,
                      x_bound: float | None = None,
                      de_rows: int = 2, lbfgs_starts: int = 4) -> AuditResult:
    """Search for a neighbour pair whose query change exceeds the claimed bound (catalogue A.4).

    Parameters
    ----------
    mechanism
        Implements :class:`~dpgp_audit.contract.SensitivityQuery` (``query``,
        ``norm``, ``sensitivity_bound()``) and usually ``claim``.
    data
        The base dataset D.
    rng
        Generator for the random parts of the search.
    relation
        Neighbour relation; default ``mechanism.claim.relation``.
    budget
        Rough cap on query evaluations for random search and the optimisers
        (the closed form and the extreme replacements are always run).
    rtol
        Relative tolerance: a change above ``bound · (1 + rtol)`` is a counterexample.
    y_bound
        Outputs only: a declared target bound the mechanism enforces (moves are clipped).
    labels
        Declared class labels (``PublicDomain(labels=...)``): every pair searched is moved
        onto them (:func:`~dpgp_audit.audit.neighbours.on_labels`), every row of D is set to
        every other label (so the local sensitivity over the labels is exact) and
        :func:`~dpgp_audit.audit.neighbours.label_pairs` are tried, and the closed form
        (which reads the query between labels) is skipped.
    x_bound
        A declared input bound (``PublicDomain(x_bound=...)``): every input searched is
        clipped into it (:func:`~dpgp_audit.audit.neighbours.clip_inputs`), so a
        counterexample is a pair of the declared domain.
    de_rows, lbfgs_starts
        How many rows get a differential-evolution search, and how many L-BFGS-B starts.

    Returns
    -------
    AuditResult
        ``auditor="sensitivity"``, ``quantity="sensitivity"``, ``estimate`` = the
        largest change found, ``claimed`` = the bound. VIOLATION with
        :attr:`Guarantee.COUNTEREXAMPLE` and ``details["witness"]`` when the bound is
        exceeded; otherwise NO_EVIDENCE with :attr:`Guarantee.SEARCH_LOWER_BOUND`.
        ``details`` also holds ``local_sensitivity`` (pairs containing D),
        ``global_searched``, ``closed_form`` (or ``None``), ``per_strategy``,
        ``evaluations`` and ``seconds``.
    """
    rng = check_rng(rng)
    if not isinstance(mechanism, SensitivityQuery):
        raise TypeError("check_sensitivity needs a mechanism with query(), norm and "
                        "sensitivity_bound() (the SensitivityQuery interface)")
    if relation is None:
        relation = mechanism.claim.relation
    bound = float(mechanism.sensitivity_bound())
    if not (bound >= 0 and math.isfinite(bound)):
        raise ValueError(f"sensitivity_bound() must be finite and >= 0, got {bound!r}")
    budget = int(budget)
    t_start = time.perf_counter()
    # the exact norm's lower bound where the norm offers one (Mahalanobis: no rounding read
    # as an infinite change), so that a violation found is one of the exact norm
    measure = getattr(mechanism.norm, "lower_bound", mechanism.norm)
    # a selection (DiscreteRelease) adds no noise to the query's coordinates
    noise = (None if callable(getattr(mechanism, "log_probabilities", None))
             else noise_norm(getattr(mechanism, "claim", None), mechanism.norm))
    search = _Search(mechanism.query, measure, data, relation=relation,
                     labels=None if labels is None else tuple(sorted(labels)),
                     x_bound=x_bound, noise_norm=None if noise is None else noise[1])
    closed_form = None

    # 1. closed form (outputs only, affine query), or every row's moves between labels
    if labels is not None:
        for pair in _every_label_move(data, relation, labels) + label_pairs(data, relation,
                                                                             labels):
            for p in (pair, pair.swapped()):
                search.value(p, "labels")
    elif relation.kind is Neighbour.OUTPUTS:
        d = relation.d
        if y_bound is None or 2 * y_bound >= d:
            cols = _affine_columns(search, data, d, rng, y_bound)
            if cols is not None:
                norms = np.array([measure(d * cols[:, i]) for i in range(cols.shape[1])])
                i = int(np.argmax(norms))
                closed_form = float(norms[i])
                lo = data.with_target(i, -d / 2 if y_bound is None else max(-d / 2, -y_bound))
                search.value(NeighbourPair(lo, lo.with_target(i, float(lo.y[i]) + d),
                                           f"closed form: y[{i}] moved by d"), "closed_form")
                yi = float(data.y[i])
                up = yi + d if y_bound is None else min(yi + d, y_bound)
                down = yi - d if y_bound is None else max(yi - d, -y_bound)
                new_y = up if abs(up - yi) >= abs(down - yi) else down
                search.value(NeighbourPair(data, data.with_target(i, new_y),
                                           f"closed form at D: y[{i}] -> {new_y:.4g}"),
                             "closed_form")

    # 2. extreme replacements
    for pair in neighbour_pairs(data, relation, rng, n_random=0, max_rows=min(data.n, 12),
                                y_bound=y_bound, x_bound=x_bound):
        for p in (pair, pair.swapped()):
            search.value(p, "extremes")

    # 3. whole-dataset bases: the other rows placed structurally, and the full swing
    for pair in (structural_pairs(data, relation, y_bound=y_bound, thorough=True)
                 + full_swing_pairs(data, relation, y_bound=y_bound)
                 + tail_count_pairs(data, relation, y_bound=y_bound)):
        for p in (pair, pair.swapped()):
            search.value(p, "structural bases")

    # 4. random search over replacements (and, for whole rows, over base targets)
    n_rand = max(0, budget // 4)
    for pair in _random_pairs(data, relation, rng, n_rand, y_bound):
        search.value(pair, "random")

    # 5–6. differential evolution + multi-start L-BFGS-B on the most promising rows, on the
    # base of the best pair so far when a structural base holds it
    if search.best < bound * (1 + rtol) or not math.isfinite(search.best):
        opt_base = data
        if search.best_strategy == "structural bases" and search.best_pair is not None:
            opt_base = search.best_pair.d0
        _optimise(search, opt_base, relation, rng, budget=max(0, budget - n_rand),
                  rows=de_rows, starts=lbfgs_starts, y_bound=y_bound)

    best = search.best
    violated = best > bound * (1.0 + rtol)
    details = {
        "norm": getattr(mechanism.norm, "name", type(mechanism.norm).__name__),
        "relation": relation.describe(),
        "local_sensitivity": _json_float(search.best_local),
        "global_searched": _json_float(best),
        "closed_form": closed_form,
        "ratio": _json_float(best / bound) if bound > 0 else _json_float(math.inf),
        "per_strategy": {k: _json_float(v) for k, v in search.per_strategy.items()},
        "evaluations": search.evaluations,
        "rejected_datasets": search.rejected,
        "rtol": rtol,
        "seconds": time.perf_counter() - t_start,
    }
    if search.best_pair is not None:
        details["witness"] = search.best_pair.as_dict()
    # named only where the two norms part: on a scalar query (or a change along one
    # coordinate) they agree, and a violation is then the declared norm's alone
    if noise is not None and search.noise_best > bound * (1.0 + rtol) \
            and search.noise_best > best * (1.0 + rtol):
        details["noise_norm"] = {"noise": noise[0], "norm": noise[1].name,
                                 "largest": _json_float(search.noise_best),
                                 "ratio": _json_float(search.noise_best / bound)
                                 if bound > 0 else _json_float(math.inf)}
    return AuditResult(
        auditor="sensitivity",
        verdict=Verdict.VIOLATION if violated else Verdict.NO_EVIDENCE,
        guarantee=Guarantee.COUNTEREXAMPLE if violated else Guarantee.SEARCH_LOWER_BOUND,
        estimate=float(best),
        claimed=bound,
        quantity="sensitivity",
        alpha=None,
        details=details,
    )


def noise_norm(claim: object, declared: object) -> tuple[str, Norm] | None:
    """The norm that i.i.d. noise of the claim's kind needs, where it exceeds ``declared``.

    Coordinate-wise Laplace noise gives pure ε-DP for an L1 bound and coordinate-wise
    Gaussian noise gives its guarantee for an L2 bound (Dwork & Roth 2014, Thms 3.6 and
    3.22). Two declarations are smaller than that: L2 under a pure claim and L∞ under any
    other. Each suits only noise whose density falls with the declared norm (a K-norm
    mechanism), which the checker cannot see, so it is named, not judged. Returns ``(the
    noise that needs it, the norm)`` for those two and ``None`` otherwise: a declaration
    in the noise's own norm or a larger one, a Mahalanobis or RKHS norm, and L∞ under a
    pure claim, the utility sensitivity of report noisy max and of the exponential
    mechanism (Dwork & Roth, Claim 3.9 and Thm 3.10). On a scalar query the norms agree,
    and the caller names the noise's norm only where its largest change exceeds the
    declared norm's (so never there, a violation or not).
    """
    name = getattr(declared, "name", None)
    if claim is None or name not in ("L2", "Linf"):
        return None
    pure = isinstance(claim, ApproxDP) and claim.delta == 0
    if pure and name == "L2":
        return "i.i.d. Laplace noise (pure epsilon-DP)", L1()
    if not pure and name == "Linf":
        return "i.i.d. Gaussian noise", L2()
    return None


def _every_label_move(data: Dataset, relation: NeighbourRelation,
                      labels: tuple[float, ...]) -> list[NeighbourPair]:
    """Every row of D set to every other declared label it may reach: the exact local search."""
    out = []
    for i in range(data.n):
        yi = float(data.y[i])
        for v in labels:
            if v == yi or (relation.kind is Neighbour.OUTPUTS and abs(v - yi) > relation.d):
                continue
            moved = data.with_target(i, v) if relation.kind is Neighbour.OUTPUTS else \
                data.with_row(i, np.asarray(data.X[i]), v)
            out.append(NeighbourPair(data, moved, f"labels: y[{i}] -> {v:g}"))
    return out


def _json_float(v: float) -> float | str:
    return v if math.isfinite(v) else str(v)


def _random_pairs(data: Dataset, relation: NeighbourRelation, rng: np.random.Generator,
                  count: int, y_bound: float | None) -> list[NeighbourPair]:
    out: list[NeighbourPair] = []
    if count <= 0:
        return out
    if relation.kind is Neighbour.OUTPUTS:
        d = relation.d
        for _ in range(count):
            i = int(rng.integers(data.n))
            t = float(rng.uniform(-d, d))
            new = float(data.y[i]) + t
            if y_bound is not None:
                new = float(np.clip(new, -y_bound, y_bound))
            out.append(NeighbourPair(data, data.with_target(i, new), f"random: y[{i}] {t:+.3g}"))
        return out
    b = relation.d
    X = np.asarray(data.X)
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi - lo > 0, hi - lo, 1.0)
    base = Dataset(X, np.clip(data.y, -b, b))
    for k in range(count):
        i = int(rng.integers(data.n))
        x_new = rng.uniform(lo - span, hi + span)
        y_new = float(rng.uniform(-b, b))
        d0 = base
        if k % 2:  # global search: also move the base record to an extreme
            d0 = base.with_row(i, rng.uniform(lo - span, hi + span), float(rng.choice([-b, b])))
        out.append(NeighbourPair(d0, d0.with_row(i, x_new, y_new), f"random: row {i}"))
    return out


def _optimise(search: _Search, data: Dataset, relation: NeighbourRelation,
              rng: np.random.Generator, *, budget: int, rows: int, starts: int,
              y_bound: float | None) -> None:
    """Differential evolution then multi-start L-BFGS-B over one row's replacement."""
    if budget <= 0 or rows <= 0:
        return
    outputs = relation.kind is Neighbour.OUTPUTS
    X = np.asarray(data.X)
    lo_x, hi_x = X.min(axis=0), X.max(axis=0)
    span = np.where(hi_x - lo_x > 0, hi_x - lo_x, 1.0)
    if outputs:
        d = relation.d
        base = data
        bounds = [(-d, d)]
    else:
        b = relation.d
        base = Dataset(X, np.clip(data.y, -b, b))
        # variables: new x (dim), new y, and the base record's y (global search)
        bounds = [(float(lo_x[j] - 2 * span[j]), float(hi_x[j] + 2 * span[j]))
                  for j in range(data.dim)] + [(-b, b), (-b, b)]

    def make_pair(i: int, z: np.ndarray) -> NeighbourPair:
        if outputs:
            new = float(base.y[i]) + float(z[0])
            if y_bound is not None:
                new = float(np.clip(new, -y_bound, y_bound))
            return NeighbourPair(base, base.with_target(i, new), f"optimised: y[{i}] {z[0]:+.4g}")
        x_new, y_new, y_old = z[:-2], float(z[-2]), float(z[-1])
        d0 = base.with_row(i, base.X[i], y_old)
        return NeighbourPair(d0, d0.with_row(i, x_new, y_new),
                             f"optimised: row {i} (y={y_old:.3g}) -> "
                             f"x={np.round(x_new, 4).tolist()}, y={y_new:.3g}")

    # Rows to optimise: those of the best pairs found so far, then random.
    cand = []
    if search.best_pair is not None:
        best = search.best_pair
        if best.d0.n == data.n and best.d1.n == data.n:
            cand += [int(i) for i in changed_rows(best.d0, best.d1)]
    cand += [int(i) for i in rng.permutation(data.n)]
    chosen = list(dict.fromkeys(cand))[:rows]
    per_row = max(8, budget // max(1, len(chosen)))
    for i in chosen:
        def objective(z: np.ndarray, i: int = i) -> float:
            v = search.value(make_pair(i, np.asarray(z)), "optimiser")
            return -v if math.isfinite(v) else (-_SENTINEL if v > 0 else _SENTINEL)

        popsize = 5
        maxiter = max(1, per_row // (2 * popsize * len(bounds)) - 1)
        try:
            res = optimize.differential_evolution(
                objective, bounds, maxiter=maxiter, popsize=popsize, tol=1e-10, polish=False,
                rng=rng, init="latinhypercube", updating="immediate")
            starts_z = [res.x]
        except (ValueError, FloatingPointError):
            starts_z = []
        if not math.isfinite(search.best):
            return
        lows = np.array([lo for lo, _ in bounds])
        highs = np.array([hi for _, hi in bounds])
        starts_z += [rng.uniform(lows, highs) for _ in range(max(0, starts - 1))]
        for z0 in starts_z:
            try:
                optimize.minimize(objective, z0, method="L-BFGS-B", bounds=bounds,
                                  options={"maxfun": max(10, per_row // (2 * max(1, starts)))})
            except (ValueError, FloatingPointError):
                continue
