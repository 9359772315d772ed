"""Hockey-stick divergence of two scalar laws of unequal scale (the grey-box scale bound).

The exact profile is checked against numerical integration of max(p − e^ε q, 0) for the
Gaussian and the Laplace family and, at equal scales, against closed forms (the μ-GDP
profile, R eq. 5; the shifted Laplace pair's 1 − e^{(ε − Δ/b)/2}); the lower bound over
boxes of laws against the exact profile of every law in the box, and of the release rounded
to a grid.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from dpgp_audit.privacy.gdp import gdp_delta
from dpgp_audit.privacy.unequal_scale import (
    IntervalEvent,
    ScaleBox,
    candidate_events,
    hockey_stick,
    hockey_stick_lower,
    interval_mass_range,
    lr_event,
)

LAW = {"gaussian": stats.norm, "laplace": stats.laplace}


def _integrated(eps: float, m0: float, s0: float, m1: float, s1: float,
                family: str = "gaussian") -> float:
    """δ_{P‖Q}(ε) by adaptive quadrature of the positive part (independent of the code)."""
    law = LAW[family]

    def f(x: float) -> float:
        return max(law.pdf(x, m0, s0) - math.exp(eps) * law.pdf(x, m1, s1), 0.0)

    lo = min(m0 - 60 * s0, m1 - 60 * s1)
    hi = max(m0 + 60 * s0, m1 + 60 * s1)
    # split at the centres and the crossing points, so kinks do not stall the quadrature
    ev = lr_event(eps, m0, s0, m1, s1, family)
    cuts = [m0, m1] + ([] if ev is None else [t for t in (ev.a, ev.b) if math.isfinite(t)])
    edges = [lo, *sorted(t for t in cuts if lo < t < hi), hi]
    return sum(integrate.quad(f, a, b, epsabs=1e-14, epsrel=1e-10, limit=400)[0]
               for a, b in itertools.pairwise(edges))


@pytest.mark.parametrize("family", ["gaussian", "laplace"])
@pytest.mark.parametrize(("eps", "m0", "s0", "m1", "s1"), [
    (1.0, 0.0, 3.7306, 1.0, 3.7306 * 1.02),  # the analytic (1, 1e-5) σ, 2 % more under D'
    (1.0, 1.0, 3.7306 * 1.02, 0.0, 3.7306),
    (0.5, 0.3, 1.3, 1.3, 2.3),
    (2.0, -1.0, 0.5, 0.0, 0.4),
    (0.0, 0.0, 1.0, 0.0, 2.0),
    (3.0, 0.0, 1.0, 0.5, 1.0),  # equal scales: a half-line
    (0.2, 0.0, 1.0, 0.5, 1.0),
])
def test_exact_profile_matches_numerical_integration(family, eps, m0, s0, m1, s1):
    assert hockey_stick(eps, m0, s0, m1, s1, family) == pytest.approx(
        _integrated(eps, m0, s0, m1, s1, family), rel=1e-7, abs=1e-14)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(0.0, 6.0), shift=st.floats(0.05, 5.0), b=st.floats(0.1, 10.0))
def test_equal_laplace_scales_give_the_shifted_laplace_profile(eps, shift, b):
    # Lap(0, b) against Lap(Δ, b): δ(ε) = 1 − exp((ε − Δ/b)/2) below ε = Δ/b, else 0
    want = -math.expm1((eps - shift) / 2) if eps < shift else 0.0
    assert hockey_stick(eps, 0.0, b, shift * b, b, "laplace") == pytest.approx(
        want, rel=1e-9, abs=1e-15)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(0.0, 6.0), mu=st.floats(0.05, 5.0), s=st.floats(0.1, 10.0))
def test_equal_sds_give_the_gdp_profile(eps, mu, s):
    # R eq. (5): two Gaussians mu sds apart are mu-GDP, with exactly this profile
    assert hockey_stick(eps, 0.0, s, mu * s, s) == pytest.approx(gdp_delta(eps, mu),
                                                                 rel=1e-7, abs=1e-15)


def test_a_few_per_cent_of_scale_breaks_the_analytic_calibration():
    """The module's motivating number: δ(1) of the (1, 1e-5) calibration with sd x 1.02."""
    sigma = 3.730631634815941  # analytic_gaussian_sigma(1, 1e-5, 1)
    both = max(hockey_stick(1.0, 0.0, sigma, 1.0, 1.02 * sigma),
               hockey_stick(1.0, 1.0, 1.02 * sigma, 0.0, sigma))
    assert both == pytest.approx(_integrated(1.0, 1.0, 1.02 * sigma, 0.0, sigma), rel=1e-7)
    assert 1.5e-4 < both < 1.7e-4  # 16x the claimed delta
    assert hockey_stick(1.0, 0.0, sigma, 1.0, sigma) == pytest.approx(1e-5, rel=1e-6)


