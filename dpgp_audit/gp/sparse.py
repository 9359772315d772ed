"""Inducing-point (sparse) GP regression: FITC, SoR and DTC/VFE (no privacy here).

With M inducing inputs Z, every approximation replaces the prior covariance of
the training values by a low-rank-plus-diagonal matrix

    Q_ff + Λ,   Q_ab = K_aZ K_ZZ⁻¹ K_Zb,

with Λ = diag(K_ff − Q_ff) for FITC (Snelson & Ghahramani 2006; S21 §3.2)
and Λ = 0 for SoR / DTC (Quiñonero-Candela & Rasmussen 2005). The posterior
mean is linear in y, ``mean = C @ y`` with the S21 eq. (9) cloaking matrix

    C = k_*Z Q_ZZ⁻¹ K_Zf (Λ + σ² I)⁻¹,   Q_ZZ = K_ZZ + K_Zf (Λ + σ² I)⁻¹ K_fZ

(S21 names Q_ZZ "Q_MM"). Predictive variances (latent f):

* FITC and DTC: ``K_** − k_*Z (K_ZZ⁻¹ − Q_ZZ⁻¹) k_Z*`` (S21 eq. 9 without + σ²);
* SoR: ``k_*Z Q_ZZ⁻¹ k_Z*`` (the degenerate prior Q_** at the test points).

DTC has SoR's mean and FITC's variance form; its posterior equals the
predictive of Titsias' (2009) variational q(u) (VFE), whose evidence lower
bound is :meth:`FittedSparseGP.titsias_elbo`.

Everything is computed through ``V = L_ZZ⁻¹ K_Zf`` and the m × m factor of
``B = I + V D⁻¹ Vᵀ`` (D = Λ + σ² I) from :func:`dpgp_audit.gp.linalg.low_rank_plus_diag`:
O(n m²) time, no n × n matrix.

The inducing inputs must not depend on private targets (choose them from
public inputs, e.g. k-means on X, as S21 does); this module cannot check that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpgp_audit.gp.kernels import Kernel, as_inputs
from dpgp_audit.gp.linalg import (
    FactoredMatrix,
    LowRankPlusDiag,
    cho_solve_lower,
    low_rank_plus_diag,
    psd_cholesky,
    solve_lower,
)

__all__ = ["FittedSparseGP", "SparseGP"]

Approximation = Literal["fitc", "sor", "dtc"]
_APPROX = ("fitc", "sor", "dtc")


@dataclass(frozen=True, eq=False)
class SparseGP:
    """A sparse GP regression model with fixed (public) inducing inputs.

    Parameters
    ----------
    kernel
        Covariance function.
    noise_variance
        σ² > 0 (the approximations need a positive diagonal).
    Z
        Inducing inputs (M,) or (M, D).
    approximation
        ``"fitc"`` (S21 §3.2), ``"sor"`` (S21 §4.1) or ``"dtc"`` (= VFE predictive).
    jitter
        Added to K_ZZ's diagonal, relative to its mean diagonal (default 1e-8),
        so that close inducing inputs do not break the Cholesky factorisation.
    """

    kernel: Kernel
    noise_variance: float
    Z: np.ndarray
    approximation: Approximation = "fitc"
    jitter: float = 1e-8

    def __post_init__(self) -> None:
        if not isinstance(self.kernel, Kernel):
            raise TypeError(f"kernel must be a Kernel, got {type(self.kernel).__name__}")
        nv = float(self.noise_variance)
        if not np.isfinite(nv) or nv <= 0:
            raise ValueError(f"noise_variance must be finite and > 0 for a sparse GP, "
                             f"got {self.noise_variance!r}")
        object.__setattr__(self, "noise_variance", nv)
        Z = as_inputs("Z", self.Z).copy()
        if Z.shape[0] == 0:
            raise ValueError("Z must hold at least one inducing input")
        Z.setflags(write=False)
        object.__setattr__(self, "Z", Z)
        if self.approximation not in _APPROX:
            raise ValueError(f"approximation must be one of {_APPROX}, got {self.approximation!r}")
        jit = float(self.jitter)
        if not np.isfinite(jit) or jit < 0:
            raise ValueError(f"jitter must be finite and >= 0, got {self.jitter!r}")
        object.__setattr__(self, "jitter", jit)

    def fit(self, X: object, y: object) -> FittedSparseGP:
        """Factorise K_ZZ and ``B = I + V D⁻¹ Vᵀ``; O(n M²)."""
        Xa = as_inputs("X", X)
        if Xa.shape[1] != self.Z.shape[1]:
            raise ValueError(f"X has D = {Xa.shape[1]} columns but Z has D = {self.Z.shape[1]}")
        ya = np.asarray(y, dtype=float)
        if ya.ndim != 1 or ya.shape[0] != Xa.shape[0]:
            raise ValueError(f"y must have shape ({Xa.shape[0]},), got {ya.shape}")
        if not np.all(np.isfinite(ya)):
            raise ValueError("y contains non-finite value(s) (NaN or inf)")
        Kzz = self.kernel(self.Z)
        scale = float(np.mean(np.diag(Kzz)))
        L_zz = psd_cholesky(Kzz, jitter=self.jitter * scale, name="K_ZZ")
        V = solve_lower(L_zz, self.kernel(self.Z, Xa))  # L_ZZ⁻¹ K_Zf, (M, n)
        qdiag = np.einsum("ij,ij->j", V, V)  # diag(Q_ff)
        if self.approximation == "fitc":
            lam = np.maximum(self.kernel.diag(Xa) - qdiag, 0.0)  # Λ = diag(K_ff − Q_ff)
        else:
            lam = np.zeros(Xa.shape[0])
        factor = low_rank_plus_diag(V, lam + self.noise_variance)
        Xa = Xa.copy()
        ya = ya.copy()
        for arr in (Xa, ya, L_zz, V, lam):
            arr.setflags(write=False)
        return FittedSparseGP(self, Xa, ya, L_zz, V, lam, factor)


@dataclass(frozen=True, eq=False)
class FittedSparseGP:
    """A sparse GP conditioned on (X, y); see :class:`SparseGP`.

    Attributes
    ----------
    L_zz
        Lower Cholesky factor of K_ZZ (+ jitter).
    V
        ``L_zz⁻¹ K_Zf`` (M × n).
    lam
        The FITC diagonal Λ (zeros for SoR / DTC).
    factor
        Woodbury factorisation of ``Vᵀ V + Λ + σ² I`` (its ``L_B`` is the factor of B).
    """

    model: SparseGP
    X: np.ndarray
    y: np.ndarray
    L_zz: np.ndarray
    V: np.ndarray
    lam: np.ndarray
    factor: LowRankPlusDiag

    @property
    def n(self) -> int:
        """Number of training points."""
        return int(self.y.shape[0])

    def _W(self, Xs: object) -> tuple[np.ndarray, np.ndarray]:
        Xs_a = as_inputs("Xs", Xs)
        if Xs_a.shape[1] != self.X.shape[1]:
            raise ValueError(f"Xs has D = {Xs_a.shape[1]} columns but the training inputs "
                             f"have D = {self.X.shape[1]}")
        return Xs_a, solve_lower(self.L_zz, self.model.kernel(self.model.Z, Xs_a))  # (M, m)

    def mean_weights(self, Xs: object) -> np.ndarray:
        """C (m × n) with posterior mean ``C @ y`` (S21 eq. 9's cloaking matrix)."""
        _, W = self._W(Xs)
        d = self.factor.d
        # C = Wᵀ B⁻¹ V D⁻¹, the Q_ZZ⁻¹ of eq. (9) being L_ZZ⁻ᵀ B⁻¹ L_ZZ⁻¹
        return (cho_solve_lower(self.factor.L_B, W).T @ self.V) / d

    def mean_weights_factored(self, Xs: object) -> FactoredMatrix:
        """The same C as :meth:`mean_weights`, kept as its factors ``F G``.

        ``F = k_*Z Q_ZZ⁻¹ L_ZZ`` (k × M, i.e. ``(B⁻¹ W)ᵀ``) and ``G = V D⁻¹`` (M × n): what the
        cloaking solver needs at large n (S21.2), in O(n M) memory, no k × n array.
        """
        _, W = self._W(Xs)
        return FactoredMatrix(cho_solve_lower(self.factor.L_B, W).T, self.V / self.factor.d)

    def predict(self, Xs: object, full_cov: bool = False, *, include_noise: bool = False
                ) -> tuple[np.ndarray, np.ndarray]:
        """Predictive mean and variance (or covariance) of f at ``Xs``.

        ``include_noise=True`` adds σ² (S21 eq. 9 as printed predicts y*).
        """
        Xs_a, W = self._W(Xs)
        d = self.factor.d
        mean = cho_solve_lower(self.factor.L_B, W).T @ (self.V @ (self.y / d))
        U = solve_lower(self.factor.L_B, W)  # B^{-1/2} W: k_*Z Q_ZZ⁻¹ k_Z* = UᵀU
        noise = self.model.noise_variance if include_noise else 0.0
        sor = self.model.approximation == "sor"
        if full_cov:
            cov = U.T @ U
            if not sor:
                cov = cov + self.model.kernel(Xs_a) - W.T @ W
            cov = 0.5 * (cov + cov.T)
            cov[np.diag_indices_from(cov)] += noise
            return mean, cov
        var = np.einsum("ij,ij->j", U, U)
        if not sor:
            var = var + self.model.kernel.diag(Xs_a) - np.einsum("ij,ij->j", W, W)
        return mean, np.maximum(var, 0.0) + noise

    def log_marginal_likelihood(self) -> float:
        """``log N(y; 0, Q_ff + Λ + σ² I)``, the approximation's own evidence (SoR = DTC)."""
        return self.factor.logpdf(self.y)

    def titsias_elbo(self) -> float:
        """Titsias (2009) bound: DTC evidence − tr(K_ff − Q_ff) / (2σ²) (≤ exact LML).

        Only meaningful for ``approximation="dtc"`` (and equal to it for "sor").
        """
        if self.model.approximation == "fitc":
            raise ValueError("titsias_elbo needs approximation='dtc' (or 'sor'), not 'fitc'")
        kdiag = self.model.kernel.diag(self.X)
        trace = float(np.sum(kdiag - np.einsum("ij,ij->j", self.V, self.V)))
        return self.log_marginal_likelihood() - 0.5 * trace / self.model.noise_variance

