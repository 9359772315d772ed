"""Issue 20 §1, §3: the catalogue's draw-cap rule (``Entry.draw_cap``), a function of
declared numbers only (cost classes, ``audit_samples``), and its use by ``make audit``."""

from __future__ import annotations

import pytest

from dpgp_audit import cli
from dpgp_audit.audit.defaults import (
    ALL_AUDIT_S,
    COST_CLASSES,
    FIXED_DEFAULT_N,
    PLANNED_AUDIT_S,
    SEQUENTIAL_DEFAULT_N,
    SEQUENTIAL_HEADROOM,
    planned_cap,
)
from dpgp_audit.catalogue import Entry, entries, get


def test_every_entry_declares_a_known_cost_class():
    for e in entries(include_planted=True):
        assert e.cost_class in COST_CLASSES
        assert e.seconds_per_draw == COST_CLASSES[e.cost_class]
    with pytest.raises(ValueError, match="cost_class"):
        Entry("x", "P", "t", lambda d: None, lambda: None, cost_class="fast-ish")


def test_one_mechanism_gets_the_library_cap_and_every_mechanism_a_smaller_one():
    e = get("P.1/gaussian-sum")  # vectorised, no audit_samples
    assert e.draw_cap("sequential") == SEQUENTIAL_DEFAULT_N  # make audit MECH=ID
    assert e.draw_cap("fixed") == FIXED_DEFAULT_N
    every = planned_cap(COST_CLASSES["vectorised"], ALL_AUDIT_S)
    assert e.draw_cap("sequential", every=True) == every < SEQUENTIAL_DEFAULT_N  # make audit
    assert e.draw_cap("fixed", every=True) == min(FIXED_DEFAULT_N, every)


def test_slow_entries_and_audit_samples_follow_the_rule():
    slow = get("S21.3/laplace-classification-two-step")  # "solve", audit_samples 200
    assert slow.cost_class == "solve" and slow.audit_samples == 200
    assert slow.draw_cap("sequential") == 200 * SEQUENTIAL_HEADROOM
    assert slow.draw_cap("fixed") == 200
    assert slow.draw_cap("sequential", every=True) == min(
        2_000, planned_cap(COST_CLASSES["solve"], ALL_AUDIT_S))
    hist = get("A.5/histogram")  # a far-tail loss: its own, larger cap
    assert hist.draw_cap("sequential") == hist.audit_samples * SEQUENTIAL_HEADROOM > \
        SEQUENTIAL_DEFAULT_N
    loop = Entry("y", "P", "t", lambda d: None, lambda: None, cost_class="loop")
    assert loop.draw_cap("sequential") == planned_cap(COST_CLASSES["loop"], PLANNED_AUDIT_S)
    assert loop.draw_cap("fixed") == loop.draw_cap("sequential") // SEQUENTIAL_HEADROOM
    assert loop.declared_cost_per_draw_s == COST_CLASSES["loop"]
    assert get("P.1/gaussian-sum").declared_cost_per_draw_s is None


def test_the_cli_takes_its_caps_from_the_rule(monkeypatch, capsys):
    from dpgp_audit.audit import runner

    calls: list[dict] = []
    real = runner.audit_mechanism

    def record(mech, data, rng, **kw):
        calls.append({"name": kw["name"], "n": kw["n"], "cost": kw["cost_per_draw_s"]})
        return real(mech, data, rng, auditors=("sensitivity",), name=kw["name"],
                    blas_threads=None)

    monkeypatch.setattr(runner, "audit_mechanism", record)
    assert cli.main(["audit", "--all", "--seed", "1", "--no-progress"]) == 0
    capsys.readouterr()
    by = {c["name"]: c for c in calls}
    assert set(by) == {e.id for e in entries()}
    for e in entries():
        assert by[e.id]["n"] == e.draw_cap("sequential", every=True)
        assert by[e.id]["cost"] == e.declared_cost_per_draw_s
