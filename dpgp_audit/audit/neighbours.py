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
  (the first one or two rows only), where one record weighs most;
* **all answers** (every query answer moves by up to ``d`` at once): the
  multi-coordinate patterns of the SVT / noisy-max literature — all up, half up
  and half down, one up and the rest down, … (StatDP, DP-Sniper).

Issue 15 §1 adds, for the first two relations:

* **domain-end pairs**: all targets equal (spread 0) or all at the bound, one row
  moved — where a noise scale, clip bound or covariance computed from the private
  targets is most extreme;
* **boundary pairs from the data's own values**: ties, quantiles, targets exactly on
  round values (where hand-written bins and grids put their edges), x exactly at
  the corners of the data's input box;
* with a ``query`` (:func:`query_edge_pairs`): pairs where the query jumps, found by
  scanning one target over its range; the runner adds them to every auditor's pairs.

Issue 20 §4 adds, for the first two relations:

* **the declared domain** (``y_bound``; the runner passes the claim's
  ``domain.y_bound``): a move that would leave ``|y| <= y_bound`` is moved *to* the
  bound instead of being dropped, and when the bound is within four moves of zero the
  domain ends include every target at ``−bound`` and at ``+bound``;
* **structural bases** (:func:`structural_pairs`): the *other* rows placed where grouped,
  binned and clipped statistics are most fragile — all at one end, alternating ``±s``,
  half at each end, all on a round value, all at the data's median; for whole rows also
  every input at the data's lower corner or at its centre (group and bin edges) — and one
  row moved out of that structure;
* **tail counts** (:func:`tail_count_pairs`): a few rows (2, 3, or just past 5 %, 10 %
  or 25 % of them) at the low end and the rest at the high end, one of the few moved
  across, where a statistic clipped or trimmed at the data's own order statistics jumps;
* **full swing** (:func:`full_swing_pairs`): the other rows cancel (alternating signs, or
  all 0) and one central row flips from ``+a`` to ``−a``, the largest move the relation
  allows (``a = b`` for whole rows, ``min(bound, d/2)`` for outputs only), where a
  clipped statistic that saturates on the user's data does not.

**Declared class labels** (``PublicDomain(labels=...)``, :func:`domain_labels`): the
runner moves every pair onto the labels (:func:`on_labels`: off-label targets to the
nearest label, pairs that stop being neighbours dropped) and adds each row's moves between
labels (:func:`label_pairs`), so no auditor sees a dataset outside the domain.

The grey-box auditor adds, after its survey, pairs across a **structure boundary**
(:class:`BasePath`, :func:`structure_paths`; the search is
:mod:`~dpgp_audit.audit.boundary`): paths of whole datasets along which a calibration
read off the targets can flip, and one row moved across the place where it does.

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from dpgp_audit._validation import check_rng
from dpgp_audit.contract import (
    ContractError,
    DiscreteRelease,
    GaussianRelease,
    Mechanism,
    SensitivityQuery,
    checked_sample,
    same_release_shape,
)
from dpgp_audit.dataset import Dataset
from dpgp_audit.norms import row_norms
from dpgp_audit.privacy.claims import Neighbour, NeighbourRelation

