"""The toolbox mechanisms on simple queries, registered for auditing (catalogue P.1–P.5).

Each mechanism is a small frozen dataclass implementing the contract of
:mod:`dpgp_audit.contract`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.dataset import Dataset, clip_targets
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.norms import L2
from dpgp_audit.privacy.calibrate import GaussianCalibration, calibrate_gaussian
from dpgp_audit.privacy.claims import ApproxDP, outputs_only
from dpgp_audit.registry import Entry, register

__all__ = ["GaussianSumMechanism"]


@dataclass(frozen=True)
class GaussianSumMechanism:
    """P.1: release Σ_i y_i + N(0, σ²) under outputs-only neighbours (|y_i − y_i'| ≤ d).

    The L2 sensitivity of the sum is ``d``; σ comes from :func:`calibrate_gaussian`.
    Targets must already satisfy the declared bound ``|y| <= y_bound``
    (``clip=True`` clips them explicitly; the claim records it).
    """

    d: float
    epsilon: float
    delta: float
    method: str = "analytic"
    y_bound: float | None = None
    clip: bool = False
    allow_unproven: bool = False
    calibration: GaussianCalibration = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "calibration", calibrate_gaussian(
            self.epsilon, self.delta, self.d, self.method, allow_unproven=self.allow_unproven))

    @property
    def claim(self) -> ApproxDP:
        """(ε, δ)-DP under outputs-only neighbours with bound d."""
        note = f"targets clipped to |y| <= {self.y_bound:g}" if self.clip else ""
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d),
                        proven=self.calibration.proven, note=note)

    @property
    def norm(self) -> L2:
        """The proof bounds the L2 norm of the query change."""
        return L2()

    def sensitivity_bound(self) -> float:
        """Δ₂ = d."""
        return self.d

    def query(self, data: Dataset) -> np.ndarray:
        """The noise-free release: the sum of the (optionally clipped) targets, shape (1,)."""
        y = data.y
        if self.y_bound is not None:
            y, _ = clip_targets(y, self.y_bound, clip=self.clip)
        return np.array([float(np.sum(y))])

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box: the mean of the Gaussian release."""
        return self.query(data)

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box: the noise covariance σ² (1 × 1)."""
        return np.array([[self.calibration.sigma**2]])

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape (n, 1)."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        return self.query(data) + self.calibration.sigma * rng.standard_normal((n, 1))


def _build_gaussian_sum(data: Dataset, *, epsilon: float, delta: float, d: float = 1.0,
                        method: str = "analytic") -> GaussianSumMechanism:
    return GaussianSumMechanism(d=d, epsilon=epsilon, delta=delta, method=method)


register(Entry(
    id="P.1/gaussian-sum",
    paper="P",
    title="Analytic Gaussian mechanism on the sum of targets",
    build=_build_gaussian_sum,
    default_data=default_dataset,
    defaults={"epsilon": 1.0, "delta": 1e-5, "d": 1.0},
))
