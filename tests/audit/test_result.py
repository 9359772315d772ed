"""How a report shows an auditor's estimate (catalogue A.6: reports that say what they found)."""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit.audit.result import AuditReport, AuditResult, Guarantee, Verdict
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.catalogue import get
from dpgp_audit.testing import _raise


def _result(verdict: Verdict, estimate: float, claimed: float = 1.0) -> AuditResult:
    return AuditResult(auditor="blackbox", verdict=verdict, guarantee=Guarantee.LOWER_BOUND,
                       estimate=estimate, claimed=claimed, alpha=0.05)


@pytest.mark.parametrize(("verdict", "estimate", "claimed", "shown"), [
    # the sequential bound is the largest rejected grid value; the claim is on the grid
    (Verdict.VIOLATION, 1.0, 1.0, "> 1"),
    (Verdict.VIOLATION, 1.00004, 1.0, "> 1"),  # prints as the claim: still strictly above it
    (Verdict.VIOLATION, 0.5, 0.5, "> 0.5"),
    (Verdict.VIOLATION, 1.685, 1.0, "1.685"),
    (Verdict.VIOLATION, float("inf"), 1.0, "inf"),
    (Verdict.NO_EVIDENCE, 1.0, 1.0, "1"),  # a bound at the claim without a violation
    (Verdict.NO_EVIDENCE, 0.4578, 1.0, "0.4578"),
])
def test_A6_estimate_text_never_reads_as_equal_to_the_claim_on_a_violation(
        verdict, estimate, claimed, shown):
    assert _result(verdict, estimate, claimed).estimate_text == shown


def test_A6_tables_show_a_bare_violation_as_above_the_claim():
    r = _result(Verdict.VIOLATION, 1.0)
    rep = AuditReport(mechanism="M", claim={"describe": "(1, 1e-05)-DP"}, inputs={},
                      results=(r,))
    row = next(line for line in rep.table().splitlines() if line.strip().startswith("blackbox"))
    assert row.split()[:5] == ["blackbox", "VIOLATION", "epsilon", ">", "1"]
    assert "&gt; 1</td>" in rep._repr_html_()
    assert "> 1 vs claimed 1" in r.summary()
    assert "&gt; 1 vs claimed 1" in r._repr_html_()
    with pytest.raises(AssertionError) as info:
        _raise(rep, seed=1, max_n=200, alpha=0.05, mechanism_id=None)
    assert "blackbox: epsilon > claimed 1 [" in str(info.value)
    assert "epsilon 1 > claimed 1" not in str(info.value)


@pytest.mark.parametrize(("verdict", "certified", "said"), [
    (Verdict.NO_EVIDENCE, [{"epsilon_lb": 0.0}], True),
    (Verdict.NO_EVIDENCE, None, False),  # the test never ran (a guard): nothing claimed
    (Verdict.VIOLATION, [{"epsilon_lb": 4.0}], False),
])
def test_A7_a_support_screen_lead_the_test_cleared_is_said_to_be_cleared(verdict, certified,
                                                                         said):
    """The screen's count of pairs whose pilot outputs fell on one side only is a lead;
    where the certifying test ran and found nothing, the line says so, so that rare
    values of a discrete release do not read as a float leak."""
    details = {"max_ratio": 1e-15, "visible": 0, "candidates": 13, "refused": 0,
               "support_visible": 1, "domain_y_bound": 1.0}
    if certified is not None:
        details["support_certified"] = certified
    res = AuditResult(auditor="precision", verdict=verdict, guarantee=Guarantee.LOWER_BOUND,
                      estimate=0.0, claimed=1.0, details=details)
    line = AuditReport(mechanism="M", claim={}, inputs={}, results=(res,)).table()
    assert "float supports differ visibly for 1 pair(s)" in line
    assert ("certifying test on fresh draws found no difference" in line) is said


def _sequential_line(**details):
    base = {"mode": "sequential", "n_per_side": 200000, "max_n": 200000, "stopped": "max_n",
            "epsilon_ceiling": 11.0, "pairs_confirmed": 2, "ranking": "rank_pairs",
            "used": {"pilot_pairs": 98, "pilot_draws": 200}, "ranked_by_model": False}
    base.update(details)
    verdict = base.pop("verdict", Verdict.NO_EVIDENCE)
    res = AuditResult(auditor="blackbox", verdict=verdict, guarantee=Guarantee.LOWER_BOUND,
                      estimate=0.0, claimed=1.0, details=base)
    return AuditReport(mechanism="M", claim={}, inputs={}, results=(res,)).table()


def test_A8_pilot_chosen_pairs_that_found_nothing_point_to_evidence():
    """A sample-only release audited to the cap on the two pairs a pilot chose: the line
    says how many piloted pairs were never bet on and what bets on all of them."""
    line = _sequential_line()
    assert "the other 96 piloted pair(s) were not bet on" in line
    assert "--evidence (evidence=True) bets on every pair" in line
    for quiet in ({"ranked_by_model": True}, {"stopped": "violation",
                                              "verdict": Verdict.VIOLATION},
                  {"stopped": "time_guard", "verdict": Verdict.INCONCLUSIVE},
                  {"evidence": {"pairs": 96, "draws_per_side": 4096, "warmup_per_side": 4096,
                                "keep": 2}},
                  {"used": {"pilot_pairs": 0, "pilot_draws": 0}},
                  {"used": {"pilot_pairs": 2, "pilot_draws": 200}}):
        assert "were not bet on" not in _sequential_line(**quiet), quiet


def test_A8_the_hint_follows_the_mechanism_kind():
    """End to end: a sample-only release gets the line, a release with a model does not."""
    mech, data = get("A.5/mean-min-size").make()
    line = audit_mechanism(mech, data, np.random.default_rng(0), auditors=("blackbox",),
                           n=2000).table()
    assert "piloted pair(s) were not bet on" in line
    mech, data = get("P.1/gaussian-sum").make()
    line = audit_mechanism(mech, data, np.random.default_rng(0), auditors=("blackbox",),
                           n=2000).table()
    assert "were not bet on" not in line