__all__ = [
    "COVERAGE_ROWS",
    "GROUP_SIZES",
    "BasePath",
    "LabelCountPath",
    "PILOT_LEAD_Z",
    "NeighbourPair",
    "StructurePath",
    "adversarial_rows",
    "changed_rows",
    "box_corner_pairs",
    "clip_inputs",
    "coverage_pairs",
    "dataset_from_dict",
    "dataset_to_dict",
    "domain_labels",
    "domain_x_bound",
    "domain_y_bound",
    "full_swing_pairs",
    "group_size_pairs",
    "is_neighbour",
    "label_count_paths",
    "label_pairs",
    "neighbour_pairs",
    "on_labels",
    "pair_score",
    "query_edge_pairs",
    "rank_pairs",
    "smallest_accepted_size",
    "structural_pairs",
    "structure_paths",
    "tail_count_pairs",
    "tail_counts",
    "tiny_pairs",
    "within_inputs",
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


def changed_rows(d0: Dataset, d1: Dataset) -> np.ndarray:
    """The indices of the rows (input or target) that differ between two datasets of one size
    and width.
    """
    return np.flatnonzero(np.any(np.asarray(d0.X) != np.asarray(d1.X), axis=1)
                          | (np.asarray(d0.y) != np.asarray(d1.y)))


def is_neighbour(d0: Dataset, d1: Dataset, relation: NeighbourRelation,
                 *, atol: float = 1e-12) -> bool:
    """True when ``d0`` and ``d1`` are neighbours under ``relation``.

    Outputs only: same inputs and exactly one target moved by at most ``d``.
    All answers: same inputs and every target (answer) moved by at most ``d``.
    Whole rows: same size, at most one row differs, and every target within ``|y| <= d``.
    """
    if d0.n != d1.n or d0.dim != d1.dim:
        return False
    if relation.kind is Neighbour.ANSWERS:
        return d0.same_inputs(d1) and float(np.max(np.abs(d0.y - d1.y), initial=0.0)) <= \
            relation.d + atol
    if relation.kind is Neighbour.OUTPUTS:
        if not d0.same_inputs(d1):
            return False
        diff = np.abs(d0.y - d1.y)
        return int(np.count_nonzero(diff > 0)) <= 1 and float(diff.max(initial=0.0)) <= \
            relation.d + atol
    rows = changed_rows(d0, d1)
    in_bound = (np.all(np.abs(d0.y) <= relation.d + atol)
                and np.all(np.abs(d1.y) <= relation.d + atol))
    return rows.size <= 1 and bool(in_bound)


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


def _alternating(n: int) -> np.ndarray:
    """``+1, -1, +1, …`` of length n: targets that cancel in pairs."""
    return np.where(np.arange(n) % 2 == 0, 1.0, -1.0)


def _far_input(data: Dataset, scale: float = 10.0) -> np.ndarray:
    """An input far outside the data: the bounding box's top corner moved ``scale`` widths out."""
    X = np.asarray(data.X)
    lo, hi = X.min(axis=0), X.max(axis=0)
    width = np.where(hi - lo > 0, hi - lo, 1.0)
    return hi + scale * width


def _declared_domain(holders: Sequence[object]) -> object | None:
    """The ``domain`` of the first holder (a claim, a mechanism) that declares a target bound."""
    for holder in holders:
        domain = getattr(holder, "domain", None)
        if getattr(domain, "y_bound", None) is not None:
            return domain
    return None


def domain_y_bound(*holders: object) -> float | None:
    """The declared target bound of the first holder (a claim, a mechanism) that has one.

    ``holder.domain.y_bound`` (:class:`~dpgp_audit.privacy.domain.PublicDomain`); ``None``
    when none declares a domain.
    """
    domain = _declared_domain(holders)
    return None if domain is None else float(domain.y_bound)  # type: ignore[attr-defined]


def domain_x_bound(*holders: object) -> float | None:
    """The declared input bound (``|x| <= x_bound``) of the same holder's domain, if any."""
    bound = getattr(_declared_domain(holders), "x_bound", None)
    return None if bound is None else float(bound)


def clip_inputs(pair: NeighbourPair, x_bound: float | None) -> NeighbourPair | None:
    """``pair`` with every input clipped into a declared ``|x| <= x_bound``.

    A generated input beyond the bound (a far outlier, a random substitution) is moved to
    it; a pair whose two sides then coincide is dropped (``None``). Clipping acts on both
    sides alike, so the pair stays one substitution apart. ``x_bound=None``: unchanged.
    """
    if x_bound is None:
        return pair
    X0, X1 = np.asarray(pair.d0.X, dtype=float), np.asarray(pair.d1.X, dtype=float)
    if max(float(np.max(np.abs(X0), initial=0.0)), float(np.max(np.abs(X1), initial=0.0))) \
            <= x_bound:
        return pair
    d0 = Dataset(np.clip(X0, -x_bound, x_bound), pair.d0.y, pair.d0.name)
    d1 = Dataset(np.clip(X1, -x_bound, x_bound), pair.d1.y, pair.d1.name)
    if d0 == d1:
        return None
    return NeighbourPair(d0, d1, f"{pair.label} (x clipped to |x| <= {x_bound:g})")


def within_inputs(pairs: Sequence[NeighbourPair], x_bound: float | None) -> list[NeighbourPair]:
    """:func:`clip_inputs` of every pair, those that coincide once clipped dropped."""
    return [q for q in (clip_inputs(p, x_bound) for p in pairs) if q is not None]


def domain_labels(*holders: object) -> tuple[float, ...] | None:
    """The declared class labels of the same holder's domain (sorted), if it declares any.

    ``holder.domain.labels`` (:class:`~dpgp_audit.privacy.domain.PublicDomain`); ``None``
    when that domain declares none, or no holder declares a domain.
    """
    labels = getattr(_declared_domain(holders), "labels", None)
    return None if labels is None else tuple(sorted(float(v) for v in labels))


def _clip(value: float, y_bound: float | None) -> float:
    return value if y_bound is None else float(np.clip(value, -y_bound, y_bound))


#: Rows, beyond those the other pairs vary, that :func:`coverage_pairs` moves one at a time
#: (every row of a dataset of up to about this many more; a random choice of this many in
#: a larger one).
COVERAGE_ROWS = 32


def neighbour_pairs(data: Dataset, relation: NeighbourRelation, rng: np.random.Generator, *,
                    n_random: int = 4, adversarial: bool = True, max_rows: int = 6,
                    y_bound: float | None = None, tiny_n: bool | None = None,
                    coverage: int = COVERAGE_ROWS,
                    x_bound: float | None = None) -> list[NeighbourPair]:
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
        Outputs only: the declared bound ``|y| <= y_bound`` (the claim's domain, see
        :func:`domain_y_bound`); a move that would leave it is moved to the bound, so every
        pair stays in the domain. Ignored for whole rows (the relation's ``d`` is the
        target bound there).
    tiny_n
        Add tiny-dataset variants (first one and two rows). Default: on for whole rows
        (the mechanism is defined for any size), off for outputs only (X is public and
        fixed, so the size is part of the mechanism).
    coverage
        With ``adversarial``: up to this many more rows, each moved alone by
        :func:`coverage_pairs`, so that no row of a small dataset goes unvaried.
    x_bound
        Whole rows: the declared input bound ``|x_j| <= x_bound``; with ``adversarial``,
        :func:`box_corner_pairs` move a row between the declared box's corners.

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
    if relation.kind is Neighbour.ANSWERS:
        return _answers_pairs(data, relation.d)
    if tiny_n is None:
        tiny_n = relation.kind is Neighbour.ROWS
    pairs: list[NeighbourPair] = []
    rows = adversarial_rows(data, max_rows, rng) if adversarial else []
    varied = set(rows)  # rows some pair changes, for the coverage pairs at the end
    if relation.kind is Neighbour.OUTPUTS:
        d = relation.d
        pairs += _outputs_pairs(data, rows, d, y_bound)
        for _ in range(n_random):
            i = int(rng.integers(data.n))
            varied.add(i)
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
            varied.add(i)
            x_new = rng.uniform(lo - 0.5 * span, hi + 0.5 * span)
            y_new = float(rng.uniform(-b, b))
            pairs.append(NeighbourPair(base, base.with_row(i, x_new, y_new),
                                       f"random: row {i} -> x={np.round(x_new, 3).tolist()}, "
                                       f"y={y_new:.3g}"))
        if tiny_n:
            for m in (1, 2):
                if base.n > m:
                    pairs += tiny_pairs(data, relation, m)
    if adversarial:
        pairs += _domain_end_pairs(data, relation, y_bound)
        pairs += _data_value_pairs(data, relation, rows, y_bound)
        pairs += structural_pairs(data, relation, y_bound=y_bound)
        pairs += full_swing_pairs(data, relation, y_bound=y_bound)
        pairs += tail_count_pairs(data, relation, y_bound=y_bound)
        pairs += box_corner_pairs(data, relation, x_bound)
        pairs += coverage_pairs(data, relation, varied, rng, y_bound=y_bound, k=coverage)
    return pairs


def tiny_pairs(data: Dataset, relation: NeighbourRelation, m: int) -> list[NeighbourPair]:
    """Whole rows on the first ``m`` rows of the data (targets clipped to ``|y| <= b``).

    On a tiny dataset one row is a large share of every statistic: the substitutions of
    row 0 (its target flipped, or the row moved far out with ``y = ±b``), labelled
    ``N=m``. Draws nothing.
    """
    b = relation.d
    base = _clip_dataset(data, b)
    small = Dataset(base.X[:m], base.y[:m], base.name)
    return _rows_pairs(small, [0], b, None, prefix=f"N={m}: ", far_only=True)


def smallest_accepted_size(mechanism: Mechanism, data: Dataset,
                           rng: np.random.Generator) -> int | None:
    """The fewest leading rows of ``data`` the mechanism releases, when it refuses two.

    A mechanism may refuse small datasets (a ``ValueError``, the contract's refusal), and
    then the tiny datasets of :func:`neighbour_pairs` (one and two rows) are refused with
    it — while the loss it hides may be largest at the smallest size it does accept
    (a mean over ten points moves by a tenth of the box). One draw on the first two rows;
    if they are refused, a bisection over the sizes 3 … n − 1 (one draw each, assuming a
    refusal by size is monotone). ``None`` when two rows are released, when n − 1 rows are
    refused too, when a call breaks the contract (the audit reports that itself), or when
    the mechanism cannot be copied: the draws are made on a deep copy, so that the user's
    object is first called by the state probe (:func:`~dpgp_audit.contract.stateless_releases`),
    which a scale cached on the first dataset seen would otherwise escape.
    """
    import copy

    try:
        probe = copy.deepcopy(mechanism)
    except Exception:  # noqa: BLE001 - any object may refuse a copy; then no search
        return None

    def released(m: int) -> bool | None:
        """One draw on the first m rows: released, refused (False) or broken (None)."""
        try:
            checked_sample(probe, Dataset(data.X[:m], data.y[:m], data.name), 1,
                           rng.spawn(1)[0])
        except ContractError:
            return None
        except ValueError:
            return False
        except Exception:  # noqa: BLE001 - the user's error: the audit meets it elsewhere
            return None
        return True

    if data.n <= 3 or released(2) is not False or released(data.n - 1) is not True:
        return None
    lo, hi = 3, data.n - 1
    while lo < hi:
        mid = (lo + hi) // 2
        ok = released(mid)
        if ok is None:
            return None
        if ok:
            hi = mid
        else:
            lo = mid + 1
    return lo


def box_corner_pairs(data: Dataset, relation: NeighbourRelation,
                     x_bound: float | None) -> list[NeighbourPair]:
    """Whole rows: a row moved from the declared box's lower corner to its upper corner.

    The structural bases place inputs at the corners of the *data's* box, but the domain
    allows the whole declared box ``|x_j| <= x_bound``: for a statistic that is Lipschitz
    in the inputs (a centroid, a kernel sum) the largest change is one row crossing the
    box's diagonal, ``2 x_bound sqrt(dim)``, which no pair inside the data's span reaches.
    Two bases, every input at the lower corner with the targets alternating ``±b`` or all
    ``+b``; the central row moves to the upper corner with its target at the far end.
    No pairs for other relations or without a declared ``x_bound``.
    """
    if x_bound is None or relation.kind is not Neighbour.ROWS:
        return []
    b, n = float(relation.d), data.n
    dim = np.asarray(data.X).reshape(n, -1).shape[1]
    lo, hi = np.full(dim, -float(x_bound)), np.full(dim, float(x_bound))
    i = n // 2
    alt = _alternating(n)
    out = []
    for label, y in (("y alternating +-b", b * alt), ("every y=+b", np.full(n, b))):
        base = Dataset(np.tile(lo, (n, 1)), y, data.name)
        y_new = -b if y[i] > 0 else b
        out.append(NeighbourPair(base, base.with_row(i, hi, y_new),
                                 f"declared box: every x at -{x_bound:g}, {label}; row {i} -> "
                                 f"every x at +{x_bound:g}, y={y_new:+g}"))
    return out


def coverage_pairs(data: Dataset, relation: NeighbourRelation, varied: set[int],
                   rng: np.random.Generator, *, y_bound: float | None = None,
                   k: int = COVERAGE_ROWS) -> list[NeighbourPair]:
    """One pair per row of the data that no pair on the data itself varies (up to ``k``).

    ``varied`` holds the adversarial and random rows; the structural, domain-end and
    full-swing pairs move a central or first row of other bases. So the generated pairs
    change a handful of chosen rows, and a release whose loss sits on rows of its own
    choosing (a subsample drawn once with a fixed seed and an amplification claimed for
    it, a window of the data) is blind to them: every pair leaves its output unchanged.
    Each pair here moves one more row's target as far as the
    relation allows within the declared domain (towards the farther end). Rows come in
    index order when they all fit, else ``k`` of them at random (``rng``, drawn after every
    other pair so the other pairs are unchanged).
    """
    rest = [i for i in range(data.n) if i not in varied]
    if len(rest) > k:
        rest = sorted(int(i) for i in rng.choice(np.asarray(rest), size=k, replace=False))
    out: list[NeighbourPair] = []
    if relation.kind is Neighbour.OUTPUTS:
        d = relation.d
        for i in rest:
            yi = float(data.y[i])
            sign = 1.0 if yi <= 0 else -1.0
            new = _clip(yi + sign * d, y_bound)
            if new != yi:
                out.append(NeighbourPair(data, data.with_target(i, new),
                                         f"coverage: y[{i}] {'+' if sign > 0 else '-'} d"))
    elif relation.kind is Neighbour.ROWS:
        b = relation.d
        base = _clip_dataset(data, b)
        for i in rest:
            new = b if float(base.y[i]) <= 0 else -b
            out.append(NeighbourPair(base, base.with_target(i, new),
                                     f"coverage: row {i} -> y={new:.3g}"))
    return out


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


def _rows_pairs(data: Dataset, rows: Sequence[int], b: float,
                rng: np.random.Generator | None, prefix: str = "",
                far_only: bool = False) -> list[NeighbourPair]:
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
        if far_only or data.n < 2 or rng is None:
            continue
        j = int((i + 1 + rng.integers(data.n - 1)) % data.n)
        y_dup = -math.copysign(b, float(data.y[j]) if data.y[j] != 0 else 1.0)
        out.append(NeighbourPair(data, data.with_row(i, data.X[j], y_dup),
                                 f"{prefix}row {i} -> duplicate x[{j}], y={y_dup:+g}"))
    return out


def pair_score(mechanism: Mechanism, pair: NeighbourPair, memo: dict | None = None) -> float:
    """A cheap, sample-free measure of how distinguishable a pair is (exploration only).

    * :class:`GaussianRelease` with equal covariances: the white-box μ,
      ``‖Σ^{-1/2}(m₀ − m₁)‖`` (``inf`` if the difference leaves the range of Σ);
      with unequal covariances ``inf`` (rank it first; the auditors decide).
    * :class:`DiscreteRelease` (finite outputs): the exact privacy loss that samples can
      see — the smallest ε with ``δ(ε) <= DETECTABLE_DELTA`` in both orders, where
      ``δ(ε) = Σ_k max(0, p_k(D′) − e^ε p_k(D))`` (issue 20: the pure-DP loss
      ``max_k |log p_k(D) − log p_k(D′)|`` ranked first pairs whose loss lives on outputs
      of probability e⁻³⁰, which no draw cap reaches).
    * otherwise :class:`SensitivityQuery`: ``norm(q(D) − q(D′)) / bound``.
    * otherwise ``nan`` (rank by a pilot sample instead, see :func:`rank_pairs`).

    ``memo`` (a dictionary, :func:`rank_pairs` passes one): the model's outputs per
    dataset object, computed once for the many pairs that share a dataset (issue 20 §2).
    """
    from dpgp_audit.norms import Mahalanobis

    def once(what: str, fn: Callable[[Dataset], object], data: Dataset) -> object:
        return _per_dataset(memo, what, data, fn)

    if isinstance(mechanism, GaussianRelease):
        m0 = np.ravel(once("mean", mechanism.mean, pair.d0))
        m1 = np.ravel(once("mean", mechanism.mean, pair.d1))
        same_release_shape(mechanism, (m0, m1), method="mean")
        c0 = np.atleast_2d(once("cov", mechanism.cov, pair.d0))
        c1 = np.atleast_2d(once("cov", mechanism.cov, pair.d1))
        if not np.allclose(c0, c1, rtol=1e-10, atol=1e-14 * max(1.0, float(np.abs(c0).max()))):
            return math.inf
        # the norm of D's covariance (an eigendecomposition), built once per dataset
        norm = once("mahalanobis", lambda _: Mahalanobis(c0), pair.d0)
        return norm(m1 - m0)  # type: ignore[operator]
    if isinstance(mechanism, DiscreteRelease):
        p0 = np.exp(np.ravel(once("logp", mechanism.log_probabilities, pair.d0)))
        p1 = np.exp(np.ravel(once("logp", mechanism.log_probabilities, pair.d1)))
        return max(_detectable_epsilon(p1, p0), _detectable_epsilon(p0, p1))
    if isinstance(mechanism, SensitivityQuery):
        diff = np.ravel(once("query", mechanism.query, pair.d1)) - \
            np.ravel(once("query", mechanism.query, pair.d0))
        return mechanism.norm(diff) / float(mechanism.sensitivity_bound())
    return math.nan


#: The δ below which a discrete privacy loss is too rare for a draw cap to see (ranking only).
DETECTABLE_DELTA = 1e-4


def _detectable_epsilon(a: np.ndarray, b: np.ndarray, delta: float = DETECTABLE_DELTA) -> float:
    """Smallest ε >= 0 with ``Σ_k max(0, a_k − e^ε b_k) <= delta`` (``inf`` if none).

    Exact: with the log ratios ``r_k = log(a_k/b_k)`` sorted in decreasing order, on the
    segment ``[r_{j+1}, r_j]`` the sum is ``A_j − e^ε B_j`` (cumulative sums of ``a`` and
    ``b`` over the first j + 1 outputs), so the crossing is solved on its segment. Mass of
    ``a`` where ``b`` has none counts at every ε (``inf`` when it alone exceeds ``delta``).
    """
    room = delta - float(np.sum(a[b <= 0]))
    if room < 0:
        return math.inf  # outputs possible under one dataset only, with real mass
    live = (a > 0) & (b > 0)
    if not np.any(live):
        return 0.0
    ratio = np.log(a[live]) - np.log(b[live])
    order = np.argsort(-ratio, kind="stable")
    r = ratio[order]
    A, B = np.cumsum(a[live][order]), np.cumsum(b[live][order])
    for j in range(r.size):
        lo = max(float(r[j + 1]), 0.0) if j + 1 < r.size else 0.0
        if A[j] - math.exp(lo) * B[j] <= room:  # the crossing is at or below lo
            if lo == 0.0:
                return 0.0
            continue
        return float(max(0.0, math.log((A[j] - room) / B[j])))
    return 0.0


def _claim_levels(mechanism: object) -> tuple[float, float] | None:
    """The (ε, δ) the black-box auditor tests the mechanism's claim at, if it can say."""
    from dpgp_audit.audit.blackbox.fixed import _claim_epsilon_delta

    try:
        eps, delta, _ = _claim_epsilon_delta(mechanism.claim, None)  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        return None
    return float(eps), float(delta)


def _pilot_sample(mechanism: Mechanism, data: Dataset, n: int, rng: np.random.Generator,
                  shared: dict | None) -> np.ndarray:
    """``n`` pilot outputs of ``data`` as rows, drawn once per dataset when ``shared`` is given.

    Most generated pairs share their first dataset (the user's D), so
    :func:`rank_pairs` passes a dictionary keyed by the dataset object and every pair
    with that D is compared with one pilot sample of M(D) (issue 20 §2: it halves the
    pilot's ``sample`` calls). Common random numbers also make the pairs' pilot
    statistics differ by their D′ sides only, which suits a ranking.
    """
    return _per_dataset(shared, "pilot", data, lambda d: np.asarray(
        checked_sample(mechanism, d, n, rng), dtype=float).reshape(n, -1))


def _per_dataset(memo: dict | None, what: str, data: Dataset,
                 fn: Callable[[Dataset], object]) -> object:
    """``fn(data)``, computed once per ``(what, dataset object)`` when ``memo`` is given.

    The dataset is kept in the memo beside the value, so its ``id`` cannot be reused by
    another object while the memo lives.
    """
    if memo is None:
        return fn(data)
    key = (what, id(data))
    if key not in memo:
        memo[key] = (data, fn(data))
    return memo[key][1]


#: One-sided z above which the pilot's evidence that one repeated output breaks the claim
#: (:func:`_violation_z`) makes its pair a *lead*, confirmed first. At 200 pilot draws per
#: side the largest such z over the 60 generated pairs of a correct exponential mechanism on
#: 20 rows stays below it in 96 % of runs (97.5 % before the three tail-count pairs, which
#: sit at the claim's own ratio), and that of the same mechanism without its factor ½ (true
#: ε 2) exceeds it in every run (``tests/audit/test_neighbours.py``, 400 runs).
PILOT_LEAD_Z = 2.5


def _violation_z(ca: np.ndarray, cb: np.ndarray, n: int,
                 claim_ed: tuple[float, float]) -> float:
    """Largest one-sided z of ``P′(k) > e^ε P(k) + δ`` over outputs k, both orders.

    ``ca``, ``cb``: counts of each repeated output in the two pilot samples of ``n``;
    rates are Jeffreys-smoothed, ``(c + ½)/(n + 1)``, and the standard error is that of
    ``p̂′ − e^ε p̂`` for independent samples. It is evidence of a *violation* on one output
    (a rare outcome whose probability ratio exceeds e^ε), which distinguishability (the
    total-variation term of :func:`_pilot_score`) ranks below a large move within the claim.
    """
    eps, delta = claim_ed
    if ca.size == 0 or not eps < 50.0:  # no single output can show e^50 in a pilot
        return -math.inf
    e = math.exp(eps)
    pa, pb = (ca + 0.5) / (n + 1), (cb + 0.5) / (n + 1)
    best = -math.inf
    for p1, p0 in ((pb, pa), (pa, pb)):
        se = np.sqrt((p1 * (1 - p1) + e * e * p0 * (1 - p0)) / n)
        best = max(best, float(np.max((p1 - e * p0 - delta) / se)))
    return best


def _pilot_score(mechanism: Mechanism, pair: NeighbourPair, n: int,
                 rng: np.random.Generator, shared: dict | None = None,
                 claim_ed: tuple[float, float] | None = None) -> tuple[float, float]:
    """How distinguishable a pair looks on a small pilot sample, and how violating.

    The first number is the largest of three z-like statistics over the output
    coordinates (all in standard-error units, so they compare): the mean difference over
    its standard error ``sd·sqrt(2/n)``, the log ratio of the variances over its
    standard error ``sqrt(4/(n−1))`` (data-dependent noise moves the variance,
    not the mean), and for outputs with repeated values the total-variation
    distance of their empirical laws times ``sqrt(n)`` (discrete releases, atoms).
    The second is, for outputs with repeated values and a claim ``(ε, δ)`` given, the
    evidence that one output breaks the claim (:func:`_violation_z`); ``-inf`` otherwise.
    ``shared``: pilot samples already drawn, by dataset (:func:`_pilot_sample`).
    """
    a = _pilot_sample(mechanism, pair.d0, n, rng, shared)
    b = _pilot_sample(mechanism, pair.d1, n, rng, shared)
    same_release_shape(mechanism, (a, b))
    (mean_a, var_a, va, ka, sa), (mean_b, var_b, vb, kb, sb) = (
        _per_dataset(shared, "pilot-moments", d, lambda _, x=x: _moments(x))
        for d, x in ((pair.d0, a), (pair.d1, b)))
    sd = np.sqrt(0.5 * (var_a + var_b))
    diff = np.abs(mean_a - mean_b)
    z = np.where(sd > 0, diff / np.where(sd > 0, sd, 1.0), np.where(diff > 0, np.inf, 0.0))
    z = z * math.sqrt(n / 2.0)  # standard error units, like the two statistics below
    best = float(np.max(z)) if z.size else 0.0
    if n > 2:
        both = (va > 0) & (vb > 0)
        with np.errstate(divide="ignore"):
            lr = np.abs(np.log(np.where(both, va, 1.0)) - np.log(np.where(both, vb, 1.0)))
        zv = np.where(both, lr / math.sqrt(4.0 / (n - 1)), np.where((va > 0) != (vb > 0),
                                                                   np.inf, 0.0))
        # the standard error is normal theory: on a coordinate of few values (an index, a
        # count) a rare value seen 2 times against 8, or 0 against 4, is no evidence of a
        # noise scale that moves; the law of such values is compared by total variation
        few = (_per_dataset(shared, "pilot-distinct", pair.d0, lambda _: _distinct(a))
               <= n * FEW_VALUES) & (_per_dataset(shared, "pilot-distinct", pair.d1,
                                                  lambda _: _distinct(b)) <= n * FEW_VALUES)
        zv = np.where(few, 0.0, zv)
        best = max(best, float(np.max(zv)) if zv.size else 0.0)
    evidence = -math.inf
    if sa is not None and sb is not None:  # no first coordinate repeats within a sample
        at = np.minimum(np.searchsorted(sa, sb), sa.size - 1)
        if not np.any(sa[at] == sb):  # ... nor across them: no output repeats
            return best, evidence
    keys, inv = np.unique(np.concatenate([ka, kb]), return_inverse=True)
    if keys.size < 2 * n:  # some output repeats: compare the laws of the repeated values
        ca = np.bincount(inv[:n], minlength=keys.size)
        cb = np.bincount(inv[n:], minlength=keys.size)
        rep = (ca + cb) >= 2
        tv = 0.5 * float(np.sum(np.abs(ca[rep] - cb[rep]))) / n
        best = max(best, tv * math.sqrt(n))
        if claim_ed is not None:
            evidence = _violation_z(ca[rep], cb[rep], n, claim_ed)
    return best, evidence


#: A pilot coordinate with at most this share of distinct values among its draws takes few
#: values (an index, a count): its variance ratio is not ranked (:func:`_pilot_score`).
FEW_VALUES = 0.25


def _distinct(x: np.ndarray) -> np.ndarray:
    """The number of distinct values of each column of ``x``."""
    if x.shape[0] == 0:
        return np.zeros(x.shape[1], dtype=int)
    s = np.sort(x, axis=0)
    return 1 + np.count_nonzero(s[1:] != s[:-1], axis=0)


def _moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray,
                                      np.ndarray | None]:
    """What :func:`_pilot_score` needs of one pilot sample, once per dataset (issue 20 §2).

    Its mean, variance, unbiased variance (``None`` for n <= 2), its rows as single keys
    (for counting repeated outputs), and its first coordinate sorted when no value of it
    repeats (else ``None``). Rows equal as bytes have equal first coordinates, so two
    samples whose sorted first coordinates share no value share no row and repeat none:
    the pair's key count can be skipped, with the same result.
    """
    n = x.shape[0]
    keys = np.ascontiguousarray(x).view(np.dtype((np.void, x.dtype.itemsize * x.shape[1])))
    first = np.sort(x[:, 0]) if x.shape[1] else np.zeros(0)
    distinct = first.size > 0 and not np.any(first[1:] == first[:-1])
    return (x.mean(axis=0), x.var(axis=0), x.var(axis=0, ddof=1) if n > 2 else None,
            keys[:, 0], first if distinct else None)


