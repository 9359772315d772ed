"""S18 mechanisms through the kit's auditors: audit_whitebox at the claim over
hypothesis-generated datasets, check_sensitivity confirming each bound, planted flagged."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpgp_audit import catalogue
from dpgp_audit.audit.neighbours import neighbour_pairs
from dpgp_audit.audit.result import Verdict
from dpgp_audit.audit.sensitivity import check_sensitivity
from dpgp_audit.audit.whitebox import audit_whitebox
from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.methods.s18.cloaking import CloakingGP
from dpgp_audit.methods.s18.hyperparameter_selection import (
    HyperparameterSelection,
    default_configs,
    s18_sse_sensitivity,
)
from dpgp_audit.methods.s18.standard import StandardDPGP


def _data(seed, n):
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(0, 10, n))
    return Dataset(X[:, None], rng.uniform(-1, 1, n))


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(3, 10), k=st.integers(1, 14),
       ls=st.floats(0.5, 3.0))
def test_whitebox_s18_1_and_s18_2_at_claim(seed, n, k, ls):
    data = _data(seed, n)
    Xs = np.linspace(-1, 11, k)
    rng = np.random.default_rng(seed)
    for mech in (StandardDPGP(EQ(ls), 0.1, data.X, Xs, 1.0, 1.0, 0.01),
                 StandardDPGP(EQ(ls), 0.1, data.X, Xs, 1.0, 2.0, 0.01, sensitivity="rkhs",
                              method="gdp"),
                 CloakingGP(EQ(ls), 0.1, data.X, Xs, 1.0, 1.0, 0.01),
                 CloakingGP(EQ(ls), 0.1, data.X, Xs, 1.0, 3.0, 0.01, method="analytic")):
        pairs = neighbour_pairs(data, mech.claim.relation, rng)
        res = audit_whitebox(mech, pairs)
        assert res.verdict is not Verdict.VIOLATION, res.summary()


@pytest.mark.parametrize("entry_id", ["S18.1/standard", "S18.1/standard-rkhs", "S18.2/cloaking",
                                      "S18.2/cloaking-analytic", "S18.3/binning-laplace",
                                      "S18.3/binning-gaussian", "S18.4/selection"])
def test_sensitivity_checker_confirms_bounds(entry_id, rng):
    mech, data = catalogue.get(entry_id).make()
    res = check_sensitivity(mech, data, rng, budget=150)
    assert res.verdict is Verdict.NO_EVIDENCE, res.summary()
    assert res.estimate <= res.claimed * (1 + 1e-9)


@pytest.mark.parametrize("entry_id", ["planted/s18-delta-no-sqrt",
                                      "planted/s18-pinv-drops-direction", "planted/s18-supnorm"])
def test_planted_flagged_by_whitebox(entry_id, rng):
    entry = catalogue.get(entry_id)
    mech, data = entry.make()
    res = audit_whitebox(mech, neighbour_pairs(data, mech.claim.relation, rng))
    assert res.verdict is Verdict.VIOLATION, res.summary()
    twin, tdata = catalogue.get(entry.twin).make()
    tres = audit_whitebox(twin, neighbour_pairs(tdata, twin.claim.relation, rng))
    assert tres.verdict is not Verdict.VIOLATION
    if entry_id.endswith("pinv-drops-direction"):
        assert np.isinf(res.estimate) or res.details.get("mu") in (float("inf"), "inf")


def test_sensitivity_checker_catches_paper_sse_bound(rng):
    x = np.linspace(0.0, 10.0, 24)
    data = Dataset(x[:, None], 2.0 * np.where(np.arange(24) % 2 == 0, 1.0, -1.0))
    paper = HyperparameterSelection(data.X, default_configs(), 1.0, 1.0, n_folds=4,
                                    sensitivity=s18_sse_sensitivity)
    res = check_sensitivity(paper, data, rng, budget=200)
    assert res.verdict is Verdict.VIOLATION
    assert "witness" in res.details
