"""Planted twins for A.7: today's shipped releases without a declared domain (catalogue A.5, A.7).

Before issue 10, P.1, P.2 and the cloaking releases (S18.2, S21.2) accepted any finite
target. Their proofs hold over the reals, but with huge *other* targets (legal under the
outputs-only relation when |y| is unbounded) the float release rounds on a grid coarser
than the noise, and a one-target change moves it between grid points: the kit's
black-box auditor certifies ε ≥ 3.8 (P.1) and 6.5–7.7 (cloaking) against a claim of 1.
:class:`UnguardedLinearRelease` keeps that release verbatim — the same query, the same
calibrated noise, no domain and no float-safety check — so that the precision auditor
(:mod:`dpgp_audit.audit.precision`) has something real to catch. Never use it for data.

Each builder takes its correct twin's arguments, builds the correct mechanism and copies
its public linear map, noise factor and scale; only the guards are missing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.dataset import Dataset, check_dataset
from dpgp_audit.privacy.claims import Claim
from dpgp_audit.privacy.mechanisms import laplace_noise

__all__ = ["UnguardedGaussianRelease", "UnguardedLinearRelease", "build_cloaking_no_domain",
           "build_gaussian_sum_no_domain", "build_laplace_sum_no_domain",
           "build_sparse_cloaking_no_domain"]


@dataclass(frozen=True, eq=False)
class UnguardedLinearRelease:
    """BUG (planted): ``C y + noise`` for any finite y — no public domain, no float safety.

    Parameters
    ----------
    name
        What it copies.
    C
        ``(k, n)`` public linear map, or ``None`` for the sum of all targets.
    factor
        ``(k, r)`` noise factor (Gaussian noise ``sigma · factor z``); unused for Laplace.
    sigma
        Gaussian multiplier, or the Laplace scale b.
    claim_
        The correct twin's claim, without its domain (the bug: nothing bounds |y|).
    noise
        ``"gaussian"`` or ``"laplace"``.
    """

    name: str
    C: np.ndarray | None
    factor: np.ndarray
    sigma: float
    claim_: Claim
    noise: str = "gaussian"
    _cov: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.noise not in ("gaussian", "laplace"):
            raise ValueError(f"noise must be 'gaussian' or 'laplace', got {self.noise!r}")
        F = np.atleast_2d(np.asarray(self.factor, dtype=float))
        object.__setattr__(self, "factor", F)
        object.__setattr__(self, "_cov", self.sigma**2 * (F @ F.T))

    @property
    def claim(self) -> Claim:
        """The twin's claim with no domain: what the unguarded release (wrongly) promises.

        Nor is the release rounded to a float-safe grid: the claim carries no float τ.
        """
        return dataclasses.replace(self.claim_, domain=None, float_tv=0.0)

    def _query(self, data: Dataset) -> np.ndarray:
        y = check_dataset(data).y
        if self.C is None:
            return np.array([float(np.sum(y))])
        if y.size != self.C.shape[1]:
            raise ValueError(f"data has {y.size} targets but C has {self.C.shape[1]} columns")
        return self.C @ y

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape (n, k), rounded wherever the floats round them."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        m = self._query(data)
        if self.noise == "laplace":
            return m + laplace_noise(self.sigma, (n, m.size), rng)
        z = rng.standard_normal((n, self.factor.shape[1]))
        return m + self.sigma * (z @ self.factor.T)


@dataclass(frozen=True, eq=False)
class UnguardedGaussianRelease(UnguardedLinearRelease):
    """The Gaussian twins, with the white-box model over the reals (``mean``/``cov``).

    The model is exact for real numbers, which is why the white-box auditor finds nothing:
    the leak lives in the float release only.
    """

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box mean over the reals (the float release departs from it)."""
        return self._query(data)

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box covariance σ² F Fᵀ."""
        return np.array(self._cov)


def build_gaussian_sum_no_domain(data: Dataset, *, epsilon: float, delta: float,
                                 d: float = 1.0) -> UnguardedLinearRelease:
    """P.1/gaussian-sum without its domain (twin of ``P.1/gaussian-sum``)."""
    from dpgp_audit.methods.toolbox.primitives import GaussianSumMechanism

    twin = GaussianSumMechanism(d=d, epsilon=epsilon, delta=delta)
    return UnguardedGaussianRelease("P.1 sum, no domain", None, np.eye(1),
                                    twin.calibration.sigma, twin.claim)


def build_laplace_sum_no_domain(data: Dataset, *, epsilon: float,
                                d: float = 1.0) -> UnguardedLinearRelease:
    """P.2/laplace-sum without its domain (twin of ``P.2/laplace-sum``)."""
    from dpgp_audit.methods.toolbox.primitives import LaplaceSumMechanism

    twin = LaplaceSumMechanism(d=d, epsilon=epsilon)
    return UnguardedLinearRelease("P.2 sum, no domain", None, np.eye(1), twin.scale,
                                  twin.claim, noise="laplace")


def _from_cloaking(name: str, release: object) -> UnguardedLinearRelease:
    mech = release.mechanism  # type: ignore[attr-defined]
    Q = np.asarray(mech._Q)
    C = Q @ (Q.T @ np.asarray(mech.C))  # the released map: C projected on span{c_i}
    return UnguardedGaussianRelease(name, C, np.asarray(mech._factor), mech.sigma, mech.claim)


def build_cloaking_no_domain(data: Dataset, *, epsilon: float, delta: float, d: float = 1.0,
                             method: str = "hall") -> UnguardedLinearRelease:
    """S18.2/cloaking without its domain (twin of ``S18.2/cloaking``)."""
    from dpgp_audit.methods.s18.cloaking import _build_cloaking

    return _from_cloaking("S18.2 cloaking, no domain",
                          _build_cloaking(data, epsilon=epsilon, delta=delta, d=d,
                                          method=method))


def build_sparse_cloaking_no_domain(data: Dataset, *, epsilon: float, delta: float,
                                    d: float = 1.0, inducing_seed: int
                                    ) -> UnguardedLinearRelease:
    """S21.2/sparse-cloaking without its domain (twin of ``S21.2/sparse-cloaking``)."""
    from dpgp_audit.methods.s21.mechanisms import _build_sparse

    return _from_cloaking("S21.2 sparse cloaking, no domain",
                          _build_sparse(data, epsilon=epsilon, delta=delta, d=d,
                                        inducing_seed=inducing_seed))
