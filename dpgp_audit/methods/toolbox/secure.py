"""Secure-noise variants of the toolbox sums (catalogue P.1, P.2; issue 10 §1).

Same query and claim level as ``P.1/gaussian-sum`` and ``P.2/laplace-sum``, but the noise
and the arithmetic are those of :mod:`dpgp_audit.privacy.secure_noise`, whose proofs cover
the floating-point (or integer) release itself:

* :class:`DiscreteGaussianSumMechanism` — the sum is computed exactly (rationals), rounded
  to a grid of step g (a power of two), and exact discrete Gaussian noise is added to the
  integer (Canonne, Kamath and Steinke 2020). Rounding to the grid moves a neighbour's
  integer by at most ⌊d/g⌋ + 1, the sensitivity the calibration uses; the release g·k is
  an exact float while |k| < 2⁵³ (checked against the declared domain).
* :class:`SnappingLaplaceSumMechanism` — Mironov's snapping mechanism on the correctly
  rounded sum clamped to n·y_bound (Mironov 2012, §5.2); the sensitivity allowance for the
  rounding of the sum and the power-of-two rescaling are in its calibration.
* :class:`DiscreteGaussianLinearMechanism` — P.4 with M = I: the exact ``C y`` rounded
  per coordinate to the grid, independent exact discrete Gaussian noise per coordinate.
  Rounding moves coordinate k of a neighbour by at most ⌊d|C_ki|/g⌋ + 1 grid units, so the
  integer L2 sensitivity is max_i sqrt(Σ_k (⌊d|C_ki|/g⌋ + 1)²); independent discrete
  Gaussians with that sensitivity are ½(Δ/σ)²-zCDP (Canonne, Kamath, Steinke 2020, the
  multivariate case of Thm. 4), which is the claim; σ comes from the target (ε, δ) through
  H eq. (19).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import ClassVar

import numpy as np

from dpgp_audit._validation import check_delta, check_epsilon, check_positive_int, check_rng
from dpgp_audit.contract import COST_CLASSES
from dpgp_audit.dataset import Dataset, check_dataset
from dpgp_audit.norms import L1, L2
from dpgp_audit.privacy.claims import ZCDP, ApproxDP, PureDP, outputs_only
from dpgp_audit.privacy.conversions import zcdp_from_epsilon_delta
from dpgp_audit.privacy.domain import PublicDomain, declared_domain
from dpgp_audit.privacy.secure_noise import (
    DiscreteGaussianCalibration,
    SnappingCalibration,
    calibrate_discrete_gaussian,
    calibrate_snapping,
    discrete_gaussian,
    snapping_laplace,
)

__all__ = ["DiscreteGaussianLinearMechanism", "DiscreteGaussianSumMechanism",
           "SnappingLaplaceSumMechanism"]


def _exact_sum(y: np.ndarray) -> Fraction:
    """Σ y exactly (every double is a rational)."""
    return sum((Fraction(float(v)) for v in y), Fraction(0))


@functools.lru_cache(maxsize=64)
def _snapping(epsilon: float, d: float, bound: float) -> SnappingCalibration:
    return calibrate_snapping(epsilon, d, bound)


@dataclass(frozen=True, eq=False)
class DiscreteGaussianSumMechanism:
    """P.1, secure: g·(round(Σy / g) + Z), Z ~ N_ℤ(0, σ_ℤ²) exactly, under outputs-only d.

    Parameters
    ----------
    d, epsilon, delta
        Neighbour bound and target privacy.
    y_bound, clip
        The declared public domain (default ``DEFAULT_Y_BOUND``).
    steps
        Grid steps per d (the grid is the power of two g ≤ d/steps).
    """

    #: A Python loop of exact integer sampling per draw (catalogue draw caps, A.6).
    declared_cost_per_draw_s: ClassVar[float] = COST_CLASSES["loop"]

    d: float
    epsilon: float
    delta: float
    y_bound: float | None = None
    clip: bool = False
    steps: int = 64
    calibration: DiscreteGaussianCalibration = field(init=False, repr=False)

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        outputs_only(self.d)  # validates d
        object.__setattr__(self, "calibration", calibrate_discrete_gaussian(
            self.epsilon, self.delta, self.d, steps=self.steps))

    @property
    def domain(self) -> PublicDomain:
        """The declared public domain |y| <= y_bound."""
        return declared_domain(self.y_bound, self.clip)

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP with δ(ε) exact for the discrete Gaussian (CKS 2020, Thm. 7)."""
        cal = self.calibration
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d),
                        domain=self.domain,
                        note=(f"discrete Gaussian on the grid {cal.grid:g}: integer sensitivity "
                              f"{cal.int_sensitivity} (rounding to the grid included), "
                              f"sigma_Z^2 = {cal.sigma2}, exact sampler"))

    @property
    def norm(self) -> L2:
        """The proof bounds the change of the (real) sum, |Σy − Σy′| ≤ d."""
        return L2()

    def sensitivity_bound(self) -> float:
        """D (before rounding to the grid, which the calibration accounts for)."""
        return float(self.d)

    def query(self, data: Dataset) -> np.ndarray:
        """The exact sum of the targets, rounded once to a double, shape (1,)."""
        y = self.domain.targets(check_dataset(data).y)
        return np.array([float(_exact_sum(y))])

    def _grid_sum(self, data: Dataset) -> int:
        y = self.domain.targets(check_dataset(data).y)
        g = Fraction(self.calibration.grid)
        k = round(_exact_sum(y) / g)  # exact rational rounding (ties to even)
        top = y.size * self.domain.y_bound / self.calibration.grid \
            + 50.0 * self.calibration.sigma_int
        if top >= 2.0**53:
            safe = (2.0**53 - 50.0 * self.calibration.sigma_int) * self.calibration.grid / y.size
            raise ValueError(f"y_bound = {self.domain.y_bound:g} is too large for an exact "
                             f"release on the grid {self.calibration.grid:g} with {y.size} "
                             f"targets; the largest safe y_bound is {safe:.6g}")
        return int(k)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape (n, 1): exact multiples of the grid."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        k = self._grid_sum(data)
        z = discrete_gaussian(self.calibration.sigma2, n, rng)
        return ((k + z).astype(float) * self.calibration.grid)[:, None]