def rank_pairs(mechanism: Mechanism, pairs: Sequence[NeighbourPair], rng: np.random.Generator,
               *, top: int = 3, pilot_n: int = 200, stop: Callable[[], bool] | None = None,
               info: dict | None = None, pilot_budget_s: float | None = None,
               implementation: Mapping[int, float | None] | None = None,
               rest: bool = False) -> list[tuple[NeighbourPair, float]]:
    """Exploratory phase: score every pair cheaply and return the ``top`` most distinguishable.

    Two rankings are kept side by side (issue 15 §1):

    * the **model** ranking by :func:`pair_score` (white-box μ, exact discrete loss or
      sensitivity ratio; no samples) where the mechanism offers one — it trusts the
      mechanism's description of itself;
    * the **pilot** ranking by a small sample of ``pilot_n`` outputs per side (mean,
      variance and distribution differences), which tests the implementation.

    The result takes the best ``top − 1`` pairs of the model ranking — ties broken
    by the pilot score, so a tie never hides a pair the pilot ranks higher — and
    then the best pilot-ranked pair not yet taken. Without a model score the pilot
    ranking alone decides. A pilot **lead** comes before the pilot ranking: for
    releases with repeated outputs, the pair whose pilot shows the strongest evidence
    that one output's probability ratio exceeds the claim (:func:`_violation_z`, above
    :data:`PILOT_LEAD_Z`) takes the pilot's slot (with a model) or the first one
    (without), the rest following as before — total variation ranks a large move
    within the claim above a rare outcome that breaks it. Every pair is piloted, in
    model order (every pair tied at the top first), and pairs that share a dataset
    share its pilot sample (one ``sample`` call per distinct dataset, issue 20 §2):
    the ranking is a function of the inputs, never of the clock (issue 20 §1). What
    keeps slow mechanisms affordable is ``pilot_n``, which the default path derives from
    the draw cap (:func:`~dpgp_audit.audit.defaults.pilot_draws`: 8 per side for a slow
    mechanism's small cap), and the ranking hook of :mod:`~dpgp_audit.audit.parts`, through which an
    earlier part (A.9's coupled runs) can rank the pairs instead. ``stop`` (a
    zero-argument callable, true once the audit's time guard has fired) ends the pilot
    between pairs; ``info`` (a dictionary, if given) receives ``piloted`` (pairs
    piloted), ``stopped`` and, when the mechanism refused a pair, ``refusal`` (the first
    refusal, ``"Type: message"``). The pilot samples must **not**
    be reused for the confirmatory audit: pass a different generator to the auditors.
    ``pilot_budget_s`` is accepted for old callers and ignored (it was a time budget).

    Pairs whose datasets the mechanism rejects (``ValueError``, e.g. a size it
    was not built for) are dropped.

    ``implementation`` maps pair indices to scores measured on the implementation
    already (the grey-box survey of A.9, :func:`~dpgp_audit.audit.greybox.rank_pairs_by_coupling`:
    larger = more distinguishable, ``inf`` for its leads; ``None`` for a pair the
    mechanism refused). Those scores stand in for the pilot, so only the pairs it does
    not cover are pilot-sampled.

    ``rest=True`` returns, after those ``top`` pairs, every other pair the mechanism
    accepted, in the same order (model, then pilot): the first ``top`` are exactly those
    of ``rest=False``. The sequential black-box auditor bets on the rest as evidence
    pairs (``evidence=``).
    """
    del pilot_budget_s  # the pilot is budgeted in draws (pilot_n), not seconds
    rng = check_rng(rng)
    top = max(1, int(top))
    scored: list[tuple[NeighbourPair, float]] = []
    memo: dict = {}  # the model's outputs per dataset object (issue 20 §2)
    for pair in pairs:
        try:
            s = pair_score(mechanism, pair, memo)
        except ValueError:
            s = math.nan  # no model score here (e.g. a zero covariance): the pilot decides
        scored.append((pair, s))
    if not scored:
        return []
    has_model = any(not math.isnan(s) for _, s in scored)
    order = sorted(range(len(scored)), key=lambda i: -scored[i][1]
                   if not math.isnan(scored[i][1]) else math.inf)
    pilot: dict[int, float] = {}
    rejected: set[int] = set()
    stopped = False
    known = {} if implementation is None else dict(implementation)
    shared: dict = {}  # one pilot sample per dataset object (issue 20 §2)
    evidence: dict[int, float] = {}
    claim_ed = _claim_levels(mechanism)
    for i in order:
        if i in known:
            if known[i] is None:
                rejected.add(i)
            else:
                pilot[i] = float(known[i])  # type: ignore[arg-type]
            continue
        if stop is not None and stop():
            stopped = True
            break
        try:
            pilot[i], evidence[i] = _pilot_score(mechanism, scored[i][0], pilot_n, rng,
                                                 shared, claim_ed)
        except ContractError:
            raise  # a broken contract is never a refusal
        except ValueError as err:  # the mechanism rejects this pair's datasets: drop it
            rejected.add(i)
            if info is not None:
                info.setdefault("refusal", f"{type(err).__name__}: {err}")
    if info is not None:
        info.update(piloted=len(pilot) + len(rejected) - len(known), stopped=stopped)
    leads = [i for i in evidence if evidence[i] > PILOT_LEAD_Z]
    lead = max(leads, key=lambda i: (evidence[i], pilot[i])) if leads else None
    if not has_model:
        ranked = sorted(pilot, key=lambda i: -pilot[i])
        if lead is not None:
            ranked = [lead] + [i for i in ranked if i != lead]
        ranked = _one_smaller(ranked, [p for p, _ in scored])
        return [(scored[i][0], pilot[i]) for i in (ranked if rest else ranked[:top])]
    keep = [i for i in range(len(scored)) if i not in rejected
            and (not math.isnan(scored[i][1]) or i in pilot)]
    by_model = sorted(keep, key=lambda i: (
        -scored[i][1] if not math.isnan(scored[i][1]) else math.inf,
        -pilot.get(i, -math.inf)))
    chosen = by_model[:max(1, top - 1)] if top > 1 else by_model[:1]
    if top > 1:
        by_pilot = sorted(pilot, key=lambda i: -pilot[i])
        for i in ([lead] if lead is not None else []) + by_pilot:
            if i not in chosen:
                chosen.append(i)
                break
        for i in by_model:
            if len(chosen) >= top:
                break
            if i not in chosen:
                chosen.append(i)
    chosen = chosen[:top]
    if rest:
        chosen += [i for i in by_model if i not in chosen]
    return [(scored[i][0], scored[i][1] if not math.isnan(scored[i][1]) else pilot[i])
            for i in chosen]


