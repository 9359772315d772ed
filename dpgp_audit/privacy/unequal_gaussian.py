"""Hockey-stick divergence of two scalar Gaussians of unequal variance, exact and bounded.

A release whose noise *scale* depends on the data (σ computed from the private inputs)
gives neighbouring outputs N(m₀, s₀²) and N(m₁, s₁²) with s₀ ≠ s₁. Their privacy profile
is not a Gaussian (GDP) one: the privacy loss

    L(x) = log φ((x − m₀)/s₀)/s₀ − log φ((x − m₁)/s₁)/s₁

is quadratic in x, so the Neyman–Pearson event {L > ε} is an interval or the complement
of one, and (Balle & Wang 2018, Thm 5; Dong, Roth & Su 2022, §2 for the hockey-stick form)

    δ_{P‖Q}(ε) = sup_S P(S) − e^ε Q(S) = P(L > ε) − e^ε Q(L > ε),

two normal-CDF differences (:func:`hockey_stick`). Even a few per cent of scale change
matters at small δ: with the analytic (1, 10⁻⁵) calibration, a 2 % larger sd under one
neighbour already gives δ(1) ≈ 1.6·10⁻⁴.

For an auditor the parameters are known only up to error (a release rounded to a grid
fits them up to the rounding), and the released value itself is the Gaussian moved by at
most η. :func:`hockey_stick_lower` turns any fixed event into a *lower bound* on the
divergence that holds for every parameter in the boxes: the mass of an interval is
unimodal in the mean and, for a fixed mean, either monotone or unimodal in the sd, so its
extremes over a box sit at corners or at one closed-form interior point
(:func:`interval_mass_range`). Everything here is a pure function of its arguments.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

__all__ = [
    "GaussianBox",
    "IntervalEvent",
    "candidate_events",
    "hockey_stick",
    "hockey_stick_lower",
    "interval_mass",
    "interval_mass_range",
    "lr_event",
    "outside_mass",
]


@dataclass(frozen=True)
class IntervalEvent:
    """The event ``a < x < b`` (``inside``) or ``x <= a or x >= b`` (not ``inside``).

    ``a`` may be ``-inf`` and ``b`` ``+inf`` (half-lines); ``a <= b``.
    """

    a: float
    b: float
    inside: bool = True


@dataclass(frozen=True)
class GaussianBox:
    """Every N(m, s²) with ``m_lo <= m <= m_hi`` and ``0 < s_lo <= s <= s_hi``.

    Each is seen through a perturbation of at most ``eta``: the release is the Gaussian
    value moved by ≤ η, e.g. by rounding to a grid.
    """

    m_lo: float
    m_hi: float
    s_lo: float
    s_hi: float
    eta: float = 0.0

    def __post_init__(self) -> None:
        if not (self.m_lo <= self.m_hi and 0.0 < self.s_lo <= self.s_hi
                and math.isfinite(self.m_lo) and math.isfinite(self.m_hi)
                and math.isfinite(self.s_hi) and self.eta >= 0.0):
            raise ValueError(f"not a box of Gaussian laws: {self!r}")

    @classmethod
    def point(cls, m: float, s: float, eta: float = 0.0) -> GaussianBox:
        """The single law N(m, s²) (exact parameters)."""
        return cls(m, m, s, s, eta)


def _interval_masses(a: np.ndarray, b: np.ndarray, m: np.ndarray | float,
                     s: np.ndarray | float) -> np.ndarray:
    """P(a < X < b) for X ~ N(m, s²), elementwise, each from the tails away from the mean."""
    with np.errstate(invalid="ignore"):
        za, zb = (a - m) / s, (b - m) / s
        above = special.ndtr(-za) - special.ndtr(-zb)  # both ends above the mean
        below = special.ndtr(zb) - special.ndtr(za)  # both below
        across = 1.0 - special.ndtr(za) - special.ndtr(-zb)
        out = np.where(za >= 0.0, above, np.where(zb <= 0.0, below, across))
    return np.where(a < b, np.maximum(out, 0.0), 0.0)


def _outside_masses(a: np.ndarray, b: np.ndarray, m: np.ndarray | float,
                    s: np.ndarray | float) -> np.ndarray:
    """P(X <= a or X >= b), elementwise (the whole line where ``a >= b``)."""
    with np.errstate(invalid="ignore"):
        out = special.ndtr((a - m) / s) + special.ndtr((m - b) / s)
    return np.where(a < b, np.minimum(out, 1.0), 1.0)


def interval_mass(a: float, b: float, m: float, s: float) -> float:
    """P(a < X < b) for X ~ N(m, s²), from the tail on the side away from the mean."""
    return float(_interval_masses(np.asarray(a, float), np.asarray(b, float), m, s))


def outside_mass(a: float, b: float, m: float, s: float) -> float:
    """P(X <= a or X >= b) for X ~ N(m, s²) (the whole line when ``a >= b``)."""
    return float(_outside_masses(np.asarray(a, float), np.asarray(b, float), m, s))


def _corners(box: GaussianBox) -> tuple[tuple[float, float], ...]:
    return ((box.m_lo, box.s_lo), (box.m_lo, box.s_hi), (box.m_hi, box.s_lo),
            (box.m_hi, box.s_hi))


def _densest(a: np.ndarray, b: np.ndarray, box: GaussianBox) -> tuple[np.ndarray, np.ndarray]:
    """The (m, s) of the box that puts the most mass in (a, b), elementwise.

    For any s the mass is unimodal in m with its mode at the midpoint, so the best m is the
    midpoint clipped to the box, whatever s is. With that m inside (a, b) the mass falls as
    s grows; outside, writing α <= β for the distances to the two ends, the mass
    Φ(β/s) − Φ(α/s) rises then falls in 1/s, peaking at 1/s² = 2 ln(β/α)/(β² − α²); a
    half-line away from the mean gains mass as s grows.
    """
    fa, fb = np.isfinite(a), np.isfinite(b)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        mid = np.where(fa & fb, 0.5 * (a + b), np.where(fb, -np.inf, np.where(fa, np.inf, 0.0)))
        m = np.clip(mid, box.m_lo, box.m_hi)
        da, db = np.abs(a - m), np.abs(b - m)
        alpha, beta = np.minimum(da, db), np.maximum(da, db)
        u = np.sqrt(2.0 * np.log(beta / alpha) / (beta * beta - alpha * alpha))
        interior = np.clip(1.0 / u, box.s_lo, box.s_hi)
    s = np.where((a < m) & (m < b), box.s_lo,
                 np.where(~np.isfinite(beta), box.s_hi,
                          np.where(alpha == 0.0, box.s_lo, interior)))
    return m, s


def interval_mass_range(a: float, b: float, box: GaussianBox) -> tuple[float, float]:
    """(min, max) of P(a < X < b) over the laws of the box (no perturbation).

    The minimum is at a corner (the mass is unimodal in m for every s, and monotone or
    unimodal in s for every m); the maximum at :func:`_densest`'s point.
    """
    lo_end, hi_end = np.asarray(a, float), np.asarray(b, float)
    low = min(interval_mass(a, b, m, s) for m, s in _corners(box)) if a < b else 0.0
    return low, float(_interval_masses(lo_end, hi_end, *_densest(lo_end, hi_end, box)))


def _mass_bounds(a: np.ndarray, b: np.ndarray, inside: np.ndarray,
                 box: GaussianBox) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) bounds on P(R ∈ event) for every law of the box, |R − X| <= η.

    The perturbation moves the ends inwards for the lower bound of an interval and outwards
    for its upper one; the complement's bounds are those of the interval with the roles
    swapped, each evaluated from its own tails (no ``1 − mass`` cancellation).
    """
    e = box.eta
    near, far = (a + e, b - e), (a - e, b + e)  # the interval shrunk, and grown
    corners = _corners(box)
    dense = _densest(*far, box)
    low_in = np.min([_interval_masses(*near, m, s) for m, s in corners], axis=0)
    high_in = _interval_masses(*far, *dense)
    # R outside [a, b] needs X outside [a + e, b − e] and is implied by X outside [a − e, b + e]
    low_out = _outside_masses(*far, *dense)
    high_out = np.max([_outside_masses(*near, m, s) for m, s in corners], axis=0)
    return np.where(inside, low_in, low_out), np.where(inside, high_in, high_out)


