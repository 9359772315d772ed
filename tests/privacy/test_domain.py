"""Declared public domains and the float-safety rule (issue 10 §1, tightened in issue 20 §4).

The rule: at the largest legal release ``top = bound · gain + |offset| + 64 sd`` the float
spacing is at most 2⁻¹⁰ of the release grid Λ = 2^(⌊log₂ sd⌋ − 10). Expected values come
from the definition of ``np.spacing`` (IEEE 754 doubles: the gap at |v| in [2^e, 2^(e+1))
is 2^(e−52)) and of Λ (via ``math.frexp``), never from the code under test.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpgp_audit.audit.precision import screen_precision
from dpgp_audit.catalogue import entries
from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.methods.s18.cloaking import CloakingGP
from dpgp_audit.methods.toolbox.primitives import GaussianSumMechanism, LaplaceSumMechanism
from dpgp_audit.privacy.claims import ApproxDP, outputs_only
from dpgp_audit.privacy.domain import (
    DEFAULT_Y_BOUND,
    PublicDomain,
    check_float_safety,
    check_linear_release,
    largest_safe_release,
)


def _grid(sd: float) -> float:
    """Λ = 2^(⌊log₂ sd⌋ − 10), from frexp: sd = m 2^e with m in [½, 1)."""
    return math.ldexp(1.0, math.frexp(sd)[1] - 1 - 10)


@settings(max_examples=60, deadline=None)
@given(sd=st.floats(1e-200, 1e200))
def test_largest_safe_release_is_the_last_float_before_the_spacing_doubles(sd):
    v = largest_safe_release(sd)
    target = _grid(sd) * 2.0**-10
    assert np.spacing(v) <= target
    # the next float up lies in the next binade, whose spacing is twice as large
    nxt = np.nextafter(v, np.inf)
    assert np.spacing(nxt) == 2 * np.spacing(v)
    assert np.spacing(nxt) > target


def test_largest_safe_release_closed_form():
    # sd = 1: Λ = 2^-10, spacing 2^(e-52) <= 2^-20 for e <= 32, so v < 2^33
    assert largest_safe_release(1.0) == np.nextafter(2.0**33, 0)


def test_float_safety_refuses_and_names_the_largest_safe_bound():
    sigma = 3.73  # Λ = 2^(1 - 10); spacing(top) <= 2^-19 needs top < 2^34
    with pytest.raises(ValueError, match=r"y_bound = 1e\+12 is not float-safe") as info:
        check_float_safety(1e12, 20, sigma)
    safe = float(info.value.args[0].rsplit(" ", 1)[1])
    assert safe == pytest.approx((2.0**34 - 64 * sigma) / 20, rel=1e-6)
    assert check_float_safety(safe, 20, sigma) <= 2.0**-10  # spacing / Λ
    with pytest.raises(ValueError, match="not float-safe"):  # and it is tight
        check_float_safety(safe * 1.01, 20, sigma)


def test_linear_release_rule_is_per_coordinate_and_refuses_noise_free_outputs():
    dom = PublicDomain(10.0)
    C = np.array([[1.0, 2.0], [0.5, 0.5]])
    ratio = check_linear_release(dom, C, np.array([1.0, 1e-3]))
    # coordinate 1: top = 10 · 1 + 64e-3 in [8, 16): spacing 2^-49; Λ(1e-3) = 2^-20
    assert ratio == 2.0**-49 / 2.0**-20
    with pytest.raises(ValueError, match="carries no noise"):
        check_linear_release(dom, C, np.array([1.0, 0.0]))


def test_domain_refuses_or_clips_by_contract():
    with pytest.raises(ValueError, match=r"y: 1 target.*\|y\| <= 2"):
        PublicDomain(2.0).targets([0.0, 3.0])
    np.testing.assert_array_equal(PublicDomain(2.0, clip=True).targets([0.0, 3.0, -9.0]),
                                  [0.0, 2.0, -2.0])
    with pytest.raises(ValueError, match="y_bound"):
        PublicDomain(math.inf)


def test_claims_carry_the_domain_in_prose_and_json():
    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(1.0),
                     domain=PublicDomain(5.0))
    assert "domain |y| <= 5" in claim.describe()
    assert claim.as_dict()["domain"]["y_bound"] == 5.0 and claim.domain_bound == 5.0


def test_gaussian_sum_refuses_a_bound_that_is_not_float_safe_and_accepts_the_safe_one():
    data = default_dataset()
    mech = GaussianSumMechanism(d=1.0, epsilon=1.0, delta=1e-5, y_bound=1e13)
    with pytest.raises(ValueError, match="largest safe y_bound") as info:
        mech.sample(data, 2, np.random.default_rng(0))
    safe = float(info.value.args[0].rsplit(" ", 1)[1])
    ok = GaussianSumMechanism(d=1.0, epsilon=1.0, delta=1e-5, y_bound=safe)
    assert ok.sample(data, 2, np.random.default_rng(0)).shape == (2, 1)


def test_cloaking_refuses_an_unsafe_bound_at_construction():
    data = default_dataset()
    with pytest.raises(ValueError, match="not float-safe"):
        CloakingGP(EQ(lengthscale=1.5), 0.1, data.X, np.linspace(0, 10, 6), 1.0, 1.0, 0.01,
                   y_bound=1e15)


def test_default_domain_is_documented_and_enforced():
    mech = LaplaceSumMechanism(d=1.0, epsilon=1.0)
    assert mech.claim.domain.y_bound == DEFAULT_Y_BOUND
    bad = Dataset(np.zeros((2, 1)), [0.0, 2 * DEFAULT_Y_BOUND])
    with pytest.raises(ValueError, match="y: 1 target"):
        mech.sample(bad, 1, np.random.default_rng(0))


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    SHIPPED = {e.id: e.make() for e in entries()}


@pytest.mark.parametrize("mech_id", sorted(SHIPPED))
def test_no_rounding_is_visible_at_the_domain_bound_of_any_shipped_mechanism(mech_id):
    # A.7's screen at the largest legal values: every probe accepted by the mechanism has
    # float spacing far below the noise (the rule holds), and none is visible
    mech, data = SHIPPED[mech_id]
    screen = screen_precision(mech, data, np.random.default_rng(11), pilot=100, per_scale=3)
    if screen.skipped is not None:
        if screen.skipped.startswith("no generated pair is accepted by the mechanism"):
            # a classifier takes labels only: no target move of the screen is a dataset it
            # accepts, so there is no release to probe (the report says so)
            assert set(np.unique(data.y)) <= {-1.0, 1.0}, screen.skipped
            return
        assert "discrete" in screen.skipped
        return
    assert screen.details["visible"] == 0, screen.details
    # spacing(top) <= 2^-10 Λ <= 2^-20 sd at every legal release
    assert screen.details["max_ratio"] <= 2.0**-20


def test_domain_problem_names_what_lies_outside_and_accepts_what_the_domain_covers():
    from dpgp_audit import Dataset, PublicDomain, PureDP, outputs_only
    from dpgp_audit.privacy.claims import ApproxDP, whole_rows
    from dpgp_audit.privacy.domain import domain_problem

    data = Dataset(np.zeros((3, 1)), np.array([0.0, 5.0, -0.5]))
    declared = PureDP(epsilon=1.0, relation=outputs_only(2.0), domain=PublicDomain(y_bound=1.0))
    assert "1 target(s) lie outside the declared bound |y| <= 1 (max |y| = 5)" in \
        domain_problem(declared, data)
    wide = PureDP(epsilon=1.0, relation=outputs_only(2.0), domain=PublicDomain(y_bound=5.0))
    clipping = PureDP(epsilon=1.0, relation=outputs_only(2.0),
                      domain=PublicDomain(y_bound=1.0, clip=True))
    undeclared = PureDP(epsilon=1.0, relation=outputs_only(2.0))
    assert domain_problem(wide, data) is None  # |y| = 5 is inside |y| <= 5
    assert domain_problem(clipping, data) is None  # a clipping domain takes any target
    assert domain_problem(undeclared, data) is None  # nothing declared, nothing to check
    rows = ApproxDP(epsilon=1.0, delta=1e-5, relation=whole_rows(2.0))
    assert domain_problem(rows, data) == ("y: max |y| = 5 exceeds the whole-row relation's "
                                          "bound |y| <= 2")


# --------------------------------------------------------------------------- label domains
def test_label_domain_refuses_every_other_value_and_describes_itself():
    dom = PublicDomain(1.0, labels=(1.0, -1.0, 1.0))
    assert dom.labels == (-1.0, 1.0)
    assert dom.targets(np.array([-1.0, 1.0, 1.0])).tolist() == [-1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="not among the declared labels"):
        dom.targets(np.array([-1.0, 0.0]))
    with pytest.raises(ValueError, match="outside the declared bound"):
        dom.targets(np.array([2.0]))
    assert dom.describe() == "y in {-1, 1}" and dom.as_dict()["labels"] == [-1.0, 1.0]


@pytest.mark.parametrize("kw", [dict(labels=()), dict(labels=(0.0, 2.0)),
                                dict(labels=(0.0, float("nan"))),
                                dict(labels=(0.0, 1.0), clip=True)])
def test_label_domain_rejects_labels_it_cannot_hold(kw):
    with pytest.raises(ValueError):
        PublicDomain(1.0, **kw)
