"""Hockey-stick divergence of two scalar laws of unequal scale, exact and bounded.

A release whose noise *scale* depends on the data (σ or b computed from the private
inputs) gives neighbouring outputs of one location-scale family — Gaussian N(m, s²) or
Laplace Lap(m, s) — with different scales s₀ ≠ s₁. Their privacy profile is not that of
a shift: the privacy loss

    L(x) = log f((x − m₀)/s₀)/s₀ − log f((x − m₁)/s₁)/s₁

is quadratic in x for the Gaussian and piecewise linear (in three pieces) for the
Laplace, and in both cases the Neyman–Pearson event {L > ε} is an interval, the
complement of one, or a half-line. So (Balle & Wang 2018, Thm 5; Dong, Roth & Su 2022,
§2 for the hockey-stick form)

    δ_{P‖Q}(ε) = sup_S P(S) − e^ε Q(S) = P(L > ε) − e^ε Q(L > ε)

is two CDF differences (:func:`hockey_stick`). Even a few per cent of scale change matters
at small δ: with the analytic (1, 10⁻⁵) Gaussian calibration, a 2 % larger sd under one
neighbour already gives δ(1) ≈ 1.6·10⁻⁴; two Laplace laws of different scales have an
unbounded loss, so no pure ε holds at all.

For an auditor the parameters are known only up to error (a release rounded to a grid
fits them up to the rounding), and the released value itself is the draw moved by at
most η. :func:`hockey_stick_lower` turns any fixed event into a *lower bound* on the
divergence that holds for every law in the boxes: both densities are symmetric and
log-concave, so the mass of an interval is unimodal in the location and, for a fixed
location, monotone or unimodal in the scale; its extremes over a box sit at corners or at
one closed-form interior point (:func:`interval_mass_range`). Everything here is a pure
function of its arguments.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import special

__all__ = [
    "FAMILIES",
    "IntervalEvent",
    "ScaleBox",
    "candidate_events",
    "hockey_stick",
    "hockey_stick_lower",
    "interval_mass",
    "interval_mass_range",
    "lr_event",
    "outside_mass",
]

#: The location-scale families handled: the scale is the sd (Gaussian) or b (Laplace).
FAMILIES = ("gaussian", "laplace")


@dataclass(frozen=True)
class IntervalEvent:
    """The event ``a < x < b`` (``inside``) or ``x <= a or x >= b`` (not ``inside``).

    ``a`` may be ``-inf`` and ``b`` ``+inf`` (half-lines); ``a <= b``.
    """

    a: float
    b: float
    inside: bool = True


@dataclass(frozen=True)
class ScaleBox:
    """Every law of ``family`` with location in [m_lo, m_hi] and scale in [s_lo, s_hi].

    The scale is the sd (Gaussian) or b (Laplace), ``0 < s_lo``. Each law is seen through
    a perturbation of at most ``eta``: the release is the draw moved by ≤ η, e.g. by
    rounding to a grid.
    """

    m_lo: float
    m_hi: float
    s_lo: float
    s_hi: float
    eta: float = 0.0
    family: str = "gaussian"

    def __post_init__(self) -> None:
        if not (self.m_lo <= self.m_hi and 0.0 < self.s_lo <= self.s_hi
                and math.isfinite(self.m_lo) and math.isfinite(self.m_hi)
                and math.isfinite(self.s_hi) and self.eta >= 0.0
                and self.family in FAMILIES):
            raise ValueError(f"not a box of laws: {self!r}")

    @classmethod
    def point(cls, m: float, s: float, eta: float = 0.0,
              family: str = "gaussian") -> ScaleBox:
        """The single law of location m and scale s (exact parameters)."""
        return cls(m, m, s, s, eta, family)


def _cdf(z: np.ndarray, family: str) -> np.ndarray:
    """The standard CDF, accurate in the lower tail (upper tails are taken as ``_cdf(-z)``)."""
    if family == "gaussian":
        return special.ndtr(z)
    with np.errstate(over="ignore"):
        return np.where(z < 0.0, 0.5 * np.exp(np.minimum(z, 0.0)),
                        1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))


def _interval_masses(a: np.ndarray, b: np.ndarray, m: np.ndarray | float,
                     s: np.ndarray | float, family: str = "gaussian") -> np.ndarray:
    """P(a < X < b), elementwise, each from the tails away from the location."""
    with np.errstate(invalid="ignore"):
        za, zb = (a - m) / s, (b - m) / s
        above = _cdf(-za, family) - _cdf(-zb, family)  # both ends above the location
        below = _cdf(zb, family) - _cdf(za, family)  # both below
        across = 1.0 - _cdf(za, family) - _cdf(-zb, family)
        out = np.where(za >= 0.0, above, np.where(zb <= 0.0, below, across))
    return np.where(a < b, np.maximum(out, 0.0), 0.0)


def _outside_masses(a: np.ndarray, b: np.ndarray, m: np.ndarray | float,
                    s: np.ndarray | float, family: str = "gaussian") -> np.ndarray:
    """P(X <= a or X >= b), elementwise (the whole line where ``a >= b``)."""
    with np.errstate(invalid="ignore"):
        out = _cdf((a - m) / s, family) + _cdf((m - b) / s, family)
    return np.where(a < b, np.minimum(out, 1.0), 1.0)


def interval_mass(a: float, b: float, m: float, s: float, family: str = "gaussian") -> float:
    """P(a < X < b) for X of location m and scale s, from the tail away from m."""
    return float(_interval_masses(np.asarray(a, float), np.asarray(b, float), m, s, family))


def outside_mass(a: float, b: float, m: float, s: float, family: str = "gaussian") -> float:
    """P(X <= a or X >= b) (the whole line when ``a >= b``)."""
    return float(_outside_masses(np.asarray(a, float), np.asarray(b, float), m, s, family))


def _corners(box: ScaleBox) -> tuple[tuple[float, float], ...]:
    return ((box.m_lo, box.s_lo), (box.m_lo, box.s_hi), (box.m_hi, box.s_lo),
            (box.m_hi, box.s_hi))


def _densest(a: np.ndarray, b: np.ndarray, box: ScaleBox) -> tuple[np.ndarray, np.ndarray]:
    """The (m, s) of the box that puts the most mass in (a, b), elementwise.

    For any s the mass is unimodal in m with its mode at the midpoint (a symmetric
    log-concave density), so the best m is the midpoint clipped to the box, whatever s is.
    With that m inside (a, b) the mass falls as s grows; outside, writing α <= β for the
    distances to the two ends, the mass F(β/s) − F(α/s) rises then falls in u = 1/s,
    peaking where β f(βu) = α f(αu): u² = 2 ln(β/α)/(β² − α²) (Gaussian), u = ln(β/α)/(β − α)
    (Laplace); a half-line away from the location gains mass as s grows.
    """
    fa, fb = np.isfinite(a), np.isfinite(b)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        mid = np.where(fa & fb, 0.5 * (a + b), np.where(fb, -np.inf, np.where(fa, np.inf, 0.0)))
        m = np.clip(mid, box.m_lo, box.m_hi)
        da, db = np.abs(a - m), np.abs(b - m)
        alpha, beta = np.minimum(da, db), np.maximum(da, db)
        if box.family == "gaussian":
            u = np.sqrt(2.0 * np.log(beta / alpha) / (beta * beta - alpha * alpha))
        else:
            u = np.log(beta / alpha) / (beta - alpha)
        interior = np.clip(1.0 / u, box.s_lo, box.s_hi)
    s = np.where((a < m) & (m < b), box.s_lo,
                 np.where(~np.isfinite(beta), box.s_hi,
                          np.where(alpha == 0.0, box.s_lo, interior)))
    return m, s


def interval_mass_range(a: float, b: float, box: ScaleBox) -> tuple[float, float]:
    """(min, max) of P(a < X < b) over the laws of the box (no perturbation).

    The minimum is at a corner (the mass is unimodal in m for every s, and monotone or
    unimodal in s for every m); the maximum at :func:`_densest`'s point.
    """
    low, high = _mass_bounds(np.array([a], float), np.array([b], float), np.array([True]),
                             replace(box, eta=0.0))
    return float(low[0]), float(high[0])


def _mass_bounds(a: np.ndarray, b: np.ndarray, inside: np.ndarray,
                 box: ScaleBox) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) bounds on P(R ∈ event) for every law of the box, |R − X| <= η.

    The perturbation moves the ends inwards for the lower bound of an interval and outwards
    for its upper one; the complement's bounds are those of the interval with the roles
    swapped, each evaluated from its own tails (no ``1 − mass`` cancellation).
    """
    e, fam = box.eta, box.family
    near, far = (a + e, b - e), (a - e, b + e)  # the interval shrunk, and grown
    corners = _corners(box)
    dense = _densest(*far, box)
    low_in = np.min([_interval_masses(*near, m, s, fam) for m, s in corners], axis=0)
    high_in = _interval_masses(*far, *dense, fam)
    # R outside [a, b] needs X outside [a + e, b − e] and is implied by X outside [a − e, b + e]
    low_out = _outside_masses(*far, *dense, fam)
    high_out = np.max([_outside_masses(*near, m, s, fam) for m, s in corners], axis=0)
    return np.where(inside, low_in, low_out), np.where(inside, high_in, high_out)