def hockey_stick_lower(epsilon: float, events: Iterable[IntervalEvent], p: GaussianBox,
                       q: GaussianBox, *, both: bool = False) -> float:
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


def lr_event(epsilon: float, m0: float, s0: float, m1: float, s1: float) -> IntervalEvent | None:
    """The Neyman–Pearson event {L > ε} of N(m0, s0²) against N(m1, s1²); ``None`` if empty.

    ``L(x) = A x² + B x + C`` with A = 1/(2s1²) − 1/(2s0²), B = m0/s0² − m1/s1²,
    C = m1²/(2s1²) − m0²/(2s0²) + log(s1/s0): a half-line when the variances agree, the
    inside of the roots when A < 0, their outside when A > 0.
    """
    A = 0.5 / (s1 * s1) - 0.5 / (s0 * s0)
    B = m0 / (s0 * s0) - m1 / (s1 * s1)
    C = 0.5 * m1 * m1 / (s1 * s1) - 0.5 * m0 * m0 / (s0 * s0) + math.log(s1 / s0) - epsilon
    scale = max(abs(A) * max(s0, s1) ** 2, 1e-300)
    if abs(A) <= 1e-14 * (abs(B) * max(s0, s1) + scale):  # equal variances: a half-line
        if B == 0.0:
            return None if C <= 0.0 else IntervalEvent(-math.inf, math.inf)
        t = -C / B
        return IntervalEvent(t, math.inf) if B > 0 else IntervalEvent(-math.inf, t)
    disc = B * B - 4.0 * A * C
    if disc <= 0.0:  # the quadratic keeps one sign
        return IntervalEvent(-math.inf, math.inf) if A > 0 else None
    root = math.sqrt(disc)
    # the stable pair of roots: q = −(B + sign(B)√disc)/2, roots q/A and C/q
    qv = -0.5 * (B + math.copysign(root, B))
    r1, r2 = sorted((qv / A, C / qv if qv != 0.0 else -qv / A))
    return IntervalEvent(r1, r2, inside=A < 0)