@dataclass(frozen=True, eq=False)
class SnappingLaplaceSumMechanism:
    """P.2, secure: Mironov's snapping mechanism on Σy clamped to n·y_bound (pure ε-DP)."""

    d: float
    epsilon: float
    y_bound: float | None = None
    clip: bool = False

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        outputs_only(self.d)  # validates d

    @property
    def domain(self) -> PublicDomain:
        """The declared public domain |y| <= y_bound."""
        return declared_domain(self.y_bound, self.clip)

    @property
    def claim(self) -> PureDP:
        """ε-DP (Mironov 2012, §5.2: ε = 1/λ + 2⁻⁴⁹ B/λ in units of a power of two ≥ Δ)."""
        return PureDP(epsilon=self.epsilon, relation=outputs_only(self.d), domain=self.domain,
                      note="snapping mechanism (Mironov 2012): clamp to n*y_bound, round to "
                           "the power of two above lambda; sensitivity d plus one float "
                           "spacing, rescaled by a power of two")

    def calibration(self, n_rows: int) -> SnappingCalibration:
        """The snapping parameters for a dataset of ``n_rows`` targets (B = n·y_bound)."""
        return _snapping(float(self.epsilon), float(self.d),
                         float(n_rows) * self.domain.y_bound)

    @property
    def norm(self) -> L1:
        """The proof bounds |Σy − Σy′| ≤ d."""
        return L1()

    def sensitivity_bound(self) -> float:
        """D (the rounding allowance is in the calibration)."""
        return float(self.d)

    def query(self, data: Dataset) -> np.ndarray:
        """The correctly rounded sum of the targets, shape (1,)."""
        y = self.domain.targets(check_dataset(data).y)
        return np.array([math.fsum(y)])

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape (n, 1)."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        q = self.query(data)
        return snapping_laplace(q, self.calibration(data.n), n, rng)


def _build_discrete_gaussian_sum(data: Dataset, *, epsilon: float, delta: float,
                                 d: float = 1.0, y_bound: float | None = None,
                                 clip: bool = False) -> DiscreteGaussianSumMechanism:
    return DiscreteGaussianSumMechanism(d=d, epsilon=epsilon, delta=delta, y_bound=y_bound,
                                        clip=clip)


def _build_snapping_sum(data: Dataset, *, epsilon: float, d: float = 1.0,
                        y_bound: float | None = None, clip: bool = False,
                        delta: float | None = None) -> SnappingLaplaceSumMechanism:
    return SnappingLaplaceSumMechanism(d=d, epsilon=epsilon, y_bound=y_bound, clip=clip)


