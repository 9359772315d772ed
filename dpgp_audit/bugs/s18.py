"""Planted versions of the S18 pitfalls (catalogue A.5), each with its correct twin.

* ``planted/s18-delta-no-sqrt`` (twin ``S18.2/cloaking``): Δ from S18-supp Alg. 1's
  CALCDELTA — the squared Mahalanobis norm — on an *unconverged* optimiser whose weights
  overshoot (λ = 4λ*): max c_iᵀM⁻¹c_i = 1/4, so Δ is taken as 1/4 instead of 1/2 and the
  noise standard deviation is halved.
* ``planted/s18-pinv-drops-direction`` (twin ``S18.2/cloaking``): the noise covariance is
  passed through a truncated pseudo-inverse (``rcond=1e-3``) that discards the directions
  of M with small eigenvalues; the sensitivity is computed with the same pseudo-inverse,
  which silently ignores the part of each mean change that now receives no noise at all
  (true ε = ∞).
* ``planted/s18-supnorm`` (twin ``S18.1/standard``): the functional mechanism calibrated to
  the largest *pointwise* change of the mean at the test points, max_j d‖c_j‖∞, where the
  proof needs the RKHS (Mahalanobis) norm.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.cloaking import CloakingSolution
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.methods.s18.cloaking import CloakingGP, CloakingMechanism
from dpgp_audit.methods.s18.standard import StandardDPGP, default_test_inputs
from dpgp_audit.norms import Mahalanobis
from dpgp_audit.privacy.calibrate import GaussianCalibration, calibrate_gaussian
from dpgp_audit.privacy.claims import ApproxDP, outputs_only
from dpgp_audit.privacy.gdp import gdp_epsilon
from dpgp_audit.privacy.multivariate import covariance_factor

__all__ = ["PinvCloaking", "build_delta_no_sqrt", "build_pinv_drops", "build_supnorm"]

_LS, _NOISE = 1.5, 0.1


def _C(data: Dataset, lengthscale: float, noise_variance: float) -> np.ndarray:
    return CloakingGP(EQ(lengthscale=lengthscale), noise_variance, data.X, default_test_inputs(),
                      1.0, 1.0, 0.01).C


def build_delta_no_sqrt(data: Dataset, *, epsilon: float, delta: float, d: float = 1.0,
                        overshoot: float = 4.0, lengthscale: float = _LS,
                        noise_variance: float = _NOISE) -> CloakingMechanism:
    """Cloaking with Alg. 1's CALCDELTA (no square root) at an overshooting λ (PLANTED BUG)."""
    base = CloakingMechanism(_C(data, lengthscale, noise_variance), d, epsilon, delta)
    sol = base.solution
    assert sol is not None
    bad = CloakingSolution(lam=overshoot * sol.lam, M=overshoot * sol.M, basis=sol.basis,
                           leverages=sol.leverages / overshoot,
                           delta=float(np.sqrt(np.max(sol.leverages) / overshoot)),
                           logdet=float("nan"), gap=float("inf"), lower_bound=-np.inf,
                           iterations=0, converged=False, method="unconverged")
    return CloakingMechanism(base.C, d, epsilon, delta, solution=bad,
                             delta_rule="paper-calcdelta")


@dataclass(frozen=True, eq=False)
class PinvCloaking:
    """Cloaking whose noise covariance went through a truncated pseudo-inverse (PLANTED BUG)."""

    C: np.ndarray
    M_full: np.ndarray
    d: float
    epsilon: float
    delta: float
    rcond: float = 1e-3
    M: np.ndarray = field(init=False, repr=False)
    delta_m: float = field(init=False)
    calibration: GaussianCalibration = field(init=False, repr=False)
    _factor: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        w, U = np.linalg.eigh(self.M_full)
        keep = w > self.rcond * w[-1]
        M = (U[:, keep] * w[keep]) @ U[:, keep].T
        Mp = np.linalg.pinv(M, rcond=self.rcond, hermitian=True)
        lev = np.einsum("ij,ij->j", self.C, Mp @ self.C)  # ignores the out-of-range part
        delta_m = float(np.sqrt(np.max(lev)))
        object.__setattr__(self, "M", 0.5 * (M + M.T))
        object.__setattr__(self, "delta_m", delta_m)
        object.__setattr__(self, "calibration",
                           calibrate_gaussian(self.epsilon, self.delta, self.d * delta_m, "hall"))
        object.__setattr__(self, "_factor", covariance_factor(self.M))

    @property
    def claim(self) -> ApproxDP:
        """The (wrong) claim."""
        return ApproxDP(epsilon=self.epsilon, delta=self.delta, relation=outputs_only(self.d),
                        note="PLANTED: truncated pseudo-inverse drops noise directions")

    @property
    def norm(self) -> Mahalanobis:
        """Mahalanobis norm w.r.t. the (truncated) noise shape."""
        return Mahalanobis(self.M)

    def sensitivity_bound(self) -> float:
        """The wrong bound computed with the truncated pseudo-inverse."""
        return self.d * self.delta_m

    def query(self, data: Dataset) -> np.ndarray:
        """C y."""
        return self.C @ data.y

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box mean."""
        return self.query(data)

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box covariance."""
        return self.calibration.sigma**2 * np.array(self.M)

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        z = rng.standard_normal((n, self._factor.shape[1]))
        return self.query(data) + self.calibration.sigma * (z @ self._factor.T)


def build_pinv_drops(data: Dataset, *, epsilon: float, delta: float, d: float = 1.0,
                     rcond: float = 1e-3, lengthscale: float = _LS,
                     noise_variance: float = _NOISE) -> PinvCloaking:
    """Cloaking with a truncated pseudo-inverse of M (PLANTED BUG, true ε = ∞)."""
    C = _C(data, lengthscale, noise_variance)
    good = CloakingMechanism(C, d, epsilon, delta)
    return PinvCloaking(C, np.array(good.solution.M), d, epsilon, delta, rcond=rcond)  # type: ignore[union-attr]


def build_supnorm(data: Dataset, *, epsilon: float, delta: float, d: float = 1.0,
                  lengthscale: float = _LS, noise_variance: float = _NOISE) -> StandardDPGP:
    """Functional mechanism calibrated to the sup-norm of the change (PLANTED BUG)."""
    return StandardDPGP(EQ(lengthscale=lengthscale), noise_variance, data.X,
                        default_test_inputs(), d, epsilon, delta, sensitivity="supnorm",
                        method="analytic")


def exact_gaussian_epsilon(mech: CloakingMechanism | StandardDPGP | PinvCloaking, data: Dataset,
                           d: float, delta: float) -> float:
    """True ε at ``delta`` of a Gaussian release whose mean moves by d·(column j of C).

    Uses the exact GDP profile: μ = max_j ‖cov^{-1/2} d c_j‖ (∞ outside the range).
    """
    C = mech.C
    norm = Mahalanobis(mech.cov(data))
    mu = max(norm(d * C[:, j]) for j in range(C.shape[1]))
    return float("inf") if not np.isfinite(mu) else gdp_epsilon(delta, mu)
