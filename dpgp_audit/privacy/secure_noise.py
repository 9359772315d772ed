"""Secure noise for floating-point releases (catalogue P.1, P.2; issue 10 §1).

Textbook Laplace and Gaussian samplers work on real numbers; in floating point their
outputs miss values in patterns that depend on the private input (Mironov 2012), and a
release ``fl(q(D) + noise)`` rounds on a grid that grows with |q(D)|. Two samplers here
carry their floating-point (or integer) behaviour in the proof itself:

* **Snapping mechanism** (Mironov, *On significance of the least significant bits for
  differential privacy*, CCS 2012, §5.2): clamp the query to [−B, B], add Laplace noise
  ``S·λ·ln(U*)`` with U* a uniformly random double in (0, 1), round to the nearest
  multiple of Λ (the smallest power of two ≥ λ) and clamp again. For a query of
  sensitivity 1 and λ < B < 2⁴⁶λ it is (1/λ + 2⁻⁴⁹·B/λ)-DP (Mironov 2012, §5.2), whatever
  the rounding of the arithmetic. :class:`SnappingCalibration` solves for λ and records
  every cost: the power-of-two rescaling of the sensitivity (so that the division is
  exact), the rounding of a correctly rounded sum (one spacing at B), and the 2⁻⁴⁹ term.
* **Discrete Gaussian** (Canonne, Kamath and Steinke, *The discrete Gaussian for
  differential privacy*, NeurIPS 2020): the query is rounded to a grid of step g (a power
  of two), the integer ``round(q/g)`` gets noise Z ~ N_ℤ(0, σ_ℤ²) drawn **exactly** with
  integer arithmetic (their Algorithms 1–3), and g·(round(q/g) + Z) is released. Rounding
  moves the integer query by at most ``⌊Δ/g⌋ + 1``, which is the sensitivity used; σ_ℤ is
  calibrated with their exact (ε, δ) formula (CKS Thm. 7), computed by
  :func:`discrete_gaussian_delta`.

Randomness: both samplers take the kit's ``numpy.random.Generator`` (reproducible audits;
every random function of the kit does). A production release should feed them from OS
entropy (``np.random.default_rng()`` without a seed uses it); the proofs do not depend on
which generator supplies uniformly random integers. OpenDP (the ``secure`` extra) ships
vetted samplers, but they draw from their own OS-seeded source and cannot take a
Generator, so they cannot be audited reproducibly here; the tests use it, when installed,
as an independent check of the discrete Gaussian's law.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dpgp_audit._validation import check_positive_float, check_positive_int, check_rng

__all__ = [
    "DiscreteGaussianCalibration",
    "SnappingCalibration",
    "bernoulli_exp",
    "calibrate_discrete_gaussian",
    "calibrate_snapping",
    "discrete_gaussian",
    "discrete_gaussian_delta",
    "discrete_laplace",
    "grid_round",
    "snapping_laplace",
    "uniform_open_unit",
    "uniform_open_unit_from",
]

_TWO_M49 = 2.0**-49


# ----------------------------------------------------------------------------- exact bits
def _uniform_below(m: int, rng: np.random.Generator) -> int:
    """A uniform integer in {0, …, m − 1} for any m ≥ 1 (62-bit chunks, rejection)."""
    if m <= 2**62:
        return int(rng.integers(0, m))
    bits = (m - 1).bit_length()
    while True:
        x, got = 0, 0
        while got < bits:
            take = min(62, bits - got)
            x = (x << take) | int(rng.integers(0, 2**take))
            got += take
        if x < m:
            return x


def _bernoulli(p: Fraction, rng: np.random.Generator) -> bool:
    """Exact Bernoulli(p) for a rational 0 ≤ p ≤ 1."""
    return _uniform_below(p.denominator, rng) < p.numerator


def bernoulli_exp(gamma: Fraction, rng: np.random.Generator) -> bool:
    """Exact Bernoulli(exp(−γ)) for a rational γ ≥ 0 (Canonne, Kamath, Steinke 2020, Alg. 1)."""
    gamma = Fraction(gamma)
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, got {gamma}")
    while gamma > 1:  # exp(−γ) = exp(−1)^⌊γ⌋ · exp(−(γ − ⌊γ⌋))
        if not bernoulli_exp(Fraction(1), rng):
            return False
        gamma -= 1
    k = 1
    while _bernoulli(gamma / k, rng):
        k += 1
    return k % 2 == 1


def discrete_laplace(t: int, rng: np.random.Generator) -> int:
    """Exact discrete Laplace: P(Y = y) ∝ exp(−|y|/t) for an integer t ≥ 1 (CKS Alg. 2)."""
    t = check_positive_int("t", t)
    while True:
        u = _uniform_below(t, rng)
        if not bernoulli_exp(Fraction(u, t), rng):
            continue
        v = 0
        while bernoulli_exp(Fraction(1), rng):
            v += 1
        y = u + t * v
        negative = _bernoulli(Fraction(1, 2), rng)
        if negative and y == 0:
            continue
        return -y if negative else y


def discrete_gaussian(sigma2: Fraction, size: int, rng: np.random.Generator) -> np.ndarray:
    """Exact samples of N_ℤ(0, σ²): P(Z = z) ∝ exp(−z²/(2σ²)) on the integers (CKS Alg. 3).

    ``sigma2`` is the rational σ² (use :func:`calibrate_discrete_gaussian`). Returns int64.
    """
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise ValueError(f"sigma2 must be > 0, got {sigma2}")
    size = check_positive_int("size", size)
    rng = check_rng(rng)
    t = math.isqrt(sigma2.numerator // sigma2.denominator) + 1  # ⌊σ⌋ + 1
    out = np.empty(size, dtype=np.int64)
    for j in range(size):
        while True:
            y = discrete_laplace(t, rng)
            gamma = (abs(y) - sigma2 / t) ** 2 / (2 * sigma2)
            if bernoulli_exp(gamma, rng):
                out[j] = y
                break
    return out


# ----------------------------------------------------------------------------- discrete Gaussian
def _dg_log_pmf(sigma: float, half_width: int) -> tuple[np.ndarray, np.ndarray]:
    z = np.arange(-half_width, half_width + 1)
    logw = -(z.astype(float) ** 2) / (2.0 * sigma * sigma)
    logw -= np.logaddexp.reduce(logw)
    return z, logw


def discrete_gaussian_delta(epsilon: float, sigma: float, sensitivity: int) -> float:
    """Exact δ(ε) of the discrete Gaussian mechanism (Canonne, Kamath, Steinke 2020, Thm. 7).

    For an integer query of sensitivity Δ and Y ~ N_ℤ(0, σ²),
    δ = P[Y > εσ²/Δ − Δ/2] − e^ε · P[Y > εσ²/Δ + Δ/2], summed over the integers.
    """
    epsilon = check_positive_float("epsilon", epsilon)
    sigma = check_positive_float("sigma", sigma)
    sensitivity = check_positive_int("sensitivity", sensitivity)
    half = int(math.ceil(40.0 * sigma + epsilon * sigma * sigma / sensitivity + sensitivity))
    z, logp = _dg_log_pmf(sigma, half)
    a = epsilon * sigma * sigma / sensitivity
    lo, hi = a - sensitivity / 2.0, a + sensitivity / 2.0
    tail_lo = np.logaddexp.reduce(logp[z > lo]) if np.any(z > lo) else -np.inf
    tail_hi = np.logaddexp.reduce(logp[z > hi]) if np.any(z > hi) else -np.inf
    return float(max(0.0, math.exp(tail_lo) - math.exp(epsilon + tail_hi)))


@dataclass(frozen=True)
class DiscreteGaussianCalibration:
    """Grid, integer sensitivity and σ_ℤ of a discrete Gaussian release (CKS 2020).

    The release is ``grid · (round(q / grid) + Z)``, Z ~ N_ℤ(0, sigma2); ``sigma2`` is
    rational and ``sigma = sqrt(sigma2) · grid`` is the noise sd in the query's units.
    """

    epsilon: float
    delta: float
    sensitivity: float
    grid: float
    int_sensitivity: int
    sigma2: Fraction
    delta_achieved: float

    @property
    def sigma_int(self) -> float:
        """σ_ℤ in grid units."""
        return math.sqrt(float(self.sigma2))

    @property
    def sigma(self) -> float:
        """Noise scale in the query's units, σ_ℤ · grid."""
        return self.sigma_int * self.grid