def hockey_stick(epsilon: float, m0: float, s0: float, m1: float, s1: float) -> float:
    """Exact δ_{P‖Q}(ε) = sup_S P(S) − e^ε Q(S) for P = N(m0, s0²), Q = N(m1, s1²).

    The supremum is attained at the Neyman–Pearson event (:func:`lr_event`).
    """
    ev = lr_event(epsilon, m0, s0, m1, s1)
    if ev is None:
        return 0.0
    mass = interval_mass if ev.inside else outside_mass
    return max(mass(ev.a, ev.b, m0, s0) - math.exp(epsilon) * mass(ev.a, ev.b, m1, s1), 0.0)


def candidate_events(m0: float, s0: float, m1: float, s1: float,
                     epsilons: Sequence[float]) -> list[IntervalEvent]:
    """The Neyman–Pearson events of both orders at each ε, and their ends as half-lines."""
    out: list[IntervalEvent] = []
    for eps in epsilons:
        for args in ((m0, s0, m1, s1), (m1, s1, m0, s0)):
            ev = lr_event(eps, *args)
            if ev is None or (ev.a == -math.inf and ev.b == math.inf):
                continue
            out.append(ev)
            for t in (ev.a, ev.b):
                if math.isfinite(t):
                    out.extend((IntervalEvent(t, math.inf), IntervalEvent(-math.inf, t)))
    return list(dict.fromkeys(out))
