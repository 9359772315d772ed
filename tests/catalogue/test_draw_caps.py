"""Issue 20 §1, §3: the catalogue's draw-cap rule (``Entry.draw_cap``), a function of
declared numbers only (a mechanism's ``declared_cost_per_draw_s``, ``audit_samples``),
and its use by ``make audit``: one mechanism gets the library's own default."""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit import cli
from dpgp_audit.audit.defaults import (
    ALL_AUDIT_S,
    COST_CLASSES,
    FIXED_DEFAULT_N,
    PLANNED_AUDIT_S,
    SEQUENTIAL_DEFAULT_N,
    SEQUENTIAL_HEADROOM,
    default_n,
    planned_cap,
)
from dpgp_audit.audit.runner import declared_cost
from dpgp_audit.catalogue import Entry, entries, get

#: The kit's mechanisms that are slower than vectorised numpy, measured by
#: ``benchmarks/bench_make_audit.py --costs`` (seconds per draw: 9e-5, 1e-3, 2e-3, 2.3e-3,
#: 1.4e-3 on a 2-core machine), with the class each must declare.
SLOW = {"P.1/gaussian-sum-secure": "loop", "P.4/multivariate-gaussian-secure": "solve",
        "S21.3/laplace-classification-two-step": "solve",
        "H.4/hyperparameter-search": "solve", "R.5/dpsgd-svgp": "solve"}


@pytest.fixture(scope="module")
def built():
    return {e.id: e.make() for e in entries(include_planted=True)}


def test_A6_every_mechanism_declares_a_known_cost_class_or_none(built):
    for mech_id, (mech, _) in built.items():
        cost = declared_cost(mech)
        if mech_id in SLOW:
            assert cost == COST_CLASSES[SLOW[mech_id]], mech_id
            assert "declared_cost_per_draw_s" in type(mech).__dict__  # on its class, once
        else:
            assert cost is None, mech_id  # vectorised: the library's own default


def test_A6_one_mechanism_gets_the_library_default_and_every_mechanism_a_smaller_one(built):
    for mech_id, (mech, _) in built.items():
        e, cost = get(mech_id), declared_cost(mech)
        if e.audit_samples is None:  # make audit MECH=ID plans what audit_mechanism plans
            for mode in ("sequential", "fixed"):
                assert e.draw_cap(mode, cost=cost) == default_n(mode, cost), (mech_id, mode)
        every = e.draw_cap("sequential", every=True, cost=cost)
        assert every <= e.draw_cap("sequential", cost=cost)
        assert e.draw_cap("fixed", every=True, cost=cost) <= every
    e = get("P.1/gaussian-sum")  # vectorised, no audit_samples
    assert e.draw_cap("sequential") == SEQUENTIAL_DEFAULT_N
    assert e.draw_cap("fixed") == FIXED_DEFAULT_N
    every = planned_cap(COST_CLASSES["vectorised"], ALL_AUDIT_S)
    assert e.draw_cap("sequential", every=True) == every < SEQUENTIAL_DEFAULT_N  # make audit
    assert e.draw_cap("fixed", every=True) == min(FIXED_DEFAULT_N, every)


def test_A6_slow_entries_and_audit_samples_follow_the_rule():
    two_step = get("S21.3/laplace-classification-two-step")  # declares "solve"
    solve = COST_CLASSES["solve"]
    assert two_step.audit_samples is None
    assert two_step.draw_cap("sequential", cost=solve) == planned_cap(solve, PLANNED_AUDIT_S) \
        == 3_000
    assert two_step.draw_cap("fixed", cost=solve) == 3_000 // SEQUENTIAL_HEADROOM
    assert two_step.draw_cap("sequential", every=True, cost=solve) == \
        planned_cap(solve, ALL_AUDIT_S) == 64
    hist = get("A.5/histogram")  # a far-tail loss: its own, larger cap
    assert hist.draw_cap("sequential") == hist.audit_samples * SEQUENTIAL_HEADROOM > \
        SEQUENTIAL_DEFAULT_N
    loop = Entry("y", "P", "t", lambda d: None, lambda: None)
    cost = COST_CLASSES["loop"]
    assert loop.draw_cap("sequential", cost=cost) == planned_cap(cost, PLANNED_AUDIT_S)
    assert loop.draw_cap("fixed", cost=cost) == \
        loop.draw_cap("sequential", cost=cost) // SEQUENTIAL_HEADROOM
    with pytest.raises(ValueError, match="mode"):
        loop.draw_cap("fast")


def test_A6_the_library_plans_a_slow_kit_mechanism_from_its_own_declaration():
    """``audit_mechanism(two_step, data, rng)`` plans 3 000 draws per side and pair from the
    class's declaration; without it the library planned 200 000 (several hours of solves,
    cut by the 600 s time guard into an INCONCLUSIVE report)."""
    from dpgp_audit.audit import runner

    mech, data = get("S21.3/laplace-classification-two-step").make()
    rep = runner.audit_mechanism(mech, data, np.random.default_rng(0),
                                 auditors=("sensitivity",))
    assert rep.inputs["n_per_side"] == 3_000 and rep.inputs["cost_per_draw_s"] == 5e-3


def test_the_cli_takes_its_caps_from_the_rule(monkeypatch, capsys):
    from dpgp_audit.audit import runner

    calls: list[dict] = []
    real = runner.audit_mechanism

    def record(mech, data, rng, **kw):
        calls.append({"name": kw["name"], "n": kw["n"], "given": kw.get("cost_per_draw_s"),
                      "cost": declared_cost(mech)})
        return real(mech, data, rng, auditors=("sensitivity",), name=kw["name"],
                    blas_threads=None)

    monkeypatch.setattr(runner, "audit_mechanism", record)
    # one process: the calls are recorded here, not in forked workers
    assert cli.main(["audit", "--all", "--seed", "1", "--no-progress", "--jobs", "1"]) == 0
    capsys.readouterr()
    by = {c["name"]: c for c in calls}
    assert set(by) == {e.id for e in entries()}
    for e in entries():
        assert by[e.id]["n"] == e.draw_cap("sequential", every=True, cost=by[e.id]["cost"])
        assert by[e.id]["given"] is None  # the library reads the mechanism's declaration