@dataclass(frozen=True, eq=False)
class DiscreteGaussianLinearMechanism:
    """P.4, secure (M = I): g·(round(C y / g) + Z), Z_k ~ N_ℤ(0, σ_ℤ²) independent, exactly.

    Parameters
    ----------
    C
        ``(k, n)`` public linear map (e.g. GP posterior-mean weights).
    d, epsilon, delta
        Outputs-only neighbour bound and the target (ε, δ), met through ρ-zCDP.
    y_bound, clip
        The declared public domain.
    steps
        Grid steps per largest column change d·max_i ‖c_i‖₂.
    """

    #: k exact discrete Gaussians per draw, each a rejection loop (A.6's draw caps).
    declared_cost_per_draw_s: ClassVar[float] = COST_CLASSES["solve"]

    C: np.ndarray
    d: float
    epsilon: float
    delta: float
    y_bound: float | None = None
    clip: bool = False
    steps: int = 64
    grid: float = field(init=False)
    int_sensitivity: float = field(init=False)
    sigma2: Fraction = field(init=False, repr=False)
    rho: float = field(init=False)

    def __post_init__(self) -> None:
        C = np.atleast_2d(np.array(self.C, dtype=float))
        if not np.all(np.isfinite(C)):
            raise ValueError("C must be finite")
        C.setflags(write=False)
        object.__setattr__(self, "C", C)
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        outputs_only(self.d)  # validates d
        steps = check_positive_int("steps", self.steps)
        l2 = float(self.d) * float(np.max(np.linalg.norm(C, axis=0)))
        if l2 == 0.0:
            raise ValueError("C is zero: the query does not depend on the data")
        g = 2.0 ** math.floor(math.log2(l2 / steps))
        moves = np.floor(float(self.d) * np.abs(C) / g) + 1.0  # per coordinate, per column
        dz = float(np.max(np.sqrt(np.sum(moves**2, axis=0))))
        rho = zcdp_from_epsilon_delta(self.epsilon, self.delta)
        sigma2 = Fraction(dz * dz / (2.0 * rho)).limit_denominator(2**20)
        while dz * dz / (2.0 * float(sigma2)) > rho:  # round σ² up, never down
            sigma2 += Fraction(1, 2**20)
        for name, value in (("grid", g), ("int_sensitivity", dz), ("sigma2", sigma2),
                            ("rho", dz * dz / (2.0 * float(sigma2)))):
            object.__setattr__(self, name, value)
        gain = float(np.max(np.sum(np.abs(C), axis=1)))
        room = 2.0**53 - 50.0 * math.sqrt(float(sigma2))  # |k + Z| stays an exact double
        if gain * self.domain.y_bound / g >= room:
            raise ValueError(f"y_bound = {self.domain.y_bound:g} is too large for an exact "
                             f"release on the grid {g:g}; the largest safe y_bound is "
                             f"{room * g / gain:.6g}")

    @property
    def domain(self) -> PublicDomain:
        """The declared public domain |y| <= y_bound."""
        return declared_domain(self.y_bound, self.clip)

    @property
    def claim(self) -> ZCDP:
        """ρ-zCDP with ρ = ½(Δ_ℤ/σ_ℤ)², which gives the target (ε, δ) by H eq. (19)."""
        return ZCDP(rho=self.rho, relation=outputs_only(self.d), domain=self.domain,
                    note=(f"independent discrete Gaussians on the grid {self.grid:g}; "
                          f"integer L2 sensitivity {self.int_sensitivity:.6g} (rounding to "
                          f"the grid included); sigma_Z^2 = {self.sigma2}; exact sampler; "
                          f"from (epsilon, delta) = ({self.epsilon:g}, {self.delta:g})"))

    @property
    def norm(self) -> L2:
        """The proof bounds the L2 change of C y (before rounding, which is accounted for)."""
        return L2()

    def sensitivity_bound(self) -> float:
        """D · max_i ‖c_i‖₂."""
        return float(self.d) * float(np.max(np.linalg.norm(self.C, axis=0)))

    def _exact(self, data: Dataset) -> list[Fraction]:
        y = self.domain.targets(check_dataset(data).y)
        if y.size != self.C.shape[1]:
            raise ValueError(f"data has {y.size} targets but C has {self.C.shape[1]} columns")
        yq = [Fraction(float(v)) for v in y]
        return [sum((Fraction(float(c)) * v for c, v in zip(row, yq, strict=True)),
                    Fraction(0)) for row in self.C]

    def query(self, data: Dataset) -> np.ndarray:
        """C y computed exactly and rounded once per coordinate, shape (k,)."""
        return np.array([float(v) for v in self._exact(data)])

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape (n, k): exact multiples of the grid."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        g = Fraction(self.grid)
        k = np.array([int(round(v / g)) for v in self._exact(data)], dtype=np.int64)
        z = discrete_gaussian(self.sigma2, n * k.size, rng).reshape(n, k.size)
        return (k[None, :] + z).astype(float) * self.grid


def _build_discrete_gaussian_linear(data: Dataset, *, epsilon: float, delta: float,
                                    d: float = 1.0, lengthscale: float = 0.5,
                                    noise_variance: float = 0.1, k: int = 8,
                                    y_bound: float | None = None, clip: bool = False
                                    ) -> DiscreteGaussianLinearMechanism:
    """GP posterior-mean weights at k grid points (as P.4), identity noise shape."""
    from dpgp_audit.gp.kernels import EQ
    from dpgp_audit.gp.regression import ExactGP
    from dpgp_audit.methods.toolbox.primitives import _default_grid

    gp = ExactGP(EQ(lengthscale=lengthscale), noise_variance).fit(data.X, np.zeros(data.n))
    return DiscreteGaussianLinearMechanism(C=gp.mean_weights(_default_grid(data, k)), d=d,
                                           epsilon=epsilon, delta=delta, y_bound=y_bound,
                                           clip=clip)