@pytest.mark.parametrize("family", ["gaussian", "laplace"])
@pytest.mark.parametrize(("inside", "m1"), [(True, 0.4), (False, 0.4), (True, -0.7),
                                            (False, -0.7)])
def test_lr_event_is_the_set_where_the_loss_exceeds_epsilon(family, inside, m1):
    m0, s0, s1 = (0.0, 1.0, 1.5) if inside else (0.0, 1.5, 1.0)
    ev = lr_event(0.3, m0, s0, m1, s1, family)
    assert ev is not None and ev.inside is inside
    x = np.linspace(-12, 12, 20001)
    loss = LAW[family].logpdf(x, m0, s0) - LAW[family].logpdf(x, m1, s1)
    member = (x > ev.a) & (x < ev.b) if inside else (x <= ev.a) | (x >= ev.b)
    far = np.abs(loss - 0.3) > 1e-9  # away from the boundary itself
    assert np.array_equal(member[far], (loss > 0.3)[far])


def _brute_range(a: float, b: float, box: ScaleBox) -> tuple[float, float]:
    ms = np.linspace(box.m_lo, box.m_hi, 41)
    ss = np.linspace(box.s_lo, box.s_hi, 41)
    law = LAW[box.family]
    vals = [float(law.cdf(b, m, s) - law.cdf(a, m, s)) for m in ms for s in ss]
    return min(vals), max(vals)


@settings(max_examples=120, deadline=None)
@given(a=st.floats(-4, 4), width=st.floats(0.01, 6), m=st.floats(-5, 5), dm=st.floats(0, 2),
       s=st.floats(0.2, 3), ds=st.floats(0, 0.9), half=st.sampled_from(["none", "lo", "hi"]),
       family=st.sampled_from(["gaussian", "laplace"]))
def test_interval_mass_range_brackets_every_law_of_the_box(a, width, m, dm, s, ds, half,
                                                           family):
    lo_end = -math.inf if half == "lo" else a
    hi_end = math.inf if half == "hi" else a + width
    box = ScaleBox(m - dm, m + dm, s * (1 - ds), s, family=family)
    low, high = interval_mass_range(lo_end, hi_end, box)
    b_lo, b_hi = _brute_range(lo_end, hi_end, box)
    assert low <= b_lo * (1 + 1e-9) + 1e-15
    assert high >= b_hi * (1 - 1e-9) - 1e-15


def _rounded_delta(eps: float, m0: float, s0: float, m1: float, s1: float, grid: float,
                   offset: float, family: str = "gaussian") -> float:
    """δ of the two laws rounded to cells of width ``grid``: Σ_k (p_k − e^ε q_k)₊ (exact)."""
    span = 80 * max(s0, s1) + abs(m0) + abs(m1)
    edges = offset + grid * np.arange(-math.ceil(span / grid) - 2, math.ceil(span / grid) + 3)
    p = np.diff(LAW[family].cdf(edges, m0, s0))
    q = np.diff(LAW[family].cdf(edges, m1, s1))
    return float(np.sum(np.maximum(p - math.exp(eps) * q, 0.0)))