def hockey_stick_lower(epsilon: float, events: Iterable[IntervalEvent], p: ScaleBox,
                       q: ScaleBox, *, both: bool = False) -> float:
    """A lower bound on δ_{P‖Q}(ε) valid for every P in box ``p`` and Q in box ``q``.

    For each fixed event S, δ ≥ P(S) − e^ε Q(S) ≥ P_lower(S) − e^ε Q_upper(S); the best
    over the events is returned (0 when none separates). Decreasing in ε. ``both``: the
    larger of the bounds on δ_{P‖Q}(ε) and δ_{Q‖P}(ε) (each box's masses bounded once).
    """
    ev = list(events)
    if not ev:
        return 0.0
    a = np.array([e.a for e in ev], dtype=float)
    b = np.array([e.b for e in ev], dtype=float)
    inside = np.array([e.inside for e in ev], dtype=bool)
    low_p, high_p = _mass_bounds(a, b, inside, p)
    low_q, high_q = _mass_bounds(a, b, inside, q)
    scale = math.exp(epsilon)
    best = float(np.max(low_p - scale * high_q))
    if both:
        best = max(best, float(np.max(low_q - scale * high_p)))
    return max(best, 0.0)


_WHOLE_LINE = IntervalEvent(-math.inf, math.inf)