def calibrate_discrete_gaussian(epsilon: float, delta: float, sensitivity: float, *,
                                steps: int = 64) -> DiscreteGaussianCalibration:
    """Smallest σ_ℤ (on a grid of ``steps`` per sensitivity) with δ(ε) ≤ ``delta``.

    The grid is the power of two g ≤ Δ/steps, so ``q / g`` is exact; rounding the query to
    the grid moves it by at most ⌊Δ/g⌋ + 1 grid units, the integer sensitivity used.
    """
    epsilon = check_positive_float("epsilon", epsilon)
    delta = check_positive_float("delta", delta)
    if delta >= 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    sensitivity = check_positive_float("sensitivity", sensitivity)
    steps = check_positive_int("steps", steps)
    grid = 2.0 ** math.floor(math.log2(sensitivity / steps))
    dz = int(math.floor(sensitivity / grid)) + 1
    lo, hi = 1e-3, float(dz)
    while discrete_gaussian_delta(epsilon, hi, dz) > delta:
        hi *= 2.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if discrete_gaussian_delta(epsilon, mid, dz) > delta:
            lo = mid
        else:
            hi = mid
    sigma2 = Fraction(hi * hi).limit_denominator(2**20)
    while discrete_gaussian_delta(epsilon, math.sqrt(float(sigma2)), dz) > delta:
        sigma2 += Fraction(1, 2**20)  # round the rational σ² up, never down
    achieved = discrete_gaussian_delta(epsilon, math.sqrt(float(sigma2)), dz)
    return DiscreteGaussianCalibration(epsilon, delta, sensitivity, grid, dz, sigma2, achieved)