def _one_smaller(order: list[int], pairs: Sequence[NeighbourPair]) -> list[int]:
    """``order`` with its pairs of smaller datasets after the first one moved to the end.

    The tiny-dataset variants (one and two rows, :func:`neighbour_pairs`) probe one
    regime, where a noise scaled to the data's size is at its largest and a pure shift
    looks most distinguishable; a pilot ranks them first even where the claim holds there
    exactly. Two of them in the confirmed pairs left no slot for the data's own size,
    where a subsampled mean noised for the full size breaks its claim (true ε 1.70
    against 1; a fourth hunt of unplanted bugs, 28 Nov 2026). So the best pair of
    smaller datasets keeps its place, and the next ones wait behind every pair of the
    largest size ranked; the order is otherwise unchanged.
    """
    if not order:
        return order
    full = max(pairs[i].d0.n for i in order)
    first: list[int] = []
    later: list[int] = []
    small = False
    for i in order:
        if pairs[i].d0.n < full:
            if small:
                later.append(i)
                continue
            small = True
        first.append(i)
    return first + later


# --------------------------------------------------------------------------- issue 15 §1 pairs
def _answers_pairs(data: Dataset, d: float) -> list[NeighbourPair]:
    """Every answer moves by at most d at once: the classic multi-coordinate patterns.

    All up, all down, half up / half down (both halves), one up and the rest
    down, one down and the rest up (Ding et al. 2018, StatDP; Bichsel et al.
    2021, DP-Sniper), alternating signs, and — applied both to the user's answer
    vector and to the all-equal vector, where ties make the argmax and threshold
    decisions most fragile.
    """
    out: list[NeighbourPair] = []
    k = data.n
    half = np.arange(k) < (k + 1) // 2
    alt = _alternating(k)
    one = np.arange(k) == 0
    last = np.arange(k) == k - 1
    patterns = [
        ("all up", np.ones(k)), ("all down", -np.ones(k)),
        ("half up, half down", np.where(half, 1.0, -1.0)),
        ("half down, half up", np.where(half, -1.0, 1.0)),
        ("one up, rest down", np.where(one, 1.0, -1.0)),
        ("one down, rest up", np.where(one, -1.0, 1.0)),
        ("last up, rest down", np.where(last, 1.0, -1.0)),
        ("alternating", alt),
        ("one up", one.astype(float)),
    ]
    flat = Dataset(data.X, np.zeros(k), data.name)
    bases = [("", data)] if np.all(data.y == 0) else [("", data), ("equal answers: ", flat)]
    for prefix, base in bases:
        for name, step in patterns:
            out.append(NeighbourPair(base, Dataset(base.X, base.y + d * step, base.name),
                                     f"{prefix}{name} (every answer moves by <= d)"))
    return out


