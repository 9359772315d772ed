"""One linear Gaussian release, written once (issue 13; issue 10 §1; catalogue P.1, P.4, S18).

P.1 (sum), P.4 (C y with noise shape M), S18.1 (posterior mean with prior-shaped noise)
and S18.2 (cloaking) all release ``q(D) + σ·F z`` with z ~ N(0, I_r), F Fᵀ = M. The mixin
:class:`LinearGaussianRelease` holds what they share: the white-box ``mean``/``cov``, the
vectorised ``sample``, the noise sd per coordinate and the float-safety rule of
:mod:`dpgp_audit.privacy.domain` against the declared ``domain``. A subclass supplies

* ``query(data)`` — the noise-free release, with its targets checked against ``domain``;
* ``domain`` — its :class:`~dpgp_audit.privacy.domain.PublicDomain`;
* ``noise_scale`` — σ;
* ``noise_factor`` — F, shape (k, r);
* optionally ``noise_shape`` — M exactly (default F Fᵀ).
"""

from __future__ import annotations

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.dataset import Dataset, check_dataset
from dpgp_audit.privacy.domain import check_linear_release
from dpgp_audit.privacy.mechanisms import multivariate_gaussian_noise

__all__ = ["LinearGaussianRelease"]


class LinearGaussianRelease:
    """Mixin: ``sample = query + σ F z``, ``mean = query``, ``cov = σ² M`` (module docstring)."""

    @property
    def noise_shape(self) -> np.ndarray:
        """M, the noise covariance up to σ² (default F Fᵀ)."""
        F = np.asarray(self.noise_factor)  # type: ignore[attr-defined]
        return F @ F.T

    def noise_sd(self) -> np.ndarray:
        """σ sqrt(M_kk): the noise sd of each released coordinate."""
        return float(self.noise_scale) * np.sqrt(  # type: ignore[attr-defined]
            np.clip(np.diag(np.atleast_2d(self.noise_shape)), 0.0, None))

    def check_float_safety(self, C: np.ndarray) -> float:
        """The float-safety rule for the linear map ``C`` of this release (domain, noise sd)."""
        return check_linear_release(self.domain, C, self.noise_sd())  # type: ignore

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box mean: the noise-free release."""
        return self.query(data)  # type: ignore[attr-defined]

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box covariance σ² M (data-independent)."""
        return float(self.noise_scale) ** 2 * np.array(self.noise_shape)  # type: ignore

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` releases, shape (n, k)."""
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        m = self.query(data)  # type: ignore[attr-defined]
        return m + float(self.noise_scale) * multivariate_gaussian_noise(  # type: ignore
            self.noise_factor, n, rng)  # type: ignore[attr-defined]