@pytest.mark.parametrize("family", ["gaussian", "laplace"])
def test_lower_bound_holds_for_every_law_of_the_boxes_and_every_rounding(family):
    rng = np.random.default_rng(7)
    tight = []
    for _ in range(150):
        m0, m1 = rng.normal(size=2)
        s0, s1 = np.exp(rng.normal(scale=0.3, size=2))
        eps = float(rng.uniform(0, 2))
        w = float(rng.uniform(0, 0.05))
        grid = float(rng.uniform(0, 0.05)) if rng.random() < 0.5 else 0.0
        p = ScaleBox(m0 - w, m0 + w, s0 * (1 - w / 3), s0 * (1 + w / 3), grid / 2, family)
        q = ScaleBox(m1 - w, m1 + w, s1 * (1 - w / 3), s1 * (1 + w / 3), grid / 2, family)
        bound = hockey_stick_lower(eps, candidate_events(m0, s0, m1, s1, [eps], family), p, q)
        for _ in range(4):  # laws drawn from the boxes, rounded on a random grid offset
            a, b = rng.uniform(p.m_lo, p.m_hi), rng.uniform(q.m_lo, q.m_hi)
            sa, sb = rng.uniform(p.s_lo, p.s_hi), rng.uniform(q.s_lo, q.s_hi)
            exact = (_rounded_delta(eps, a, sa, b, sb, grid, rng.uniform(0, grid), family)
                     if grid else hockey_stick(eps, a, sa, b, sb, family))
            assert bound <= exact * (1 + 1e-9) + 1e-14
            if exact > 1e-6:
                tight.append(bound / exact)
    assert np.median(tight) > 0.8  # and it is not vacuous


def test_point_boxes_give_the_exact_profile_on_its_own_event():
    m0, s0, m1, s1, eps = 1.0, 3.8, 0.0, 3.73, 1.0
    events = candidate_events(m0, s0, m1, s1, [eps])
    assert hockey_stick_lower(eps, events, ScaleBox.point(m0, s0),
                              ScaleBox.point(m1, s1)) == pytest.approx(
        hockey_stick(eps, m0, s0, m1, s1), rel=1e-12)


def test_both_orders_is_the_larger_of_the_two_bounds():
    events = candidate_events(0.0, 1.0, 0.5, 1.3, [0.5, 1.0])
    p, q = ScaleBox(-0.01, 0.01, 0.99, 1.01, 0.001), ScaleBox(0.49, 0.51, 1.29, 1.31)
    for eps in (0.0, 0.25, 0.5):
        one, other = hockey_stick_lower(eps, events, p, q), hockey_stick_lower(eps, events, q, p)
        assert one != other and max(one, other) > 0
        assert hockey_stick_lower(eps, events, p, q, both=True) == max(one, other)


def test_lower_bound_decreases_in_epsilon_and_vanishes_between_equal_laws():
    events = candidate_events(0.0, 1.0, 0.5, 1.3, [0.0, 0.5, 1.0, 2.0])
    p, q = ScaleBox(-0.01, 0.01, 0.99, 1.01, 0.001), ScaleBox(0.49, 0.51, 1.29, 1.31)
    vals = [hockey_stick_lower(e, events, p, q) for e in np.linspace(0, 4, 41)]
    assert all(x >= y for x, y in itertools.pairwise(vals)) and vals[0] > 0
    same = ScaleBox(0.0, 0.0, 1.0, 1.0)
    assert hockey_stick_lower(0.0, candidate_events(0, 1, 0, 1, [0.0, 1.0]), same, same) == 0.0


def test_boxes_refuse_what_is_not_a_set_of_laws():
    with pytest.raises(ValueError, match="not a box"):
        ScaleBox(0.0, 1.0, 0.0, 1.0)  # sd 0
    with pytest.raises(ValueError, match="not a box"):
        ScaleBox(1.0, 0.0, 1.0, 1.0)  # m_lo > m_hi
    with pytest.raises(ValueError, match="not a box"):
        ScaleBox(0.0, 0.0, 1.0, 1.0, family="cauchy")
    with pytest.raises(ValueError, match="family"):
        lr_event(1.0, 0.0, 1.0, 1.0, 1.0, "cauchy")
    assert IntervalEvent(-math.inf, 0.0).inside