def _domain_end_pairs(data: Dataset, relation: NeighbourRelation,
                      y_bound: float | None) -> list[NeighbourPair]:
    """Pairs at the ends of the domain of statistics a noise scale may depend on.

    A mechanism that computes its noise scale, clip bound or covariance from the
    private targets (their spread, their largest value) is least private where
    that statistic is extreme: all targets equal (spread 0) or all at the bound.
    One row is then moved as far as the relation allows.
    """
    out: list[NeighbourPair] = []
    n = data.n
    if relation.kind is Neighbour.OUTPUTS:
        d = relation.d
        ends = [("all targets 0", 0.0), ("all targets +d", d)]
        if y_bound is not None and y_bound < d:
            ends[1] = ("all targets at +bound", y_bound)
        if y_bound is not None and y_bound <= 4 * d:  # the bound is within reach of the moves
            ends = [ends[0], ("all targets at -bound", -y_bound),
                    ("all targets at +bound", y_bound)]
        if _labels(data, y_bound):  # class labels ±bound: interior values are off-domain
            ends = ends[1:]
        for label, value in ends:
            base = Dataset(data.X, np.full(n, value), data.name)
            for sign, tag in ((-1.0, "-"), (1.0, "+")):
                new = _clip(value + sign * d, y_bound)
                if new != value:
                    out.append(NeighbourPair(base, base.with_target(0, new),
                                             f"domain end: {label}, y[0] {tag} d"))
    elif relation.kind is Neighbour.ROWS:
        b = relation.d
        for label, value in (("all targets 0", 0.0), ("all targets +b", b)):
            base = Dataset(data.X, np.full(n, value), data.name)
            for y_new, tag in ((-b, "-b"), (b, "+b")):
                if y_new != value:
                    out.append(NeighbourPair(base, base.with_row(0, base.X[0], y_new),
                                             f"domain end: {label}, row 0 -> y={tag}"))
    return out


def _round_values(bound: float) -> np.ndarray:
    """Values where hand-written bins and grids put their edges: multiples of b/4 and b/10."""
    return np.unique(np.round(np.concatenate([np.linspace(-bound, bound, 9),
                                              np.linspace(-bound, bound, 21)]), 12))


def _data_value_pairs(data: Dataset, relation: NeighbourRelation, rows: Sequence[int],
                      y_bound: float | None) -> list[NeighbourPair]:
    """Boundary pairs built from the data's own values (for sample-only mechanisms).

    Ties (a target moved onto another row's target), the median and quartiles of
    the targets, targets exactly on round values (bin and grid edges), and — for
    whole rows — x exactly at the edge of the data's input box.
    """
    out: list[NeighbourPair] = []
    y = np.asarray(data.y, dtype=float)
    if relation.kind is Neighbour.ROWS:
        y = np.clip(y, -relation.d, relation.d)
    q = np.quantile(y, [0.25, 0.5, 0.75])
    if relation.kind is Neighbour.OUTPUTS:
        d = relation.d
        if y_bound is not None and np.all(np.abs(np.abs(y) - y_bound) <= 1e-12):
            return out  # every target at ±bound (class labels): interior values are off-domain
        for i in rows[:2]:
            yi = float(y[i])
            cands = [(float(v), f"y[{i}] -> quantile {v:.3g}") for v in q]
            others = np.delete(y, i)
            if others.size:
                j = int(np.argmin(np.abs(others - yi)))
                cands.append((float(others[j]), f"y[{i}] -> tie with another target"))
            grid = _round_values(_scale(d, y_bound))
            below, above = grid[grid < yi], grid[grid > yi]
            for v in ([below[-1]] if below.size else []) + ([above[0]] if above.size else []):
                cands.append((float(v), f"y[{i}] -> round value {v:g}"))
            seen: set[float] = set()
            for v, label in cands:
                v = _clip(v, y_bound)
                if v == yi or abs(v - yi) > d or v in seen:
                    continue
                seen.add(v)
                out.append(NeighbourPair(data, data.with_target(i, v), label))
    elif relation.kind is Neighbour.ROWS:
        b = relation.d
        base = _clip_dataset(data, b)
        X = np.asarray(base.X)
        lo, hi = X.min(axis=0), X.max(axis=0)
        for i in rows[:2]:
            xi = np.asarray(base.X[i])
            for v in (b / 2, b / 4):
                out.append(NeighbourPair(base.with_row(i, xi, v), base.with_row(i, xi, -v),
                                         f"row {i}: y on round values {v:g} -> {-v:g}"))
            out.append(NeighbourPair(base.with_row(i, xi, 0.0), base.with_row(i, xi, b / 2),
                                     f"row {i}: y on round values 0 -> {b / 2:g}"))
            for v in q:
                out.append(NeighbourPair(base, base.with_row(i, xi, float(v)),
                                         f"row {i}: y -> quantile {v:.3g}"))
            for edge, tag, y_new in ((lo, "min", -b), (hi, "max", b)):
                out.append(NeighbourPair(base, base.with_row(i, edge, y_new),
                                         f"row {i} -> x at the data's {tag} corner, "
                                         f"y={y_new:+g}"))
    return out


def query_edge_pairs(mechanism: SensitivityQuery, data: Dataset, relation: NeighbourRelation,
                     rows: Sequence[int], *, y_bound: float | None = None,
                     grid: int = 41, top: int = 4) -> list[NeighbourPair]:
    """Pairs where the mechanism's ``query`` jumps (bin/fold edges, ties), found by scanning.

    For each of the given rows the target is scanned over a grid of the allowed
    range, the data's own target values and round values (where hand-written bins
    put their edges); the query is evaluated at every point. The pairs kept are
    the ``top`` largest query changes in the mechanism's norm among values the
    relation allows to be neighbours — a discontinuity shows up as a change far
    larger than the distance between the two values suggests. Deterministic
    (no samples); the white- and black-box auditors then test these pairs.
    """
    if relation.kind is Neighbour.ANSWERS:
        return []
    y = np.asarray(data.y, dtype=float)
    if relation.kind is Neighbour.OUTPUTS:
        reach = relation.d
        lim = y_bound
    else:
        reach = 2 * relation.d
        lim = relation.d
    norm = mechanism.norm  # once: a norm object may be rebuilt (an eigendecomposition) per access
    found: list[tuple[float, int, Dataset, float, float]] = []
    for i in rows:
        base = _clip_dataset(data, relation.d) if relation.kind is Neighbour.ROWS else data
        if relation.kind is Neighbour.ROWS:
            lo, hi, span = -relation.d, relation.d, relation.d
        else:  # the reach of one move around the target, inside the declared bound
            span = _scale(relation.d, y_bound)
            lo, hi = float(y[i]) - relation.d, float(y[i]) + relation.d
            if y_bound is not None:
                lo, hi = max(lo, -y_bound), min(hi, y_bound)
        vals = np.concatenate([np.linspace(lo, hi, grid), _round_values(span),
                               np.quantile(y, np.linspace(0, 1, min(21, y.size)))])
        if lim is not None:
            vals = vals[np.abs(vals) <= lim]
        vals = np.unique(np.round(vals, 12))
        qs = []
        for v in vals:
            try:
                qs.append(np.ravel(mechanism.query(base.with_target(i, float(v)))))
            except ValueError:
                qs.append(None)
        same_release_shape(mechanism, [q for q in qs if q is not None], method="query")
        # the row's largest changes; the datasets are built for the pairs kept only
        found.extend((change, i, base, lo, hi)
                     for change, lo, hi in _scan_changes(norm, vals, qs, reach, top))
    found.sort(key=lambda t: -t[0])  # stable: equal changes keep the scan order
    return [NeighbourPair(base.with_target(i, lo), base.with_target(i, hi),
                          f"query edge scan: y[{i}] {lo:.4g} -> {hi:.4g}")
            for _, i, base, lo, hi in found[:top]]