def _gaussian_event(epsilon: float, m0: float, s0: float, m1: float,
                    s1: float) -> IntervalEvent | None:
    """{L > ε} for two Gaussians: ``L(x) = A x² + B x + C`` with A = 1/(2s1²) − 1/(2s0²),
    B = m0/s0² − m1/s1², C = m1²/(2s1²) − m0²/(2s0²) + log(s1/s0): a half-line when the
    variances agree, the inside of the roots when A < 0, their outside when A > 0.
    """
    A = 0.5 / (s1 * s1) - 0.5 / (s0 * s0)
    B = m0 / (s0 * s0) - m1 / (s1 * s1)
    C = 0.5 * m1 * m1 / (s1 * s1) - 0.5 * m0 * m0 / (s0 * s0) + math.log(s1 / s0) - epsilon
    scale = max(abs(A) * max(s0, s1) ** 2, 1e-300)
    if abs(A) <= 1e-14 * (abs(B) * max(s0, s1) + scale):  # equal variances: a half-line
        if B == 0.0:
            return None if C <= 0.0 else _WHOLE_LINE
        t = -C / B
        return IntervalEvent(t, math.inf) if B > 0 else IntervalEvent(-math.inf, t)
    disc = B * B - 4.0 * A * C
    if disc <= 0.0:  # the quadratic keeps one sign
        return _WHOLE_LINE if A > 0 else None
    root = math.sqrt(disc)
    # the stable pair of roots: q = −(B + sign(B)√disc)/2, roots q/A and C/q
    qv = -0.5 * (B + math.copysign(root, B))
    r1, r2 = sorted((qv / A, C / qv if qv != 0.0 else -qv / A))
    return IntervalEvent(r1, r2, inside=A < 0)


