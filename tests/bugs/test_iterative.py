"""A.5 / A.9: the iterative release planted with its budget split as if composition were free.

The true ε is the composition's closed form (bugs/iterative.py): every step is exactly
(Δ/b)-DP whatever the path, so T steps give TΔ/b — √T·ε for the bug, ε for its twin. The
grey-box path analysis bounds it from below to within its cells' slack, on the default
path, and the survey alone (the first step) bounds only one step's share.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgp_audit.audit.result import Guarantee, Verdict
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.bugs.iterative import PenalisedDescent
from dpgp_audit.catalogue import get

BUG, TWIN = "planted/descent-root-t-budget", "A.5/noisy-descent"


def test_A5_true_epsilon_is_the_composition_of_the_steps():
    bug, _ = get(BUG).make()
    twin, _ = get(TWIN).make()
    assert bug.true_epsilon() == pytest.approx(math.sqrt(bug.steps) * bug.epsilon)
    assert twin.true_epsilon() == pytest.approx(twin.epsilon)
    # each step's location moves by η times the mean's change, whatever the prefix
    rng = np.random.default_rng(0)
    y0 = rng.uniform(-1, 1, bug.n_rows)
    y1 = y0.copy()
    y1[3] = -y0[3]
    for p in rng.uniform(-bug.radius, bug.radius, 20):
        loc = [p - bug.eta * (p + bug.penalty * np.tanh(p) - np.mean(y)) for y in (y0, y1)]
        assert loc[0] - loc[1] == pytest.approx(bug.eta * (np.mean(y0) - np.mean(y1)))


@pytest.mark.parametrize("seed", [0, 1])
def test_A9_default_path_sizes_the_iterative_bug_and_bounds_its_twin(seed):
    mech, data = get(BUG).make()
    report = audit_mechanism(mech, data, np.random.default_rng(seed))
    grey = report.result("greybox")
    assert grey.verdict is Verdict.VIOLATION, report.table()
    assert grey.guarantee is Guarantee.GREYBOX_PATH
    assert mech.true_epsilon() - 0.05 <= grey.estimate <= mech.true_epsilon()
    assert "path analysis of an iterative release" in report.table()
    twin, tdata = get(TWIN).make()
    report = audit_mechanism(twin, tdata, np.random.default_rng(seed))
    assert report.verdict is not Verdict.VIOLATION, report.table()
    grey = report.result("greybox")
    assert grey.guarantee is Guarantee.GREYBOX_PATH
    assert twin.epsilon - 0.05 <= grey.estimate <= twin.epsilon


def test_A9_without_the_path_analysis_the_survey_bounds_one_step():
    """The first step alone is ε/√T-DP: what the survey's part bound could see before."""
    mech, data = get(BUG).make()
    report = audit_mechanism(mech, data, np.random.default_rng(0), auditors=("greybox",))
    part = [c for c in report.result("greybox").details["ranking"] if c["status"] != "iterative"]
    assert part and max(c["score"] for c in part) <= mech.step_epsilon + 1e-9


def test_A5_refuses_other_sizes_and_targets_outside_the_domain():
    mech = PenalisedDescent(epsilon=1.0, n_rows=5)
    from dpgp_audit import Dataset

    with pytest.raises(ValueError, match="built for 5 rows"):
        mech.sample(Dataset(np.zeros((4, 1)), np.zeros(4)), 2, np.random.default_rng(0))
    with pytest.raises(ValueError):
        mech.sample(Dataset(np.zeros((5, 1)), np.full(5, 2.0)), 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="budget"):
        PenalisedDescent(epsilon=1.0, n_rows=5, budget="half")