def _scan_changes(norm: object, vals: np.ndarray, qs: list, reach: float, top: int
                  ) -> list[tuple[float, float, float]]:
    """The ``top`` largest positive changes ``(change, lo, hi)`` of one row's scan.

    Every pair ``a < c`` of scanned values with ``vals[c] − vals[a] <= reach`` whose two
    queries succeeded (``qs[k]`` is ``None`` where the query refused the value), in the
    scan's order, measured by the norm: at once by :func:`~dpgp_audit.norms.row_norms`
    where it has that form (the norm's own values, issue 20 §2), else pair by pair; then a
    stable sort, so that equal changes keep the scan's order and the caller's stable sort
    of all rows' changes keeps at most ``top`` of each row.
    """
    a, c = np.triu_indices(len(vals), k=1)  # (0, 1), (0, 2), ..., (1, 2), ...: the scan order
    answered = np.array([q is not None for q in qs], dtype=bool)
    near = (vals[c] - vals[a] <= reach + 1e-12) & answered[a] & answered[c]
    a, c = a[near], c[near]
    good = [q for q in qs if q is not None]
    change = None
    if a.size and all(q.dtype == np.float64 for q in good) and len({q.size for q in good}) == 1:
        Q = np.array([np.full(good[0].size, np.nan) if q is None else q for q in qs])
        change = row_norms(norm, Q[c] - Q[a])  # type: ignore[arg-type]
    if change is None:
        change = np.array([float(norm(qs[k] - qs[j])) for j, k in zip(a, c, strict=True)],  # type: ignore[operator]
                          dtype=float)
    pos = np.flatnonzero(change > 0)
    keep = pos[np.argsort(-change[pos], kind="stable")[:top]]
    return [(float(change[j]), float(vals[a[j]]), float(vals[c[j]])) for j in keep]