def _laplace_event(epsilon: float, m0: float, s0: float, m1: float,
                   s1: float) -> IntervalEvent | None:
    """{L > ε} for two Laplace laws: ``L(x) = log(s1/s0) − |x − m0|/s0 + |x − m1|/s1``.

    Piecewise linear with kinks at m0 and m1 and tail slopes ±k, k = 1/s0 − 1/s1 (rising on
    the left when k > 0). With s0 < s1 it peaks at m0 and the event is an interval; with
    s0 > s1 it dips at m1 and the event is the complement of one; with equal scales its
    tails are flat and the event is a half-line. Each crossing lies on one linear piece.
    """
    def loss(x: float) -> float:
        return math.log(s1 / s0) - abs(x - m0) / s0 + abs(x - m1) / s1 - epsilon

    lo, hi = min(m0, m1), max(m0, m1)
    k = 1.0 / s0 - 1.0 / s1
    if abs(k) <= 1e-14 * (1.0 / s0 + 1.0 / s1):  # equal scales: flat tails, one ramp
        left, right = loss(lo), loss(hi)
        if left > 0.0 and right > 0.0:
            return _WHOLE_LINE
        if left <= 0.0 and right <= 0.0:
            return None
        t = lo + (hi - lo) * (-left) / (right - left)
        return IntervalEvent(t, math.inf) if right > 0.0 else IntervalEvent(-math.inf, t)
    centre = m0 if k > 0 else m1  # the peak (k > 0) or the dip (k < 0) of the loss
    other = m1 if k > 0 else m0
    at = loss(centre)
    if (k > 0 and at <= 0.0) or (k < 0 and at >= 0.0):
        return None if k > 0 else _WHOLE_LINE
    ends = []
    for side in (-1.0, 1.0):  # the crossing left, then right, of the extremum
        if (other - centre) * side > 0 and loss(other) * at <= 0.0:  # on the inner piece
            f = loss(other)
            ends.append(centre + (other - centre) * at / (at - f))
        else:  # on the outer tail, of slope magnitude |k|, from the last kink on that side
            kink = other if (other - centre) * side > 0 else centre
            ends.append(kink + side * loss(kink) / abs(k) * (1.0 if k > 0 else -1.0))
    return IntervalEvent(min(ends), max(ends), inside=k > 0)


def lr_event(epsilon: float, m0: float, s0: float, m1: float, s1: float,
             family: str = "gaussian") -> IntervalEvent | None:
    """The Neyman–Pearson event {L > ε} of law (m0, s0) against (m1, s1); ``None`` if empty."""
    if family == "gaussian":
        return _gaussian_event(epsilon, m0, s0, m1, s1)
    if family == "laplace":
        return _laplace_event(epsilon, m0, s0, m1, s1)
    raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")


def hockey_stick(epsilon: float, m0: float, s0: float, m1: float, s1: float,
                 family: str = "gaussian") -> float:
    """Exact δ_{P‖Q}(ε) = sup_S P(S) − e^ε Q(S) for P = law(m0, s0), Q = law(m1, s1).

    The supremum is attained at the Neyman–Pearson event (:func:`lr_event`).
    """
    ev = lr_event(epsilon, m0, s0, m1, s1, family)
    if ev is None:
        return 0.0
    mass = interval_mass if ev.inside else outside_mass
    return max(mass(ev.a, ev.b, m0, s0, family)
               - math.exp(epsilon) * mass(ev.a, ev.b, m1, s1, family), 0.0)


def candidate_events(m0: float, s0: float, m1: float, s1: float,
                     epsilons: Sequence[float], family: str = "gaussian") -> list[IntervalEvent]:
    """The Neyman–Pearson events of both orders at each ε, and their ends as half-lines."""
    out: list[IntervalEvent] = []
    for eps in epsilons:
        for args in ((m0, s0, m1, s1), (m1, s1, m0, s0)):
            ev = lr_event(eps, *args, family)
            if ev is None or (ev.a == -math.inf and ev.b == math.inf):
                continue
            out.append(ev)
            for t in (ev.a, ev.b):
                if math.isfinite(t):
                    out.extend((IntervalEvent(t, math.inf), IntervalEvent(-math.inf, t)))
    return list(dict.fromkeys(out))