def grid_round(values: np.ndarray, grid: float) -> np.ndarray:
    """``round(values / grid)`` as int64 (``grid`` a power of two: the division is exact)."""
    q = np.asarray(values, dtype=float) / grid
    if np.any(np.abs(q) >= 2.0**62):
        raise ValueError("the query is too large for the integer grid (|q / grid| >= 2**62): "
                         "declare a smaller domain bound")
    return np.rint(q).astype(np.int64)


# ----------------------------------------------------------------------------- snapping
def uniform_open_unit(size: int, rng: np.random.Generator) -> np.ndarray:
    """U*: a uniform real in (0, 1) rounded down to a double, exactly (Mironov 2012, §5.2).

    The exponent is geometric (each leading zero bit has probability ½) and the 52 mantissa
    bits are uniform, so every double in (0, 1) appears with probability equal to the
    length of the interval it stands for. (An exponent below −1074 has probability
    2⁻¹⁰⁷⁴ and is redrawn.) The draws and the arithmetic are
    :func:`uniform_open_unit_from`'s, fed by ``rng.integers(0, high, size=k)``.
    """
    size = check_positive_int("size", size)
    rng = check_rng(rng)
    return uniform_open_unit_from(
        size, lambda high, k: rng.integers(0, high, size=k, dtype=np.int64))


def uniform_open_unit_from(size: int, words: Callable[[int, int], np.ndarray]) -> np.ndarray:
    """U* of :func:`uniform_open_unit` from a supply of uniform integer words.

    ``words(high, k)`` must return k integers uniform on ``[0, high)``; it is asked, in this
    order, for ``high = 2**32`` words, one per value whose exponent is still open (``size``
    of them first, then as many as are still open after each round: a round closes a value
    whose word is non-zero, or whose exponent passed 1074), then for ``size`` words with
    ``high = 2**52`` (the mantissas). The sampler feeds it from a generator; the grey-box
    auditor's decoder (:func:`~dpgp_audit.privacy.float_release.decode_laplace_exact_uniform`)
    feeds it the recorded draws of a call, so both run this one arithmetic (catalogue A.9).
    """
    exponent = np.ones(size, dtype=np.int64)
    active = np.ones(size, dtype=bool)
    while np.any(active):  # count fair coin flips until the first 1, 32 at a time
        idx = np.flatnonzero(active)
        bits = np.asarray(words(2**32, idx.size), dtype=np.int64)
        # leading zeros of a 32-bit word (log2 is exact enough below 2**53)
        zeros = np.where(bits == 0, 32, 31 - np.floor(np.log2(np.maximum(bits, 1))).astype(
            np.int64))
        exponent[idx] += zeros
        done = bits != 0
        active[idx[done]] = False
        active[idx[exponent[idx] > 1074]] = False
    exponent = np.minimum(exponent, 1074)
    mantissa = np.asarray(words(2**52, size), dtype=np.int64)
    return np.ldexp(1.0 + mantissa / 2.0**52, -exponent.astype(np.int32))