# --------------------------------------------------------------------------- declared labels
def _nearest_labels(y: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Every target replaced by the nearest declared label (the lower one on a tie)."""
    if labels.size == 1:
        return np.full(y.shape, labels[0])
    idx = np.clip(np.searchsorted(labels, y), 1, labels.size - 1)
    lo, hi = labels[idx - 1], labels[idx]
    return np.where(np.abs(y - lo) <= np.abs(hi - y), lo, hi)


def on_labels(pairs: Sequence[NeighbourPair], relation: NeighbourRelation,
              labels: Sequence[float]) -> list[NeighbourPair]:
    """The pairs moved onto declared class labels (``PublicDomain(labels=...)``).

    The generators place targets on ``±d``, on the bound, on round values or on the
    data's quantiles; a domain of labels (``{0, 1, 2}`` for three classes) holds none of
    those in between. Each dataset's off-label targets go to the nearest label; a pair
    that becomes equal (or was: a move clipped to nothing), or is no longer a neighbour
    under ``relation``, is dropped, and so is a repeat of an earlier pair, in either order
    (every auditor tests both orders of a pair: with two labels, a row's move to the
    other label and the move between the two labels are often one pair). Pairs already
    on the labels are kept as they are.
    """
    lab = np.asarray(sorted({float(v) for v in labels}), dtype=float)

    def onto(d: Dataset) -> tuple[Dataset, bool]:
        y = np.asarray(d.y, dtype=float)
        if np.all(np.isin(y, lab)):
            return d, False
        return Dataset(d.X, _nearest_labels(y, lab), d.name), True

    out: list[NeighbourPair] = []
    seen: set[bytes] = set()
    for p in pairs:
        (d0, moved0), (d1, moved1) = onto(p.d0), onto(p.d1)
        moved = moved0 or moved1
        if d0 == d1 or (moved and not is_neighbour(d0, d1, relation)):
            continue
        key, swapped = (b"|".join(np.ascontiguousarray(a).tobytes() for a in (*one, *other))
                        for one, other in (((d0.X, d0.y), (d1.X, d1.y)),
                                           ((d1.X, d1.y), (d0.X, d0.y))))
        if key in seen or swapped in seen:
            continue
        seen.add(key)
        out.append(NeighbourPair(d0, d1, f"{p.label} (on the labels: {_label_moves(d0, d1)})")
                   if moved else p)
    return out


def _label_moves(d0: Dataset, d1: Dataset, most: int = 2) -> str:
    """The rows a pair moved onto the labels changes, as they are now (the generator's own
    label names the targets it drew, such as ``y=-1``, which the labels replaced).
    """
    if d0.n != d1.n:
        return f"{d0.n} rows against {d1.n}"
    rows = changed_rows(d0, d1)
    text = [f"row {i} y={d0.y[i]:g} -> y={d1.y[i]:g}" for i in rows[:most]]
    return ", ".join(text) + (f" and {rows.size - most} more" if rows.size > most else "")


def label_pairs(data: Dataset, relation: NeighbourRelation, labels: Sequence[float], *,
                k: int = COVERAGE_ROWS) -> list[NeighbourPair]:
    """One row moved between declared labels, on the data and on one-label bases.

    For up to ``k`` rows (every row of a small dataset, else ``k`` spread evenly): outputs
    only, the row moved to the label farthest from its own within ``d``, and set to the
    two labels farthest apart within ``d`` (the largest move a label allows); whole rows,
    the row's target swapped between the smallest and the largest label, and the row
    replaced by an input far outside the data with each of them. Then every target at one
    label with one row moved to the farthest one (where a class count or a class
    statistic is most extreme). Deterministic: no generator is drawn.
    """
    lab = sorted({float(v) for v in labels})
    if len(lab) < 2 or relation.kind is Neighbour.ANSWERS:
        return []
    rows = list(range(data.n)) if data.n <= k else \
        sorted({int(i) for i in np.linspace(0, data.n - 1, k)})
    out: list[NeighbourPair] = []
    if relation.kind is Neighbour.OUTPUTS:
        d = relation.d
        reach = [(a, b) for a in lab for b in lab if a < b and b - a <= d + 1e-12]
        if not reach:
            return []
        lo, hi = max(reach, key=lambda ab: ab[1] - ab[0])
        for i in rows:
            yi = float(data.y[i])
            far = max((v for v in lab if v != yi and abs(v - yi) <= d + 1e-12),
                      key=lambda v: abs(v - yi), default=None)
            if far is not None:
                out.append(NeighbourPair(data, data.with_target(i, far),
                                         f"labels: y[{i}] -> {far:g}"))
            out.append(NeighbourPair(data.with_target(i, lo), data.with_target(i, hi),
                                     f"labels: y[{i}] {lo:g} -> {hi:g}"))
    else:
        lo, hi = lab[0], lab[-1]
        far_x = _far_input(data)
        for i in rows:
            xi = np.asarray(data.X[i])
            out.append(NeighbourPair(data.with_row(i, xi, lo), data.with_row(i, xi, hi),
                                     f"labels: row {i} y={lo:g} -> y={hi:g}"))
            for v in (lo, hi):
                out.append(NeighbourPair(data, data.with_row(i, far_x, v),
                                         f"labels: row {i} -> far x, y={v:g}"))
    for a, b in ((lo, hi), (hi, lo)):
        base = Dataset(data.X, np.full(data.n, a), data.name)
        out.append(NeighbourPair(base, base.with_target(0, b),
                                 f"labels: every target {a:g}, y[0] -> {b:g}"))
    return out


# --------------------------------------------------------------------------- issue 20 §4 pairs
def _scale(d: float, y_bound: float | None) -> float:
    """The target scale of structural placements: the move d, or the bound when smaller."""
    return float(d) if y_bound is None else float(min(d, y_bound))


def _labels(data: Dataset, y_bound: float | None) -> bool:
    """Every target at ±bound (class labels): values inside the bound are off-domain."""
    y = np.abs(np.asarray(data.y, dtype=float))
    return y_bound is not None and bool(np.all(np.abs(y - y_bound) <= 1e-12))


def _cancelling(n: int, a: float, skip: int, fill: float = 0.0) -> np.ndarray:
    """Targets ``±a`` alternating over the rows other than ``skip``, summing to exactly 0.

    With an odd number of other rows the last one is ``fill`` (0, or ``a`` for labels).
    """
    y = np.full(n, float(fill))
    y[skip] = 0.0
    others = [j for j in range(n) if j != skip]
    for k, j in enumerate(others[: len(others) // 2 * 2]):
        y[j] = a if k % 2 == 0 else -a
    return y


def _structural_bases(data: Dataset, relation: NeighbourRelation, y_bound: float | None
                      ) -> list[tuple[str, Dataset]]:
    """Whole datasets whose rows sit where grouped, binned or clipped statistics break.

    Outputs only (X public): every target at ``+s``, at ``−s``, alternating ``±s``,
    the first half at ``+s`` and the rest at ``−s`` (a median boundary), every target at
    ``s/2`` (a round value, where bins put edges) and every target at the data's median
    (a quantile boundary); ``s = min(d, bound)``. Whole rows (``|y| <= b``): the targets
    all at ``+b`` or alternating, with the inputs as in the data, all at the data's lower
    corner, or all at the centre of its box (the edge of two halves).
    """
    n = data.n
    idx = np.arange(n)
    alt = _alternating(n)
    if relation.kind is Neighbour.OUTPUTS:
        s = _scale(relation.d, y_bound)
        half = np.where(idx < (n + 1) // 2, 1.0, -1.0)
        med = float(np.median(np.asarray(data.y, dtype=float)))
        if y_bound is not None:
            med = float(np.clip(med, -y_bound, y_bound))
        ys = [("every target +s", np.full(n, s)), ("every target -s", np.full(n, -s)),
              ("targets alternating +-s", s * alt), ("half at +s, half at -s", s * half),
              ("every target at s/2", np.full(n, s / 2)),
              ("every target at the median", np.full(n, med))]
        if _labels(data, y_bound):  # class labels: only placements on ±bound
            ys = ys[:4]
        return [(f"base: {label} (s={s:g})", Dataset(data.X, y, data.name)) for label, y in ys]
    b = float(relation.d)
    X = np.asarray(data.X, dtype=float)
    lo, hi = X.min(axis=0), X.max(axis=0)
    corner = np.tile(lo, (n, 1))
    centre = np.tile(0.5 * (lo + hi), (n, 1))
    return [(f"base: {label}", Dataset(Xb, yb, data.name)) for label, Xb, yb in (
        ("every y=+b", X, np.full(n, b)),
        ("y alternating +-b", X, b * alt),
        ("every x at the lower corner, y alternating +-b", corner, b * alt),
        ("every x at the centre of the box, y alternating +-b", centre, b * alt),
        ("every x at the lower corner, every y=+b", corner, np.full(n, b)),
    )]


def structural_pairs(data: Dataset, relation: NeighbourRelation, *,
                     y_bound: float | None = None, rows: Sequence[int] | None = None,
                     thorough: bool = False) -> list[NeighbourPair]:
    """Pairs on structural bases: the other rows placed, one row moved (issue 20 §4).

    A sensitivity bound that holds for the user's D can fail when the *other* rows sit
    where the statistic is fragile: a group that is empty but for the moved row, every
    target on a bin edge, values that cancel. Each base of the docstring of
    :func:`neighbour_pairs` is combined with moves of one row:

    * outputs only: the row moved by ``±d`` from its base value, and from 0 (a sign
      boundary) to ``±d`` (clipped to the bound);
    * whole rows: the row substituted by one at the data's upper corner with ``y = ±b``,
      or far outside the data.

    Parameters
    ----------
    data
        Gives the inputs, the size and the data's own median and box.
    relation
        Outputs only or whole rows (all answers: no pairs).
    y_bound
        Outputs only: the declared target bound (moves stay inside it).
    rows
        Rows moved (default: the central row; with ``thorough`` also the first and last).
    thorough
        Every move on every base (the sensitivity search: at most 6 bases × 3 rows × 4
        moves). Otherwise one move per base (at most 6 pairs, for the generated list).

    Returns
    -------
    list of NeighbourPair
        Neighbours under ``relation`` (inside ``y_bound``); a witness found among them is
        a real pair of the declared domain, so a query change above the bound is a
        definitive counterexample.
    """
    if relation.kind is Neighbour.ANSWERS:
        return []
    n = data.n
    if rows is None:
        rows = sorted({n // 2, 0, n - 1}) if thorough else [n // 2]
    out: list[NeighbourPair] = []
    if relation.kind is Neighbour.OUTPUTS:
        d = float(relation.d)
        labels = _labels(data, y_bound)
        for label, base in _structural_bases(data, relation, y_bound):
            for k, i in enumerate(rows):
                v = float(base.y[i])
                zero = base.with_target(i, 0.0)
                moves = [(base, _clip(v + d, y_bound), "+d"),
                         (base, _clip(v - d, y_bound), "-d")]
                if not labels:
                    moves += [(zero, _clip(d, y_bound), "0 -> +d"),
                              (zero, _clip(-d, y_bound), "0 -> -d")]
                if not thorough:  # one move: towards the far side of the base (or 0 -> +d)
                    moves = [moves[1] if v > 0 else moves[0]] if v != 0 else [moves[2]]
                    if k:
                        break
                for b0, new, tag in moves:
                    if new != float(b0.y[i]):
                        out.append(NeighbourPair(b0, b0.with_target(i, new),
                                                 f"{label}; y[{i}] {tag}"))
        return out
    b = float(relation.d)
    X = np.asarray(data.X, dtype=float)
    top, far = X.max(axis=0), _far_input(data)
    for label, base in _structural_bases(data, relation, None):
        for k, i in enumerate(rows):
            moves = [(top, b, "upper corner, y=+b"), (top, -b, "upper corner, y=-b"),
                     (far, b, "far x, y=+b"), (far, -b, "far x, y=-b")]
            if not thorough:
                moves = [moves[0] if base.y[i] <= 0 else moves[1]]
                if k:
                    break
            for x_new, y_new, tag in moves:
                moved = base.with_row(i, x_new, y_new)
                if moved != base:
                    out.append(NeighbourPair(base, moved, f"{label}; row {i} -> {tag}"))
    return out


#: Trimming and winsorising fractions whose order statistics the tail-count bases cross.
TAIL_FRACTIONS = (0.05, 0.1, 0.25)


def tail_counts(n: int) -> list[int]:
    """How many rows the tail-count bases put at the low end, for ``n`` rows.

    ``k + 1`` for the order statistics ``k`` a trimmed or winsorised statistic most often
    reads: the second and third values from each end and ``⌊f n⌋`` for each fraction of
    :data:`TAIL_FRACTIONS`; at most half the rows.
    """
    return sorted(j for j in {2, 3, *(int(f * n) + 1 for f in TAIL_FRACTIONS)}
                  if 2 <= j <= n // 2)


def tail_count_pairs(data: Dataset, relation: NeighbourRelation, *,
                     y_bound: float | None = None) -> list[NeighbourPair]:
    """A few rows at the low end, the rest at the high end, and one of the few moved across.

    A statistic clipped or trimmed at the data's own order statistics (a mean winsorised
    at its 5th and 95th percentiles, an outlier rule from the quartiles) moves by the
    whole range only when exactly ``k + 1`` targets sit at one end, ``k`` the order
    statistic it reads, and one of them crosses: the clip point then jumps from one end
    to the other and takes every row at that end with it. No base with none, half or all
    of the rows at an end has that count. For each ``j`` of :func:`tail_counts`, ``j``
    consecutive rows from the central one sit at ``−s`` and the rest at ``+s``
    (``s = min(d, bound)``; whole rows: ``±b``, the inputs as in the data), and the
    central row is moved up by ``d`` (whole rows: its target set to ``+b``).
    """
    if relation.kind is Neighbour.ANSWERS:
        return []
    n = data.n
    i = n // 2
    outputs = relation.kind is Neighbour.OUTPUTS
    s = _scale(relation.d, y_bound) if outputs else float(relation.d)
    out = []
    for j in tail_counts(n):
        y = np.full(n, s)
        y[(i + np.arange(j)) % n] = -s
        base = Dataset(data.X, y, data.name)
        label = f"tail count: {j} targets at -s, the rest at +s (s={s:g})"
        if outputs:
            new = _clip(-s + float(relation.d), y_bound)
            out.append(NeighbourPair(base, base.with_target(i, new), f"{label}; y[{i}] +d"))
        else:
            moved = base.with_row(i, np.asarray(data.X, dtype=float)[i], s)
            out.append(NeighbourPair(base, moved, f"{label}; row {i} -> y=+b"))
    return out


#: The sizes of the small input group in the group-size bases (:func:`group_size_pairs`).
GROUP_SIZES = (1, 2)


def group_size_pairs(data: Dataset, relation: NeighbourRelation) -> list[NeighbourPair]:
    """Whole rows: a group of inputs at its smallest sizes, and one more row joining it.

    A statistic computed per group of inputs (a treatment arm, a stratum, a bin) and a
    noise scale read off the groups' sizes (``1/n₁ + 1/n₀``, often behind a guard
    ``max(n₁, 1)``) move most where a group holds one or two rows: its size then halves
    or doubles with one record, while on the user's data every group is large. For each
    ``k`` of :data:`GROUP_SIZES` and each corner of the data's input box, ``k`` rows sit
    at that corner with ``y = +b`` and the rest at the opposite corner with ``y = −b``;
    row ``k`` moves to join the ``k`` with ``y = +b``. Draws nothing; none under outputs
    only (the inputs are public), for fewer than ``2 k + 1`` rows, or when every input is
    the same.
    """
    if relation.kind is not Neighbour.ROWS:
        return []
    n, b = data.n, float(relation.d)
    X = np.asarray(data.X, dtype=float)
    lo, hi = X.min(axis=0), X.max(axis=0)
    if np.array_equal(lo, hi):
        return []
    out = []
    for name, small, big in (("upper", hi, lo), ("lower", lo, hi)):
        for k in GROUP_SIZES:
            if n < 2 * k + 1:
                continue
            Xb = np.tile(big, (n, 1)).reshape((n, *X.shape[1:]))
            Xb[:k] = small
            y = np.full(n, -b)
            y[:k] = b
            base = Dataset(Xb, y, data.name)
            out.append(NeighbourPair(base, base.with_row(k, small, b),
                                     f"group sizes: {k} row(s) at the {name} corner with "
                                     f"y=+b, the rest at the other with y=-b; row {k} joins "
                                     f"them"))
    return out


def full_swing_pairs(data: Dataset, relation: NeighbourRelation, *,
                     y_bound: float | None = None) -> list[NeighbourPair]:
    """The other rows cancel and one central row swings across the whole range (issue 20 §4).

    Whole rows: the central row's target flips from ``+b`` to ``−b`` (its input kept) while
    the other targets alternate ``±b`` (summing to 0) or are all 0: a change of 2b in a
    sum that no other row offsets. Outputs only: the same with ``a = min(bound, d/2)``, so
    the move ``2a`` is allowed. The all-zero base with row 0 moved to ``±b`` (the domain
    ends) is half this swing; on the user's data a clipped statistic may saturate and show
    no swing at all.
    """
    if relation.kind is Neighbour.ANSWERS:
        return []
    n = data.n
    i = n // 2
    if relation.kind is Neighbour.ROWS:
        a = float(relation.d)
    else:
        a = float(relation.d) / 2 if y_bound is None else min(float(y_bound), relation.d / 2)
    out = []
    bases = [("others alternating +-a (sum 0)", _cancelling(n, a, i)),
             ("others 0", np.zeros(n))]
    if relation.kind is Neighbour.OUTPUTS and _labels(data, y_bound) and a == y_bound:
        # class labels: every other target stays a label, so they cancel only in pairs
        bases = [("others alternating +-a" + (" (sum 0)" if n % 2 else " (sum +a)"),
                  _cancelling(n, a, i, fill=a))]
    elif relation.kind is Neighbour.OUTPUTS and _labels(data, y_bound):
        bases = []  # the swing 2a < 2 bound would leave the labels
    for label, y in bases:
        base = Dataset(data.X, y, data.name)
        hi, lo = base.with_target(i, a), base.with_target(i, -a)
        out.append(NeighbourPair(hi, lo, f"full swing: {label}, y[{i}] +{a:g} -> -{a:g}"))
    return out


# --------------------------------------------------------------------------- structure paths
@runtime_checkable
class StructurePath(Protocol):
    """A one-parameter family of bases ``at(t)``, ``t`` from ``start`` to ``stop``, that the
    structure-boundary search (:mod:`~dpgp_audit.audit.boundary`) walks and bisects.
    """

    label: str
    start: float
    stop: float

    def at(self, t: float) -> Dataset:
        """The base at ``t``."""

    def midpoint(self, lo: float, hi: float) -> float:
        """Where a bisection of ``[lo, hi]`` looks next."""

    def resolved(self, lo: float, hi: float) -> bool:
        """Whether a bisection of ``[lo, hi]`` can stop."""

    def boundary_pairs(self, t_a: float, t_b: float, relation: NeighbourRelation,
                       rows: int = 3) -> list[NeighbourPair]:
        """Neighbour pairs across a structure change between ``at(t_a)`` and ``at(t_b)``."""


@dataclass(frozen=True, eq=False)
class BasePath:
    """A one-parameter family of bases ``D(t) = (X, offset + t · pattern)`` (clipped to the bound).

    The structure-boundary search (:mod:`~dpgp_audit.audit.boundary`) walks ``t`` from
    ``start`` to ``stop`` looking for the place where a mechanism's noise structure changes
    — a lengthscale, a signal variance or a branch chosen from the private targets — and
    :meth:`boundary_pairs` turns such a place into neighbour pairs of the relation.
    """

    label: str
    data: Dataset
    pattern: np.ndarray
    start: float
    stop: float
    bound: float | None
    offset: np.ndarray | None = None

    def at(self, t: float) -> Dataset:
        """The base at ``t``: the data's inputs, targets ``offset + t · pattern``.

        Clipped to the bound; ``offset`` is 0 unless given (a path from one pattern to
        another).
        """
        y = float(t) * self.pattern if self.offset is None else self.offset + float(t) * \
            self.pattern
        if self.bound is not None:
            y = np.clip(y, -self.bound, self.bound)
        return Dataset(self.data.X, y, self.data.name)

    def midpoint(self, lo: float, hi: float) -> float:
        """Where a bisection of ``[lo, hi]`` looks next: the middle."""
        return 0.5 * (lo + hi)

    def resolved(self, lo: float, hi: float) -> bool:
        """Whether a bisection can stop: never before its halvings run out (a real ``t``)."""
        return False

    def boundary_pairs(self, t_a: float, t_b: float, relation: NeighbourRelation,
                       rows: int = 3) -> list[NeighbourPair]:
        """Neighbours across a structure change between ``at(t_a)`` and ``at(t_b)``.

        On each of the two bases one row moves by the relation's whole step — from
        ``at(t_a)`` in the direction the path takes that row towards ``t_b``, from
        ``at(t_b)`` back — for the rows with the largest pattern entries and the central
        row. When the two bases are within a bisection's resolution of the change, a move
        of one row pushes the statistic behind it across. Outputs only: the step is ``d``
        inside the declared bound; whole rows: the row's target goes to ``±b`` (input kept).
        """
        n = self.data.n
        order = [int(i) for i in np.argsort(-np.abs(self.pattern), kind="stable")]
        chosen = list(dict.fromkeys(order[:max(rows - 1, 1)] + [n // 2]))[:rows]
        if relation.kind is Neighbour.ROWS:
            step, bound = 2.0 * float(relation.d), float(relation.d)
        else:
            step, bound = float(relation.d), self.bound
        towards = 1.0 if t_b > t_a else -1.0
        bases = ((t_a, self.at(t_a), 1.0, "towards"), (t_b, self.at(t_b), -1.0, "back"))
        out = []
        for i in chosen:
            way = towards * (float(np.sign(self.pattern[i])) or 1.0)
            for t, base, sign, tag in bases:
                old = float(base.y[i])
                new = _clip(old + sign * way * step, bound)
                if new != old:
                    out.append(NeighbourPair(base, base.with_target(i, new),
                                             f"structure boundary: {self.label} at "
                                             f"t={t:.9g} ({tag}); y[{i}] {new - old:+.3g}"))
        return out


@dataclass(frozen=True, eq=False)
class LabelCountPath:
    """Bases of class labels: the first ``⌊t⌋`` rows at ``high``, every other row at ``low``.

    For a domain of labels the paths of :class:`BasePath` pass through targets between the
    labels, outside the domain; a statistic of labels changes with how many rows hold each
    one — a count suppressed below a threshold, a majority, a rule "at least k positives".
    Walking ``t`` from 0 to n moves one row at a time from ``low`` to ``high``, so
    consecutive integers are neighbours whenever the two labels are.
    """

    label: str
    data: Dataset
    low: float
    high: float
    start: float = 0.0
    stop: float = 0.0

    def _rows(self, t: float) -> int:
        return int(min(max(math.floor(float(t)), 0), self.data.n))

    def at(self, t: float) -> Dataset:
        """The base at ``t``: the data's inputs, ``⌊t⌋`` rows (clipped to [0, n]) at ``high``."""
        y = np.full(self.data.n, self.low)
        y[:self._rows(t)] = self.high
        return Dataset(self.data.X, y, self.data.name)

    def midpoint(self, lo: float, hi: float) -> float:
        """The middle count between the counts at ``lo`` and ``hi`` (a bisection on integers)."""
        a, b = sorted((self._rows(lo), self._rows(hi)))
        return float(a + (b - a) // 2)

    def resolved(self, lo: float, hi: float) -> bool:
        """Whether the two bases are at most one row apart: a bisection is done."""
        return abs(self._rows(hi) - self._rows(lo)) <= 1

    def boundary_pairs(self, t_a: float, t_b: float, relation: NeighbourRelation,
                       rows: int = 3) -> list[NeighbourPair]:
        """The two bases themselves, when they are one row apart (a bisection's end)."""
        a, b = self.at(t_a), self.at(t_b)
        if a == b or not is_neighbour(a, b, relation):
            return []
        ka, kb = self._rows(t_a), self._rows(t_b)
        return [NeighbourPair(a, b, f"structure boundary: {self.label}, {ka} -> {kb} rows "
                                    f"at {self.high:g}")]


def label_count_paths(data: Dataset, relation: NeighbourRelation,
                      labels: Sequence[float], most: int = 3) -> list[LabelCountPath]:
    """:class:`LabelCountPath` s between labels one move apart under ``relation``.

    Consecutive declared labels (outputs only: their gap at most ``d``), the first, middle
    and last such pair at most; whole rows: any two labels of the domain are one
    substitution apart, so the consecutive pairs likewise.
    """
    ls = sorted(float(v) for v in labels)
    steps = [(lo, hi) for lo, hi in zip(ls[:-1], ls[1:], strict=True)
             if relation.kind is Neighbour.ROWS or hi - lo <= float(relation.d) + 1e-12]
    if len(steps) > most:
        steps = [steps[0], steps[len(steps) // 2], steps[-1]]
    return [LabelCountPath(f"rows moved one by one from label {lo:g} to {hi:g}", data, lo, hi,
                           0.0, float(data.n)) for lo, hi in steps]


def structure_paths(data: Dataset, relation: NeighbourRelation, *,
                    y_bound: float | None = None,
                    labels: Sequence[float] | None = None) -> list[StructurePath]:
    """Paths of bases along which a calibration read off the targets can flip.

    Amplitude ``A``: the declared bound (outputs only), ``b`` (whole rows), else the
    larger of ``d`` and the data's largest |target|. Patterns: the data's own targets
    scaled to ``A`` (``t`` from 0 to 1: a fitted lengthscale or signal variance moves with
    the scale), alternating ``±A`` and half at ``+A``, half at ``−A`` (0 to 1: a variance),
    every target at ``A`` (−1 to 1: a mean or a sign); and from the data's scaled targets
    to alternating ``±A`` and to every target at ``−A``, along which the rows cross zero one
    at a time (a count of sign changes or of positive targets, a rank). None under the
    all-answers relation. For class labels (declared ``labels``, or every target at
    ±bound), whose intermediate targets are outside the domain, the paths of
    :func:`label_count_paths` instead: rows moved from one label to the next one by one.
    """
    if relation.kind is Neighbour.ANSWERS or data.n < 2:
        return []
    if labels is None and _labels(data, y_bound):
        labels = (-float(y_bound), float(y_bound))  # type: ignore[arg-type]
    if labels is not None:
        return label_count_paths(data, relation, labels)
    y = np.asarray(data.y, dtype=float)
    top = float(np.max(np.abs(y)))
    if relation.kind is Neighbour.ROWS:
        amp = bound = float(relation.d)
    else:
        bound = y_bound
        amp = float(y_bound) if y_bound is not None else max(float(relation.d), top)
    n = data.n
    idx = np.arange(n)
    alt = _alternating(n)
    half = np.where(idx < (n + 1) // 2, 1.0, -1.0)
    paths = []
    own = y * (amp / top) if top > 0 else None
    if own is not None:
        paths.append(BasePath("the data's targets scaled", data, own, 0.0, 1.0, bound))
    paths += [BasePath("targets alternating +-A", data, amp * alt, 0.0, 1.0, bound),
              BasePath("half at +A, half at -A", data, amp * half, 0.0, 1.0, bound),
              BasePath("every target at A", data, np.full(n, amp), -1.0, 1.0, bound)]
    if own is not None:  # each row crosses zero at its own t: counts change one at a time
        paths += [BasePath("the data's targets to alternating +-A", data, amp * alt - own,
                           0.0, 1.0, bound, offset=own),
                  BasePath("the data's targets to every target at -A", data, -amp - own,
                           0.0, 1.0, bound, offset=own)]
    return paths
