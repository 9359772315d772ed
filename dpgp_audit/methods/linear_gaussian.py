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
* optionally ``noise_shape()`` — S itself when it is stored exactly (default F Fᵀ);
* ``domain`` — its declared public domain, for :meth:`check_float_safety` (issue 10 §1:
  the float-safety rule of :mod:`dpgp_audit.privacy.domain`, written here once);
* optionally ``linear_query(data)`` — the stored map C and the checked targets y with
  ``query(data) = C y``: the release then evaluates C y exactly.

Every release is rounded to the public grid of :mod:`dpgp_audit.privacy.float_release`
(issue 20 §4), in the noise's own coordinates: with B = F⁺ C (so that q = F B y),
the release is ``F · (Λ · round((B y + s z) / Λ))`` — the inner sum ``B y + s z`` (iid
noise of sd s in every coordinate) evaluated and rounded exactly, then mapped by the public
factor F (post-processing). The low bits of the floats carry no trace of the query
(docs/auditors.md, "Float-safe releases"), and the rounding stays inside range(F), where
the noise is: a rounding of the k output coordinates instead would add independent error
in the directions where a singular or ill-conditioned S has (almost) no noise, and the
release would no longer follow its stated N(q, s² S). :meth:`float_release` gives the
inner grid and the float total variation τ the claim records.

The class holds no state, so frozen dataclasses can inherit it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.dataset import Dataset, check_dataset
from dpgp_audit.privacy.domain import check_linear_release
from dpgp_audit.privacy.float_release import FloatRelease, iid_gaussian_release
from dpgp_audit.privacy.multivariate import factor_pinv

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

    def noise_sd(self) -> np.ndarray:
        """S · sqrt(S_kk): the noise sd of each released coordinate."""
        return self.noise_scale * np.sqrt(np.clip(np.diag(np.atleast_2d(self.noise_shape())),
                                                  0.0, None))

    def linear_query(self, data: Dataset) -> tuple[np.ndarray, np.ndarray] | None:
        """``(C, y)`` with ``query(data) = C y`` for an exact evaluation, or ``None``.

        ``None`` (default): the release rounds ``query(data)`` as computed in floats.
        """
        return None

    def float_release(self) -> FloatRelease:
        """The public inner grid of the release and its float total variation τ (issue 20 §4).

        The inner coordinates ``B y + s z`` carry iid noise of sd s, one per column of F.
        """
        return iid_gaussian_release(np.full(self.noise_factor.shape[1], self.noise_scale))

    def float_tv(self) -> float:
        """τ of :meth:`float_release`, for the claim's ``float_tv``."""
        return self.float_release().tv

    def inner_map(self, C: np.ndarray) -> np.ndarray:
        """B = F⁺ C: the query in the noise's own coordinates (``F B = C`` on range(F))."""
        return factor_pinv(self.noise_factor) @ np.atleast_2d(C)

    def check_float_safety(self, C: np.ndarray) -> float:
        """The float-safety rule for the linear map ``C`` of this release (on B = F⁺ C).

        Refuses (``ValueError`` naming ``y_bound`` with the largest safe bound) when the
        float spacing at the largest inner release ``B y + s z`` allowed by ``self.domain``
        exceeds 2^-GUARD_BITS of the inner grid; returns the largest spacing / grid ratio.
        """
        return check_linear_release(self.domain, self.inner_map(C),  # type: ignore[attr-defined]
                                    self.float_release())

    def mean(self, data: Dataset) -> np.ndarray:
        """White-box: the mean of the release, q(D)."""
        return self.query(data)

    def cov(self, data: Dataset) -> np.ndarray:
        """White-box: the noise covariance s² S (data-independent)."""
        return self.noise_scale**2 * np.array(self.noise_shape())

    def sample(self, data: Dataset, n: int, rng: np.random.Generator, *,
               offset: np.ndarray | None = None) -> np.ndarray:
        """``n`` independent releases ``F · Λ round((B y + s z) / Λ) (+ offset)``, shape (n, k).

        ``offset``: a public vector added to the release (post-processing).
        """
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        F = self.noise_factor
        fr = self.float_release()
        lin = self.linear_query(data)
        z = rng.standard_normal((n, F.shape[1]))
        noise = self.noise_scale * z
        if lin is None:  # the query as computed in floats, mapped to the inner coordinates
            inner = fr.round(factor_pinv(F) @ self.query(data), noise)
        else:
            inner = fr.round_linear(self.inner_map(lin[0]), lin[1], noise)
        out = inner @ F.T
        return out if offset is None else out + offset