@dataclass(frozen=True)
class SnappingCalibration:
    """Parameters of Mironov's snapping mechanism for a target ε (all costs included).

    Attributes
    ----------
    epsilon
        The ε the release satisfies: 1/λ + 2⁻⁴⁹·B/λ in units of ``unit`` (Mironov 2012,
        §5.2), solved to equal the target.
    sensitivity
        The query's sensitivity Δ plus the rounding allowance (one float spacing at B).
    unit
        The power of two ≥ that sensitivity: the query is divided by it (exactly).
    bound
        B, the clamp (in the query's units); every |q(D)| in the declared domain is ≤ B.
    lam, Lam
        λ and Λ (smallest power of two ≥ λ), in units of ``unit``.
    """

    epsilon: float
    sensitivity: float
    unit: float
    bound: float
    lam: float
    Lam: float

    @property
    def scale(self) -> float:
        """The Laplace scale in the query's units, λ · unit."""
        return self.lam * self.unit


def calibrate_snapping(epsilon: float, sensitivity: float, bound: float
                       ) -> SnappingCalibration:
    """λ with 1/λ + 2⁻⁴⁹·B/λ = ε for the query divided by a power of two ≥ Δ + spacing(B).

    ``bound`` is raised, if needed, to satisfy λ < B (the theorem's range); refused when
    B ≥ 2⁴⁶λ (the clamp is too wide for the rounding analysis).
    """
    epsilon = check_positive_float("epsilon", epsilon)
    sensitivity = check_positive_float("sensitivity", sensitivity)
    bound = check_positive_float("bound", bound)
    eff = sensitivity + float(np.spacing(bound))
    unit = 2.0 ** math.ceil(math.log2(eff))
    b = bound / unit
    lam = (1.0 + _TWO_M49 * b) / epsilon
    if b <= lam:  # the theorem needs λ < B: clamping further out only adds room
        b = 2.0 * lam
        lam = (1.0 + _TWO_M49 * b) / epsilon
    if b >= 2.0**46 * lam:
        raise ValueError(f"bound = {bound:g} is too large for the snapping mechanism at "
                         f"epsilon = {epsilon:g} (needs B < 2**46 lambda): declare a smaller "
                         "domain")
    lam = math.nextafter(lam, math.inf)  # round λ up: ε never exceeds the target
    Lam = 2.0 ** math.ceil(math.log2(lam))
    return SnappingCalibration(epsilon, eff, unit, b * unit, lam, Lam)


def snapping_laplace(values: np.ndarray, cal: SnappingCalibration, size: int,
                     rng: np.random.Generator) -> np.ndarray:
    """``size`` releases of the snapping mechanism for the query ``values`` (shape (k,)).

    Returns shape (size, k). Everything between the two clamps is computed in units of
    ``cal.unit`` (a power of two, so scaling is exact) and scaled back at the end.
    """
    rng = check_rng(rng)
    size = check_positive_int("size", size)
    q = np.atleast_1d(np.asarray(values, dtype=float))
    b = cal.bound / cal.unit
    x = np.clip(q / cal.unit, -b, b)
    k = x.size
    u = uniform_open_unit(size * k, rng).reshape(size, k)
    sign = np.where(rng.integers(0, 2, size=(size, k)) == 1, 1.0, -1.0)
    noisy = x[None, :] + sign * (cal.lam * np.log(u))
    snapped = np.rint(noisy / cal.Lam) * cal.Lam
    return np.clip(snapped, -b, b) * cal.unit
