"""Hypothesis strategies for property tests of sensitivity bounds (catalogue A.4).

``hypothesis`` is a test dependency, so it is imported only when a strategy is
built. Typical use in a user's test suite, with :func:`hypothesis.target`
steering the search towards large query changes (hill climbing) and shrinking
reporting a minimal counterexample::

    from hypothesis import given, target
    from dpgp_audit.audit.strategies import neighbouring_datasets
    from dpgp_audit.privacy.claims import outputs_only

    @given(neighbouring_datasets(outputs_only(1.0), n=(2, 12), x_range=(0.0, 10.0)))
    def test_my_bound(pair):
        change = mech.norm(mech.query(pair.d1) - mech.query(pair.d0))
        target(change, label="query change")
        assert change <= mech.sensitivity_bound() * (1 + 1e-9)

For mechanisms built on public inputs (outputs-only relation with a fixed X),
pass ``base=the_public_dataset``: only the targets are then generated.
``structural=True`` mixes in the whole-dataset bases of issue 20 §4 (the other rows at
one end, alternating, cancelling, on a bin edge; one row's full swing; a few rows at one
end crossing an order statistic), where grouped and clipped statistics reach their worst
case and random targets rarely go. ``labels=`` keeps
every target on declared class labels (and, with ``structural=True``, moves rows between
two labels one by one, where a count crosses a threshold).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpgp_audit.audit.neighbours import NeighbourPair
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.claims import Neighbour, NeighbourRelation

__all__ = ["neighbouring_datasets"]


def neighbouring_datasets(relation: NeighbourRelation, *, n: tuple[int, int] = (1, 12),
                          dim: int = 1, x_range: tuple[float, float] = (-5.0, 5.0),
                          y_bound: float | None = None, base: Dataset | None = None,
                          structural: bool = False,
                          labels: Sequence[float] | None = None) -> Any:
    """A hypothesis strategy of :class:`~dpgp_audit.audit.neighbours.NeighbourPair`.

    Parameters
    ----------
    relation
        Outputs only (one target moved by at most ``d``) or whole rows (one row
        substituted, ``|y| <= d``).
    n
        Inclusive range of dataset sizes (ignored when ``base`` is given).
    dim
        Input dimension (ignored when ``base`` is given).
    x_range
        Box from which inputs (and substituted inputs) are drawn.
    y_bound
        Target bound for generated targets. Default: the relation's ``d`` for whole
        rows, ``2 d`` for outputs only. Outputs-only moves are clipped into it; half of
        them are the full move (one target from ``-m/2`` to ``+m/2`` or back,
        ``m = min(d, 2 y_bound)``), the example hypothesis shrinks towards.
    base
        Fix the inputs to ``base.X`` (and the size to ``base.n``); targets are generated.
    structural
        Half of the examples come from
        :func:`~dpgp_audit.audit.neighbours.structural_pairs` (``thorough=True``),
        :func:`~dpgp_audit.audit.neighbours.full_swing_pairs` and
        :func:`~dpgp_audit.audit.neighbours.tail_count_pairs` on the generated inputs.
    labels
        Declared class labels (``PublicDomain(labels=...)``): every target is one of them
        and a move takes one row to another label the relation reaches; the structural
        examples are then rows moved one by one between two labels
        (:class:`~dpgp_audit.audit.neighbours.LabelCountPath`: ``k`` rows at the upper
        label against ``k + 1``), where a count crosses a threshold.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Pairs (D, D′) that are neighbours under ``relation``.
    """
    from hypothesis import strategies as st

    if not isinstance(relation, NeighbourRelation):
        raise TypeError(f"relation must be a NeighbourRelation, got {type(relation).__name__}")
    lo, hi = float(x_range[0]), float(x_range[1])
    if not lo < hi:
        raise ValueError(f"x_range must be (low, high) with low < high, got {x_range!r}")
    rows_rel = relation.kind is Neighbour.ROWS
    yb = float(y_bound) if y_bound is not None else (relation.d if rows_rel else 2 * relation.d)
    floats_y = st.floats(-yb, yb, allow_nan=False, allow_infinity=False)
    floats_x = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    ls = [] if labels is None else sorted({float(v) for v in labels})
    if labels is not None:
        if len(ls) < 2:
            raise ValueError(f"labels must hold at least two values, got {labels!r}")
        floats_y = st.sampled_from(ls)  # targets are labels (the name kept for the draws)

    def reach(v: float) -> list[float]:  # the labels one row at label v may move to
        return [u for u in ls if u != v and (rows_rel or abs(u - v) <= relation.d + 1e-12)]

    @st.composite
    def _pairs(draw: Any) -> NeighbourPair:
        if base is not None:
            X = np.asarray(base.X)
            size = base.n
        else:
            size = draw(st.integers(int(n[0]), int(n[1])))
            X = np.array(draw(st.lists(floats_x, min_size=size * dim, max_size=size * dim)),
                         dtype=float).reshape(size, dim)
        y = np.array(draw(st.lists(floats_y, min_size=size, max_size=size)), dtype=float)
        d0 = Dataset(X, y)
        if labels is not None:
            return draw(_label_pair(d0))
        if structural and draw(st.booleans()):
            from dpgp_audit.audit.neighbours import (
                full_swing_pairs,
                structural_pairs,
                tail_count_pairs,
            )

            bound = None if rows_rel else yb
            placed = (structural_pairs(d0, relation, y_bound=bound, thorough=True)
                      + full_swing_pairs(d0, relation, y_bound=bound)
                      + tail_count_pairs(d0, relation, y_bound=bound))
            if placed:
                return draw(st.sampled_from(placed))
        i = draw(st.integers(0, size - 1))
        if not rows_rel and not draw(st.booleans()):
            # the full move first (hypothesis shrinks towards this branch): one target from
            # one end of its reach to the other, the largest change the relation allows
            m = min(float(relation.d), 2.0 * yb)
            sign = -1.0 if draw(st.booleans()) else 1.0
            y[i] = -sign * m / 2
            d0 = Dataset(X, y)
            return NeighbourPair(d0, d0.with_target(i, sign * m / 2),
                                 f"y[{i}] {-sign * m / 2:+.4g} -> {sign * m / 2:+.4g} "
                                 "(the full move)")
        if rows_rel:
            x_new = np.array(draw(st.lists(floats_x, min_size=X.shape[1],
                                           max_size=X.shape[1])), dtype=float)
            y_new = draw(floats_y)
            return NeighbourPair(d0, d0.with_row(i, x_new, y_new), f"row {i} substituted")
        t = draw(st.floats(-relation.d, relation.d, allow_nan=False, allow_infinity=False))
        new = float(np.clip(y[i] + t, -yb, yb))
        return NeighbourPair(d0, d0.with_target(i, new), f"y[{i}] moved by {new - y[i]:+.4g}")

    @st.composite
    def _label_pair(draw: Any, d0: Dataset) -> NeighbourPair:
        size = d0.n
        if structural and draw(st.booleans()):
            from dpgp_audit.audit.neighbours import label_count_paths

            paths = label_count_paths(d0, relation, ls)
            if paths:
                path = draw(st.sampled_from(paths))
                k = draw(st.integers(0, size - 1))
                return path.boundary_pairs(float(k), float(k + 1), relation)[0]
        i = draw(st.integers(0, size - 1))
        options = reach(float(d0.y[i]))
        if not options:  # no label within reach of this row's: another example
            from hypothesis import reject

            reject()
        new = draw(st.sampled_from(options))
        if rows_rel:
            x_new = np.array(draw(st.lists(floats_x, min_size=d0.dim, max_size=d0.dim)),
                             dtype=float)
            return NeighbourPair(d0, d0.with_row(i, x_new, new), f"row {i} substituted")
        return NeighbourPair(d0, d0.with_target(i, new), f"y[{i}] {d0.y[i]:g} -> {new:g}")

    return _pairs()
