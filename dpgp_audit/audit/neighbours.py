"""Neighbouring datasets for audits: both relations, adversarial candidates first (catalogue A.1).

An audit can only refute a claim on the pairs (D, D′) it looks at, so the pair
generator decides what the auditors can see. :func:`neighbour_pairs` returns

* **outputs only** (X public, one ``|y_i − y_i′| <= d``): every chosen row moved
  by ``+d`` and ``−d`` (clipped to a declared target bound, when there is one),
  the pair with the row *at* the bound on each side, and random moves;
* **whole rows** (one ``(x_i, y_i)`` substituted, ``|y| <= b``): a target flipped
  from ``+b`` to ``−b`` (the largest target change, 2b), outlier rows with x far
  outside the data and y at ``±b``, a duplicate of another row's x, and random
  substitutions drawn from the data's bounding box; plus tiny-N variants
  (the first one or two rows only), where one record weighs most.

Rows are chosen adversarially when the dataset is large: the most isolated
inputs, the extreme inputs and the extreme targets, then random rows.

The auditors search in two phases (AUDITING.md §3.1): :func:`rank_pairs` scores
every pair cheaply (the white-box μ, or the query change relative to the
sensitivity bound, or a pilot sample) — exploration — and only the top few
pairs are audited on **fresh** samples with a Bonferroni correction over the
pairs confirmed (:mod:`dpgp_audit.audit.runner`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import check_rng
from dpgp_audit.contract import DiscreteRelease, GaussianRelease, Mechanism, SensitivityQuery
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.claims import Neighbour, NeighbourRelation

__all__ = [
    "NeighbourPair",
    "adversarial_rows",
    "dataset_from_dict",
    "dataset_to_dict",
    "is_neighbour",
    "neighbour_pairs",
    "pair_score",
    "rank_pairs",
]


def dataset_to_dict(data: Dataset) -> dict:
    """JSON-ready form of a dataset (lists of floats)."""
    return {"X": np.asarray(data.X).tolist(), "y": np.asarray(data.y).tolist()}


def dataset_from_dict(d: dict) -> Dataset:
    """Inverse of :func:`dataset_to_dict`."""
    return Dataset(np.asarray(d["X"], dtype=float), np.asarray(d["y"], dtype=float))


@dataclass(frozen=True)
class NeighbourPair:
    """Two neighbouring datasets and a label saying how they differ.

    Attributes
    ----------
    d0, d1
        The datasets D and D′.
    label
        Human-readable description, e.g. ``"y[3] + d"`` or ``"row 3 -> far x, y=-b"``.
    """

    d0: Dataset
    d1: Dataset
    label: str

    def swapped(self) -> NeighbourPair:
        """The same pair in the other order (DP must hold in both)."""
        return NeighbourPair(self.d1, self.d0, f"swap({self.label})")

    def as_dict(self) -> dict:
        """JSON-ready form (lists), inverse of :meth:`from_dict`."""
        return {"label": self.label, "d0": dataset_to_dict(self.d0),
                "d1": dataset_to_dict(self.d1)}

    @classmethod
    def from_dict(cls, d: dict) -> NeighbourPair:
        """Rebuild a pair from :meth:`as_dict` output (e.g. a JSON report's witness)."""
        return cls(dataset_from_dict(d["d0"]), dataset_from_dict(d["d1"]), str(d["label"]))


def is_neighbour(d0: Dataset, d1: Dataset, relation: NeighbourRelation,
                 *, atol: float = 1e-12) -> bool:
    """True when ``d0`` and ``d1`` are neighbours under ``relation``.

    Outputs only: same inputs and exactly one target moved by at most ``d``.
    Whole rows: same size, at most one row differs, and every target within ``|y| <= d``.
    """
    if d0.n != d1.n or d0.dim != d1.dim:
        return False
    if relation.kind is Neighbour.OUTPUTS:
        if not d0.same_inputs(d1):
            return False
        diff = np.abs(d0.y - d1.y)
        return int(np.count_nonzero(diff > 0)) <= 1 and float(diff.max(initial=0.0)) <= \
            relation.d + atol
    rows = np.any(d0.X != d1.X, axis=1) | (d0.y != d1.y)
    in_bound = (np.all(np.abs(d0.y) <= relation.d + atol)
                and np.all(np.abs(d1.y) <= relation.d + atol))
    return int(np.count_nonzero(rows)) <= 1 and bool(in_bound)


def adversarial_rows(data: Dataset, k: int, rng: np.random.Generator) -> list[int]:
    """Up to ``k`` row indices, most dangerous first.

    Order: the most isolated input (largest distance to its nearest neighbour),
    the smallest and largest input along each axis, the largest |y|, then the
    remaining rows by isolation, then random ones. All rows when ``n <= k``.
    """
    rng = check_rng(rng)
    n = data.n
    if n <= k:
        return list(range(n))
    X = np.asarray(data.X)
    d2 = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    np.fill_diagonal(d2, np.inf)
    isolation = np.min(d2, axis=1)
    order: list[int] = []

    def add(i: int) -> None:
        if i not in order and len(order) < k:
            order.append(int(i))

    by_isolation = np.argsort(-isolation, kind="stable")
    add(by_isolation[0])
    for j in range(data.dim):
        add(int(np.argmin(X[:, j])))
        add(int(np.argmax(X[:, j])))
    add(int(np.argmax(np.abs(data.y))))
    n_iso = max(1, (k - len(order)) // 2)
    for i in by_isolation[1:1 + n_iso]:
        add(int(i))
    rest = [i for i in rng.permutation(n) if int(i) not in order]
    for i in rest:
        add(int(i))
    return order


def _far_input(data: Dataset, scale: float = 10.0) -> np.ndarray:
    """An input far outside the data: the bounding box's top corner moved ``scale`` widths out."""
    X = np.asarray(data.X)
    lo, hi = X.min(axis=0), X.max(axis=0)
    width = np.where(hi - lo > 0, hi - lo, 1.0)
    return hi + scale * width


def _clip(value: float, y_bound: float | None) -> float:
    return value if y_bound is None else float(np.clip(value, -y_bound, y_bound))


def neighbour_pairs(data: Dataset, relation: NeighbourRelation, rng: np.random.Generator, *,
                    n_random: int = 4, adversarial: bool = True, max_rows: int = 6,
                    y_bound: float | None = None, tiny_n: bool | None = None
                    ) -> list[NeighbourPair]:
    """Candidate neighbouring pairs (D, D′) for ``relation`` (catalogue A.1).

    Parameters
    ----------
    data
        The base dataset (the user's D).
    relation
        The claim's neighbour relation (``claim.relation``).
    rng
        Generator for the row choice and the random substitutions.
    n_random
        Number of random neighbours added after the adversarial ones.
    adversarial
        Include the adversarial candidates (default). ``False`` gives random pairs only.
    max_rows
        How many rows (chosen by :func:`adversarial_rows`) get adversarial edits.
    y_bound
        Outputs only: a declared bound ``|y| <= y_bound`` the mechanism enforces; moved
        targets are clipped into it and the "at the bound" pairs use it. Ignored for
        whole rows (the relation's ``d`` is the target bound there).
    tiny_n
        Add tiny-dataset variants (first one and two rows). Default: on for whole rows
        (the mechanism is defined for any size), off for outputs only (X is public and
        fixed, so the size is part of the mechanism).

    Returns
    -------
    list of NeighbourPair
        Every pair satisfies :func:`is_neighbour` under ``relation``.
    """
    rng = check_rng(rng)
    if not isinstance(relation, NeighbourRelation):
        raise TypeError(f"relation must be a NeighbourRelation, got {type(relation).__name__}")
    n_random = int(n_random)
    if n_random < 0:
        raise ValueError(f"n_random must be >= 0, got {n_random}")
    if tiny_n is None:
        tiny_n = relation.kind is Neighbour.ROWS
    pairs: list[NeighbourPair] = []
    rows = adversarial_rows(data, max_rows, rng) if adversarial else []
    if relation.kind is Neighbour.OUTPUTS:
        d = relation.d
        pairs += _outputs_pairs(data, rows, d, y_bound)
        for _ in range(n_random):
            i = int(rng.integers(data.n))
            delta = float(rng.uniform(-d, d))
            new = _clip(float(data.y[i]) + delta, y_bound)
            pairs.append(NeighbourPair(data, data.with_target(i, new),
                                       f"random: y[{i}] {delta:+.3g}"))
        if tiny_n:
            for m in (1, 2):
                if data.n > m:
                    small = Dataset(data.X[:m], data.y[:m], data.name)
                    pairs += _outputs_pairs(small, [0], d, y_bound, prefix=f"N={m}: ")
    else:
        b = relation.d
        base = _clip_dataset(data, b)
        pairs += _rows_pairs(base, rows, b, rng)
        X = np.asarray(base.X)
        lo, hi = X.min(axis=0), X.max(axis=0)
        span = np.where(hi - lo > 0, hi - lo, 1.0)
        for _ in range(n_random):
            i = int(rng.integers(base.n))
            x_new = rng.uniform(lo - 0.5 * span, hi + 0.5 * span)
            y_new = float(rng.uniform(-b, b))
            pairs.append(NeighbourPair(base, base.with_row(i, x_new, y_new),
                                       f"random: row {i} -> x={np.round(x_new, 3).tolist()}, "
                                       f"y={y_new:.3g}"))
        if tiny_n:
            for m in (1, 2):
                if base.n > m:
                    small = Dataset(base.X[:m], base.y[:m], base.name)
                    pairs += _rows_pairs(small, [0], b, rng, prefix=f"N={m}: ", far_only=True)
    return pairs


def _clip_dataset(data: Dataset, b: float) -> Dataset:
    if np.all(np.abs(data.y) <= b):
        return data
    return Dataset(data.X, np.clip(data.y, -b, b), data.name)


def _outputs_pairs(data: Dataset, rows: Sequence[int], d: float, y_bound: float | None,
                   prefix: str = "") -> list[NeighbourPair]:
    out: list[NeighbourPair] = []
    for i in rows:
        yi = float(data.y[i])
        for sign, tag in ((1.0, "+"), (-1.0, "-")):
            new = _clip(yi + sign * d, y_bound)
            if new != yi:
                out.append(NeighbourPair(data, data.with_target(i, new),
                                         f"{prefix}y[{i}] {tag} d"))
        if y_bound is not None and 2 * y_bound <= d + 1e-12:
            lo, hi = data.with_target(i, -y_bound), data.with_target(i, y_bound)
            out.append(NeighbourPair(lo, hi, f"{prefix}y[{i}]: -bound -> +bound"))
        else:
            # both ends of a full move of size d, centred on 0 (|y| as small as allowed)
            lo = data.with_target(i, _clip(-d / 2, y_bound))
            hi = data.with_target(i, _clip(d / 2, y_bound))
            if lo != hi:
                out.append(NeighbourPair(lo, hi, f"{prefix}y[{i}]: -d/2 -> +d/2"))
    return out


def _rows_pairs(data: Dataset, rows: Sequence[int], b: float, rng: np.random.Generator,
                prefix: str = "", far_only: bool = False) -> list[NeighbourPair]:
    out: list[NeighbourPair] = []
    far = _far_input(data)
    for i in rows:
        xi = np.asarray(data.X[i])
        hi_row = data.with_row(i, xi, b)
        out.append(NeighbourPair(hi_row, data.with_row(i, xi, -b),
                                 f"{prefix}row {i}: y=+b -> y=-b"))
        for y_new, tag in ((b, "+b"), (-b, "-b")):
            out.append(NeighbourPair(data, data.with_row(i, far, y_new),
                                     f"{prefix}row {i} -> far x, y={tag}"))
        if far_only or data.n < 2:
            continue
        j = int((i + 1 + rng.integers(data.n - 1)) % data.n)
        y_dup = -math.copysign(b, float(data.y[j]) if data.y[j] != 0 else 1.0)
        out.append(NeighbourPair(data, data.with_row(i, data.X[j], y_dup),
                                 f"{prefix}row {i} -> duplicate x[{j}], y={y_dup:+g}"))
    return out


def pair_score(mechanism: Mechanism, pair: NeighbourPair) -> float:
    """A cheap, sample-free measure of how distinguishable a pair is (exploration only).

    * :class:`GaussianRelease` with equal covariances: the white-box μ,
      ``‖Σ^{-1/2}(m₀ − m₁)‖`` (``inf`` if the difference leaves the range of Σ);
      with unequal covariances ``inf`` (rank it first; the auditors decide).
    * :class:`DiscreteRelease` (finite outputs): the exact pure-DP privacy loss
      ``max_k |log p_k(D) − log p_k(D′)|``.
    * otherwise :class:`SensitivityQuery`: ``norm(q(D) − q(D′)) / bound``.
    * otherwise ``nan`` (rank by a pilot sample instead, see :func:`rank_pairs`).
    """
    from dpgp_audit.norms import Mahalanobis

    if isinstance(mechanism, GaussianRelease):
        m0, m1 = np.ravel(mechanism.mean(pair.d0)), np.ravel(mechanism.mean(pair.d1))
        c0 = np.atleast_2d(mechanism.cov(pair.d0))
        c1 = np.atleast_2d(mechanism.cov(pair.d1))
        if not np.allclose(c0, c1, rtol=1e-10, atol=1e-14 * max(1.0, float(np.abs(c0).max()))):
            return math.inf
        return Mahalanobis(c0)(m1 - m0)
    if isinstance(mechanism, DiscreteRelease):
        lp0 = np.ravel(mechanism.log_probabilities(pair.d0))
        lp1 = np.ravel(mechanism.log_probabilities(pair.d1))
        both = np.isfinite(lp0) & np.isfinite(lp1)
        if np.any(np.isfinite(lp0) != np.isfinite(lp1)):
            return math.inf  # an output possible under one dataset only
        return float(np.max(np.abs(lp0[both] - lp1[both]))) if both.any() else 0.0
    if isinstance(mechanism, SensitivityQuery):
        diff = np.ravel(mechanism.query(pair.d1)) - np.ravel(mechanism.query(pair.d0))
        return mechanism.norm(diff) / float(mechanism.sensitivity_bound())
    return math.nan


def _pilot_score(mechanism: Mechanism, pair: NeighbourPair, n: int,
                 rng: np.random.Generator) -> float:
    """Standardised mean difference from a small pilot sample (black-box exploration)."""
    a = np.asarray(mechanism.sample(pair.d0, n, rng), dtype=float).reshape(n, -1)
    b = np.asarray(mechanism.sample(pair.d1, n, rng), dtype=float).reshape(n, -1)
    sd = np.sqrt(0.5 * (a.var(axis=0) + b.var(axis=0)))
    diff = np.abs(a.mean(axis=0) - b.mean(axis=0))
    z = np.where(sd > 0, diff / np.where(sd > 0, sd, 1.0), np.where(diff > 0, np.inf, 0.0))
    # Distinct-value mismatch catches deterministic and discrete releases.
    return float(np.max(z)) if z.size else 0.0


def rank_pairs(mechanism: Mechanism, pairs: Sequence[NeighbourPair], rng: np.random.Generator,
               *, top: int = 3, pilot_n: int = 200) -> list[tuple[NeighbourPair, float]]:
    """Exploratory phase: score every pair cheaply and return the ``top`` most distinguishable.

    Uses :func:`pair_score` (white-box μ or sensitivity ratio; no samples) where the
    mechanism offers it, otherwise a pilot sample of ``pilot_n`` outputs per side
    drawn from ``rng``. The pilot samples must **not** be reused for the
    confirmatory audit: pass a different generator to the auditors.

    Pairs whose datasets the mechanism rejects (``ValueError``, e.g. a size it
    was not built for) are dropped.
    """
    rng = check_rng(rng)
    scored: list[tuple[NeighbourPair, float]] = []
    for pair in pairs:
        try:
            s = pair_score(mechanism, pair)
            if math.isnan(s):
                s = _pilot_score(mechanism, pair, pilot_n, rng)
        except ValueError:
            continue
        scored.append((pair, s))
    scored.sort(key=lambda t: -t[1] if not math.isnan(t[1]) else math.inf)
    return scored[:max(1, int(top))]
