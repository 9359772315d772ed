"""One base for releases of the form q(D) + s·F z, z ~ N(0, I) (catalogue P.1, P.4, S18.1, S18.2).

Several mechanisms release a deterministic query plus Gaussian noise whose shape does
not depend on the data: the Gaussian sum (P.1), the multivariate Gaussian mechanism
(P.4, Hall et al. 2013 Prop. 3), the standard DP-GP (S18 §2, eq. 1) and cloaking
(S18 §3, eq. 7). Their white-box view is N(q(D), s² S) with S = F Fᵀ, and drawing
from it is the same few lines everywhere. :class:`LinearGaussianRelease` writes
``mean``, ``cov`` and ``sample`` once; a subclass supplies

* ``query(data)`` — the noise-free release q(D) (it also validates the data);
* ``noise_scale`` — the multiplier s (σ or c, from the calibration);
* ``noise_factor`` — F, shape (k, r), with F Fᵀ = S (r < k when S is singular: the
  noise lives in range(S), and the auditors check that every query change does too);
* optionally ``noise_shape()`` — S itself when it is stored exactly (default F Fᵀ).

The class holds no state, so frozen dataclasses can inherit it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.dataset import Dataset

__all__ = ["LinearGaussianRelease"]


class LinearGaussianRelease(ABC):
    """``mean``/``cov``/``sample`` of a release N(query(D), s² F Fᵀ), written once."""

    @abstractmethod
    def query(self, data: Dataset) -> np.ndarray:
        """The noise-free release q(D), shape (k,)."""

    @property
    @abstractmethod
    def noise_scale(self) -> float:
        """The noise multiplier s."""

    @property
    @abstractmethod
    def noise_factor(self) -> np.ndarray:
        """F with F Fᵀ = S, shape (k, r)."""

    def noise_shape(self) -> np.ndarray:
        """S = F Fᵀ (subclasses that store S exactly return it instead)."""
        F = self.noise_factor
        return F @ F.T

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box: the mean of the release, q(D)."""
        return self.query(data)

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box: the noise covariance s² S (data-independent)."""
        return self.noise_scale**2 * np.array(self.noise_shape())

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` independent releases q(D) + s F z, shape (n, k)."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        m = self.query(data)
        F = self.noise_factor
        z = rng.standard_normal((n, F.shape[1]))
        return m + self.noise_scale * (z @ F.T)
