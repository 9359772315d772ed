"""P.6: composition of claims and budget splitting."""

from __future__ import annotations

import math

import dp_accounting
import pytest
from dp_accounting.pld import pld_privacy_accountant
from hypothesis import given
from hypothesis import strategies as st

from dpgp_audit.privacy.claims import (
    ZCDP,
    ApproxDP,
    GaussianDP,
    PureDP,
    outputs_only,
    whole_rows,
)
from dpgp_audit.privacy.composition import (
    Budget,
    basic_composition,
    gdp_composition,
    split_budget,
    split_gdp,
    zcdp_composition,
)
from dpgp_audit.privacy.gdp import gdp_delta

REL = outputs_only(1.0)


def test_p6_basic_composition_adds():
    c = basic_composition([ApproxDP(epsilon=0.5, delta=1e-6, relation=REL),
                           PureDP(epsilon=0.25, relation=REL),
                           ApproxDP(epsilon=1.0, delta=2e-6, relation=REL, note="a")])
    assert isinstance(c, ApproxDP) and not isinstance(c, PureDP)
    assert c.epsilon == 1.75 and c.delta == pytest.approx(3e-6, rel=1e-15)
    assert c.relation == REL and c.proven and c.note == "a"


def test_p6_basic_composition_of_pure_is_pure_and_unproven_propagates():
    c = basic_composition([PureDP(epsilon=0.1, relation=REL),
                           PureDP(epsilon=0.2, relation=REL, proven=False)])
    assert isinstance(c, PureDP) and c.delta == 0.0
    assert c.epsilon == pytest.approx(0.3) and c.proven is False


def test_p6_basic_composition_is_valid_for_laplace_events():
    # Two Laplace mechanisms (sensitivity 1) with pure eps 0.5 and 0.25: the exact
    # composed profile (dp-accounting PLD) has delta ~ 0 at the basic-composition eps.
    claims = [PureDP(epsilon=0.5, relation=REL), PureDP(epsilon=0.25, relation=REL)]
    total = basic_composition(claims)
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(dp_accounting.ComposedDpEvent([dp_accounting.LaplaceDpEvent(2.0),
                                               dp_accounting.LaplaceDpEvent(4.0)]))
    assert acc.get_delta(total.epsilon) < 1e-12
    assert acc.get_delta(0.9 * total.epsilon) > 1e-4  # and it is tight for Laplace


@pytest.mark.parametrize(("claims", "match"), [
    ([], "at least one"),
    ([PureDP(epsilon=1, relation=REL), PureDP(epsilon=1, relation=whole_rows(1.0))],
     "different neighbour relation"),
    ([PureDP(epsilon=1, relation=REL), PureDP(epsilon=1, relation=outputs_only(2.0))],
     "different neighbour relation"),
    ([GaussianDP(mu=1, relation=REL)], "gdp_composition"),
    ([ZCDP(rho=1, relation=REL)], "zcdp_composition"),
    ([ApproxDP(epsilon=1, delta=0.6, relation=REL)] * 2, "delta"),
])
def test_p6_basic_composition_errors(claims, match):
    with pytest.raises(ValueError, match=match):
        basic_composition(claims)


def test_p6_gdp_composition_matches_pld_accountant():
    sigmas = [1.0, 2.0, 3.0]
    c = gdp_composition([GaussianDP(mu=1 / s, relation=REL) for s in sigmas])
    assert c.mu == pytest.approx(math.sqrt(1 + 1 / 4 + 1 / 9), rel=1e-14)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(s) for s in sigmas]))
    for eps in (0.5, 1.0, 2.0):
        assert acc.get_delta(eps) == pytest.approx(gdp_delta(eps, c.mu), rel=1e-3)
    with pytest.raises(ValueError, match="GaussianDP"):
        gdp_composition([PureDP(epsilon=1, relation=REL)])


def test_p6_zcdp_composition_adds_rho():
    c = zcdp_composition([ZCDP(rho=0.1, relation=REL), ZCDP(rho=0.3, relation=REL)])
    assert c.rho == pytest.approx(0.4)


@given(st.floats(1e-3, 100.0), st.sampled_from([0.0, 1e-12, 1e-5, 0.5]),
       st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=8))
def test_p6_split_then_compose_stays_within_budget(eps, delta, weights):
    parts = split_budget(eps, delta, weights)
    assert len(parts) == len(weights)
    total = basic_composition([p.claim(REL) for p in parts])
    assert total.epsilon <= eps and total.delta <= delta
    assert total.epsilon == pytest.approx(eps, rel=1e-12)
    assert total.delta == pytest.approx(delta, rel=1e-12, abs=1e-300)
    shares = [w / sum(weights) for w in weights]
    for p, s in zip(parts, shares, strict=True):
        assert p.epsilon == pytest.approx(eps * s, rel=1e-12)


def test_p6_split_budget_with_pure_part():
    # S18.4 style: half of eps for the exponential mechanism (pure), all delta to the release.
    sel, rel = split_budget(1.0, 1e-2, [1, 1], delta_weights=[0, 1])
    assert sel == Budget(0.5, 0.0) and rel == Budget(0.5, 1e-2)
    assert isinstance(sel.claim(REL), PureDP)
    eps_r, delta_r = rel
    assert (eps_r, delta_r) == (0.5, 1e-2)


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    ((1.0, 1e-5, []), {}, "weights"),
    ((1.0, 1e-5, [1, 0]), {}, "weights"),
    ((1.0, 1e-5, [1, -1]), {}, "weights"),
    ((1.0, 1e-5, [1, math.nan]), {}, "weights"),
    ((0.0, 1e-5, [1]), {}, "epsilon"),
    ((1.0, 1.0, [1]), {}, "delta"),
    ((1.0, 1e-5, [1, 1]), {"delta_weights": [1]}, "delta_weights"),
    ((1.0, 1e-5, [1, 1]), {"delta_weights": [0, 0]}, "delta_weights"),
])
def test_p6_split_budget_errors(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        split_budget(*args, **kwargs)


@given(st.floats(1e-3, 50.0), st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=8))
def test_p6_split_gdp_recomposes(mu, weights):
    mus = split_gdp(mu, weights)
    composed = gdp_composition([GaussianDP(mu=m, relation=REL) for m in mus]).mu
    assert composed <= mu
    assert composed == pytest.approx(mu, rel=1e-12)
