"""Exact Gaussian process regression (Rasmussen & Williams 2006, Alg. 2.1).

``ExactGP(kernel, noise_variance).fit(X, y)`` factorises ``K_ff + σ² I`` once
and returns a :class:`FittedGP` that predicts, evaluates the log marginal
likelihood and exposes the linear map from targets to posterior mean
(``mean_weights``), which the DP mechanisms use for sensitivity analysis.

Predictions are for the latent function f (add ``noise_variance`` for a
noisy observation), as in scikit-learn's ``GaussianProcessRegressor`` with
``alpha = noise_variance``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.gp.kernels import Kernel, as_inputs
from dpgp_audit.gp.linalg import cho_solve_lower, logdet_from_cholesky, psd_cholesky, solve_lower

__all__ = ["ExactGP", "FittedGP"]


@dataclass(frozen=True)
class ExactGP:
    """A GP prior ``f ~ GP(0, kernel)`` with Gaussian noise ``y = f(x) + N(0, σ²)``.

    Parameters
    ----------
    kernel
        The covariance function.
    noise_variance
        σ² ≥ 0. Zero (noise-free interpolation) is allowed only when K(X, X)
        is numerically positive definite; otherwise :meth:`fit` raises.
    """

    kernel: Kernel
    noise_variance: float

    def __post_init__(self) -> None:
        if not isinstance(self.kernel, Kernel):
            raise TypeError(f"kernel must be a Kernel, got {type(self.kernel).__name__}")
        nv = float(self.noise_variance)
        if not np.isfinite(nv) or nv < 0:
            raise ValueError(f"noise_variance must be finite and >= 0, got {self.noise_variance!r}")
        object.__setattr__(self, "noise_variance", nv)

    def fit(self, X: object, y: object) -> FittedGP:
        """Condition on data: Cholesky of ``K_ff + σ² I`` (Alg. 2.1 line 2) and α (line 3)."""
        Xa = as_inputs("X", X)
        ya = np.asarray(y, dtype=float)
        if ya.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {ya.shape}")
        if not np.all(np.isfinite(ya)):
            raise ValueError("y contains non-finite value(s) (NaN or inf)")
        if ya.shape[0] != Xa.shape[0]:
            raise ValueError(f"X has {Xa.shape[0]} rows but y has {ya.shape[0]} entries")
        if Xa.shape[0] == 0:
            raise ValueError("cannot fit a GP to zero data points")
        K = self.kernel(Xa)
        K[np.diag_indices_from(K)] += self.noise_variance
        try:
            L = psd_cholesky(K, name="K_ff + noise_variance*I")  # Alg. 2.1 line 2
        except ValueError as err:
            if self.noise_variance == 0.0:
                raise ValueError(
                    "noise-free GP (noise_variance=0) needs a positive definite K(X, X), "
                    f"but: {err}") from err
            raise
        Xa = Xa.copy()
        Xa.setflags(write=False)
        ya = ya.copy()
        ya.setflags(write=False)
        L.setflags(write=False)
        alpha = cho_solve_lower(L, ya)  # Alg. 2.1 line 3: α = Lᵀ \ (L \ y)
        alpha.setflags(write=False)
        return FittedGP(self, Xa, ya, L, alpha)

    def fit_dataset(self, data: object) -> FittedGP:
        """:meth:`fit` on a :class:`dpgp_audit.dataset.Dataset` (uses ``data.X``, ``data.y``)."""
        return self.fit(data.X, data.y)  # type: ignore[attr-defined]


@dataclass(frozen=True, eq=False)
class FittedGP:
    """A GP conditioned on (X, y), holding the Cholesky factor L of ``K_ff + σ² I``.

    Attributes
    ----------
    gp
        The prior model.
    X, y
        Training inputs (n, D) and targets (n,), read-only.
    L
        Lower Cholesky factor of ``K_ff + σ² I``.
    alpha
        ``(K_ff + σ² I)⁻¹ y``.
    """

    gp: ExactGP
    X: np.ndarray
    y: np.ndarray
    L: np.ndarray
    alpha: np.ndarray

    @property
    def n(self) -> int:
        """Number of training points."""
        return int(self.y.shape[0])

    def _cross(self, Xs: object) -> tuple[np.ndarray, np.ndarray]:
        Xs_a = as_inputs("Xs", Xs)
        if Xs_a.shape[1] != self.X.shape[1]:
            raise ValueError(f"Xs has D = {Xs_a.shape[1]} columns but the training inputs "
                             f"have D = {self.X.shape[1]}")
        return Xs_a, self.gp.kernel(Xs_a, self.X)  # K_*f, shape (m, n)

    def predict(self, Xs: object, full_cov: bool = False, *, include_noise: bool = False
                ) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance (or covariance) of f at ``Xs``.

        Parameters
        ----------
        Xs
            Test inputs (m,) or (m, D).
        full_cov
            Return the (m, m) posterior covariance instead of its diagonal.
        include_noise
            Add ``noise_variance`` (predict a new noisy observation y* instead of f*).

        Returns
        -------
        mean : (m,) array
        var : (m,) array, or cov : (m, m) array when ``full_cov=True``
        """
        Xs_a, Ksf = self._cross(Xs)
        mean = Ksf @ self.alpha  # Alg. 2.1 line 4: f̄* = k*ᵀ α
        v = solve_lower(self.L, Ksf.T)  # Alg. 2.1 line 5: v = L \ k*
        noise = self.gp.noise_variance if include_noise else 0.0
        if full_cov:
            cov = self.gp.kernel(Xs_a) - v.T @ v  # Alg. 2.1 line 6 (matrix form)
            cov = 0.5 * (cov + cov.T)
            cov[np.diag_indices_from(cov)] += noise
            return mean, cov
        var = self.gp.kernel.diag(Xs_a) - np.einsum("ij,ij->j", v, v)  # Alg. 2.1 line 6
        return mean, np.maximum(var, 0.0) + noise  # clip round-off negatives

    def sample_posterior(self, Xs: object, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` joint posterior draws of f at ``Xs``, shape (size, m).

        Uses the eigendecomposition of the posterior covariance (round-off
        negative eigenvalues clipped to 0), so no jitter is needed.
        """
        size = check_positive_int("size", size)
        rng = check_rng(rng)
        mean, cov = self.predict(Xs, full_cov=True)
        lam, Q = np.linalg.eigh(cov)
        root = Q * np.sqrt(np.maximum(lam, 0.0))
        return mean + rng.standard_normal((size, mean.shape[0])) @ root.T

    def log_marginal_likelihood(self) -> float:
        """``log p(y | X) = −½ yᵀα − Σ log L_ii − (n/2) log 2π`` (Alg. 2.1 line 7)."""
        return float(-0.5 * self.y @ self.alpha - 0.5 * logdet_from_cholesky(self.L)
                     - 0.5 * self.n * np.log(2.0 * np.pi))

    def mean_weights(self, Xs: object) -> np.ndarray:
        """C of shape (m, n) with posterior mean ``C @ y``: ``C = K_*f (K_ff + σ² I)⁻¹``.

        The posterior mean is linear in the targets; C is what the
        outputs-only DP mechanisms bound (e.g. S18 sensitivity via C's rows).
        """
        _, Ksf = self._cross(Xs)
        return cho_solve_lower(self.L, Ksf.T).T

    def with_targets(self, y: object) -> FittedGP:
        """Same inputs, new targets, reusing the Cholesky factor (outputs-only neighbours)."""
        ya = np.asarray(y, dtype=float)
        if ya.shape != self.y.shape:
            raise ValueError(f"y must have shape {self.y.shape}, got {ya.shape}")
        if not np.all(np.isfinite(ya)):
            raise ValueError("y contains non-finite value(s) (NaN or inf)")
        ya = ya.copy()
        ya.setflags(write=False)
        alpha = cho_solve_lower(self.L, ya)
        alpha.setflags(write=False)
        return FittedGP(self.gp, self.X, ya, self.L, alpha)
