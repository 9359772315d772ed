"""A.5: every planted bug is caught by the cheapest auditor able to see it; controls pass.

Each row states the auditor and the samples per side it needs (0 = no samples:
the sensitivity checker and the white-box auditor are deterministic). Seeds are
fixed, so the tests are deterministic; the n's carry a margin over the smallest
n that worked in exploration (seeds 0–2).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given

from dpgp_audit.audit.neighbours import neighbour_pairs
from dpgp_audit.audit.result import Verdict
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.audit.strategies import neighbouring_datasets
from dpgp_audit.bugs import zoo
from dpgp_audit.bugs.calibration import (
    ExponentialSelection,
    exp_default_data,
    exp_realised_epsilon,
)
from dpgp_audit.catalogue import entries, get
from dpgp_audit.privacy.claims import whole_rows

# (bug ID, cheapest auditor that sees it, samples per side it needs, extra arguments)
# (the StatDP/DP-Sniper rows need their exposing pair and large n: tests/bugs/test_statdp.py)
CHEAPEST = [(b.id, b.caught_by, b.n, b.audit_kwargs) for b in zoo.planted()
            if not b.id.endswith("monotone") and not b.id.startswith("planted/statdp-")]


# Bugs a cheaper auditor is blind to (the bug is not in what that auditor inspects).
BLIND = [
    ("planted/std-as-variance", "sensitivity"),      # the query and its bound are right
    ("planted/classical-large-eps", "sensitivity"),
    ("planted/hall-large-eps", "sensitivity"),
    ("planted/data-dependent-hyperparams", "sensitivity"),
    ("planted/fixed-seed", "sensitivity"),
    ("planted/fixed-seed", "whitebox"),              # the analytic model is right; the sampler not
    ("planted/laplace-l2", "sensitivity"),           # the L2 bound is right; L1 was needed
    ("planted/exp-no-half", "sensitivity"),          # Δu = 1 is right; the /2 is missing
]

CONTROLS = ["P.1/gaussian-sum", "A.5/gaussian-sum-rows", "A.5/gp-smoother-iso",
            "A.5/gp-smoother-prior", "A.5/laplace-vector", "A.5/exp-mech",
            "planted/exp-no-half-monotone"]


def _audit(mech_id: str, auditors: tuple[str, ...], n: int, seed: int = 0, **kw):
    mech, data = get(mech_id).make()
    # fixed mode: the stated n is exactly the draws per side (the sequential default
    # path is tested in test_default_path.py)
    return audit_mechanism(mech, data, np.random.default_rng(seed), auditors=auditors,
                           n=max(n, 2), name=mech_id, **{"mode": "fixed", **kw})


def test_A5_every_planted_bug_has_a_stated_auditor():
    planted = {e.id for e in entries(include_planted=True) if e.planted}
    assert planted == {b.id for b in zoo.planted()}


@pytest.mark.parametrize(("mech_id", "auditor", "n", "kw"), CHEAPEST,
                         ids=[c[0] for c in CHEAPEST])
def test_A5_bug_caught_by_cheapest_auditor(mech_id, auditor, n, kw):
    report = _audit(mech_id, (auditor,), n, **kw)
    res = report.result(auditor)
    assert res is not None, report.skipped
    assert res.verdict is Verdict.VIOLATION, report.table()
    assert report.verdict is Verdict.VIOLATION
    # the model check refutes the mechanism's description, not a pair
    assert report.witness is not None or auditor == "model-check"
    entry = get(mech_id)
    if auditor in ("whitebox", "blackbox") and res.quantity == "epsilon":
        # a sound auditor never exceeds the truth (exact white-box equals it for linear bugs)
        assert res.estimate <= entry.true_epsilon * (1 + 1e-6)


@pytest.mark.parametrize(("mech_id", "auditor"), BLIND, ids=[f"{a}-{b}" for a, b in BLIND])
def test_A5_cheaper_auditor_is_blind_to_the_bug(mech_id, auditor):
    report = _audit(mech_id, (auditor,), 2_000, n_mc=2_000)
    assert report.result(auditor).verdict is not Verdict.VIOLATION


def test_A5_white_box_only_bug_is_out_of_black_box_reach():
    """Classical calibration at ε = 20: true ε = 25.4, but no event of mass e^-20 is seen."""
    report = _audit("planted/classical-large-eps", ("blackbox",), 20_000)
    res = report.result("blackbox")
    assert res.verdict is Verdict.INCONCLUSIVE
    assert res.details["epsilon_ceiling"] < 20


@pytest.mark.parametrize("mech_id", CONTROLS)
def test_A5_controls_are_not_flagged(mech_id):
    report = _audit(mech_id, ("sensitivity", "whitebox", "blackbox"), 20_000, seed=1)
    assert report.verdict is not Verdict.VIOLATION, report.table()
    wb = report.result("whitebox")
    if wb is not None:  # exact: the analytic calibration is tight, ε(δ) equals the claim
        assert wb.estimate == pytest.approx(report.claim["epsilon"], rel=1e-6)


def test_A5_registry_metadata():
    planted = [e for e in entries(include_planted=True) if e.planted]
    assert len(planted) >= 13
    normal = {e.id for e in entries()}
    for e in planted:
        assert e.twin in normal, e.id
        assert e.true_epsilon is not None
        claimed = e.make()[0].claim.epsilon
        if e.id.endswith("monotone"):
            assert e.true_epsilon <= claimed
        else:
            assert e.true_epsilon > claimed, e.id


@pytest.mark.parametrize(("mech_id", "reference"), [
    # AUDITING.md §4.2 / §1 (computed independently with numpy/scipy for the design notes)
    ("planted/sensitivity-x2", 2.155), ("planted/sensitivity-x1.25", 1.278),
    ("planted/neighbour-mismatch", 2.155), ("planted/std-as-variance", 2.07),
    ("planted/classical-large-eps", 25.4), ("planted/hall-large-eps", 24.8),
    ("planted/laplace-l2", 4.0),
])
def test_A5_true_epsilon_matches_reference(mech_id, reference):
    # references are quoted to 3 significant digits
    assert get(mech_id).true_epsilon == pytest.approx(reference, rel=2e-3, abs=0.006)


def test_A5_exp_mechanism_realised_epsilon_closed_form():
    """Balanced votes, one record switches from against to for candidate b (k = 10, ε = 1).

    Closed form: ratio for b = e^ε (A + B) / (e^ε A + e^−ε B) with B/A = (k − 1) e^ε
    (the record's own ±1/2 on balanced utilities) → log ratio = 1.776 (AUDITING.md §4.2).
    """
    k, eps = 10, 1.0
    A, B = math.exp(-eps / 2), (k - 1) * math.exp(eps / 2)
    closed = eps + math.log((A + B) / (math.exp(eps) * A + math.exp(-eps) * B))
    assert closed == pytest.approx(1.776, abs=1e-3)
    data = exp_default_data()
    pair = next(p for p in neighbour_pairs(data, whole_rows(1.0), np.random.default_rng(0))
                if p.label == "row 0: y=+b -> y=-b")
    bug = ExponentialSelection(epsilon=eps, k=k, utility="vote", factor=1.0)
    assert exp_realised_epsilon(bug, pair.d0, pair.d1) == pytest.approx(closed, rel=1e-12)
    assert get("planted/exp-no-half").true_epsilon == pytest.approx(2.0, abs=1e-6)


_MONO = ExponentialSelection(epsilon=1.0, utility="monotone", factor=1.0)
_GOOD = ExponentialSelection(epsilon=1.0, utility="vote", factor=2.0)


@given(neighbouring_datasets(whole_rows(1.0), n=(1, 12)))
def test_A5_negative_controls_are_exactly_private(pair):
    """Monotone utility without /2, and the vote utility with /2: ε ≤ 1 on every pair."""
    assert exp_realised_epsilon(_MONO, pair.d0, pair.d1) <= 1.0 + 1e-9
    assert exp_realised_epsilon(_GOOD, pair.d0, pair.d1) <= 1.0 + 1e-9


@pytest.mark.parametrize(("mech_id", "auditor", "n"), [
    ("planted/sensitivity-x2", "blackbox", 200_000),
    ("planted/std-as-variance", "blackbox", 200_000),
    ("planted/sensitivity-x2", "gdp-fit", 20_000),
    ("planted/sensitivity-x1.25", "gdp-fit", 100_000),
    ("planted/data-dependent-hyperparams", "blackbox", 50_000),
    ("planted/gp-sup-norm", "gdp-fit", 50_000),
])
def test_A5_black_box_also_catches_with_more_samples(mech_id, auditor, n):
    report = _audit(mech_id, (auditor,), n)
    assert report.result(auditor).verdict is Verdict.VIOLATION, report.table()
