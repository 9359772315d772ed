"""A.3 two-sample helpers: the verdict rule of a certified lower bound."""

from __future__ import annotations

import math

import pytest

from dpgp_audit.audit.blackbox.twosample import bound_verdict
from dpgp_audit.audit.result import Verdict


@pytest.mark.parametrize(("lb", "ceiling", "claim", "verdict"), [
    (1.2, 9.0, 1.0, Verdict.VIOLATION),  # the certified bound exceeds the claim
    (1.0, 9.0, 1.0, Verdict.NO_EVIDENCE),  # equal is not above: the claim may be exact
    (0.0, 9.0, 1.0, Verdict.NO_EVIDENCE),
    (0.0, 1.0, 1.0, Verdict.INCONCLUSIVE),  # no n-sample test could have exceeded the claim
    (0.0, 0.5, 1.0, Verdict.INCONCLUSIVE),
    (math.inf, 0.5, 1.0, Verdict.VIOLATION),  # a violation stands whatever the ceiling
])
def test_A3_bound_verdict(lb, ceiling, claim, verdict):
    assert bound_verdict(lb, ceiling, claim) is verdict
