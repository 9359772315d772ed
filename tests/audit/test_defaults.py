"""Issue 20: the default path's budgets are draws, planned from declared costs (A.6, A.8).

``planned_cap`` and ``pilot_draws`` are pure functions of declared numbers: they are
checked here against their closed forms, and the library's ``n=None`` against them.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit.audit.defaults import (
    MIN_CAP,
    PILOT_MOST,
    PLANNED_AUDIT_S,
    SEQUENTIAL_DEFAULT_N,
    SEQUENTIAL_HEADROOM,
    default_n,
    pilot_draws,
    planned_cap,
)
from dpgp_audit.audit.runner import audit_mechanism, declared_cost
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.methods.toolbox.primitives import GaussianSumMechanism


def test_planned_cap_is_the_seconds_over_the_draws_of_two_pairs():
    # 2 pairs x 2 sides x n draws at c seconds each = seconds  =>  n = seconds / (4 c)
    assert planned_cap(1e-3, 60.0) == 15_000
    assert planned_cap(5e-3, 60.0) == 3_000
    assert planned_cap(3e-3, 60.0) == 5_000
    assert planned_cap(2e-5, 1.0) == 12_000  # 12 500 rounded down to two digits
    assert planned_cap(7e-4, 60.0) == 21_000  # 21 428.6 -> 21 000
    assert planned_cap(1e-9, 60.0) == SEQUENTIAL_DEFAULT_N  # never above the cap
    assert planned_cap(10.0, 60.0) == MIN_CAP  # never below one fitting and two rounds
    assert planned_cap(1e-3, 60.0, pairs=1) == 30_000
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="cost_per_draw_s"):
            planned_cap(bad, 60.0)


def test_pilot_draws_follow_the_cap():
    assert pilot_draws(SEQUENTIAL_DEFAULT_N, True) == PILOT_MOST == 200
    assert pilot_draws(20_000, True) == 20_000 // (100 * SEQUENTIAL_HEADROOM) == 20
    assert pilot_draws(3_000, True) == 8 and pilot_draws(64, True) == 8
    assert pilot_draws(400, False) == 40 and pilot_draws(20_000, False) == 200
    assert pilot_draws(30, False) == 20


class DeclaredSlow(GaussianSumMechanism):
    """P.1 whose author declares a draw costs 3 ms (a library call per draw, say)."""

    declared_cost_per_draw_s = 3e-3


class Measured(GaussianSumMechanism):
    """A mechanism exposing a *measured* cost (as the adapters do): never a plan's input."""

    cost_per_draw_s = 0.5


def test_a_declared_cost_plans_the_default_cap_and_a_measured_one_does_not():
    data = default_dataset()
    slow = DeclaredSlow(d=1.0, epsilon=1.0, delta=1e-5)
    assert declared_cost(slow) == 3e-3
    rep = audit_mechanism(slow, data, np.random.default_rng(0), auditors=("blackbox",),
                          time_guard_s=None)
    assert rep.inputs["n_per_side"] == planned_cap(3e-3, PLANNED_AUDIT_S) == 5_000
    assert rep.inputs["cost_per_draw_s"] == 3e-3
    assert rep.inputs["allowances"]["blackbox"]["pilot_draws"] == 8
    rep = audit_mechanism(slow, data, np.random.default_rng(0), auditors=("blackbox",),
                          mode="fixed", time_guard_s=None)
    assert rep.inputs["n_per_side"] == 5_000 // SEQUENTIAL_HEADROOM  # fixed: a tenth of it
    assert default_n("fixed", 3e-3) == 500 and default_n("sequential", 3e-3) == 5_000
    # the argument overrides the attribute; a measured cost_per_draw_s is ignored
    measured = Measured(d=1.0, epsilon=1.0, delta=1e-5)
    assert declared_cost(measured) is None
    assert declared_cost(measured, 1e-3) == 1e-3
    rep = audit_mechanism(measured, data, np.random.default_rng(0), auditors=("blackbox",),
                          n=None, cost_per_draw_s=1e-3, time_guard_s=None)
    assert rep.inputs["n_per_side"] == 15_000
