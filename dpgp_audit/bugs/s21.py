"""S21's planted bug (A.5): CV selection whose utility uses the unclipped SSE.

``planted/s21-unclipped-sse`` (twin ``S21.5/selection``): the sensitivity of
:class:`~dpgp_audit.methods.s21.private_selection.CVSelection` is computed for
clipped errors, but the utility uses the unclipped SSE (S21 Alg. 1 line 9, and the
paper's §5.1 numbers: 1597 > 4 · (4d)² = 256 cannot be a clipped SSE). One target
far from its prediction then moves the utility without bound (true ε = ∞).
"""

from __future__ import annotations

import functools

import numpy as np

from dpgp_audit.dataset import Dataset
from dpgp_audit.methods.s21.private_selection import (
    CVSelection,
    default_configs,
    default_selection_data,
)

__all__ = ["build_unclipped", "planted_selection_data"]


def planted_selection_data() -> Dataset:
    """Adversarial data for the planted twin: two large targets that make the configurations tie.

    The last target is 3000 and the first is solved for so that the *unclipped* CV
    SSEs of the two default configurations are equal (both selected with
    probability ½). Moving the first target by d = 1 then shifts the unclipped
    utilities by far more than the clipped sensitivity allows.
    """
    return Dataset(default_selection_data().X, np.array(_planted_targets()),
                   name="planted-selection")


@functools.cache
def _planted_targets() -> tuple[float, ...]:
    from scipy import optimize

    base = default_selection_data()
    mech = build_unclipped(base, epsilon=1.0)
    start = base.with_target(base.n - 1, 3000.0)

    def gap(v: float) -> float:
        s = mech.sse(start.with_target(0, v))
        return float(s[0] - s[1])

    v = optimize.brentq(gap, 0.0, 3.0e4, xtol=1e-10)
    return tuple(start.with_target(0, v).y.tolist())


def build_unclipped(data: Dataset, *, epsilon: float, d: float = 1.0, folds: int = 3
                    ) -> CVSelection:
    """S21.5's selection on ``data``'s inputs with the utility on the unclipped SSE."""
    return CVSelection(data.X, tuple(default_configs()), d, epsilon, folds=folds,
                       unclipped_utility=True)
