"""Titsias' collapsed variational sparse GP: the optimal q(u) and its predictions (H eqs. 2, 3, 17).

Pure GP maths, no privacy. With inducing inputs Z, kernel k and Gaussian noise
variance σ², the optimal q(u) = N(m, S) is (Titsias 2009, eq. 10; H eq. 2)

    m = σ⁻² K_ZZ Σ A,   S = K_ZZ Σ K_ZZ,   Σ = (K_ZZ + σ⁻² B)⁻¹,

and depends on the data only through the sufficient statistics (H eq. 3)

    A = K_ZX y = Σ_i y_i k_i,   B = K_ZX K_XZ = Σ_i k_i k_iᵀ.

Predictions at new inputs V follow Hensman et al. (2015), H eq. (17).
Statistics are accumulated in chunks so that N = 10⁶ rows never materialise
the full |Z| × N cross-covariance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from dpgp_audit._validation import as_finite_array
from dpgp_audit.gp.linalg import psd_cholesky

__all__ = [
    "QU",
    "gaussian_log_density",
    "predict_from_qu",
    "sufficient_statistics",
    "titsias_qu",
]

KernelFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class QU:
    """A Gaussian q(u) = N(m, S) on the inducing inputs."""

    m: np.ndarray
    S: np.ndarray


def sufficient_statistics(kernel: KernelFn, Z: np.ndarray, X: np.ndarray, y: np.ndarray, *,
                          weights: np.ndarray | None = None, chunk: int = 65536,
                          return_max_norm: bool = False
                          ) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, float]:
    """A = Σ_i w_i y_i k_i and B = Σ_i w_i k_i k_iᵀ with k_i = k(Z, x_i) (H eqs. 3, 37).

    Parameters
    ----------
    kernel
        ``kernel(P, Q) -> (len(P), len(Q))`` covariance.
    Z, X, y
        Inducing inputs (m, D), data inputs (n, D), targets (n,).
    weights
        Optional per-row weights w_i = σ_i⁻² (heteroscedastic noise, H App. D).
    chunk
        Rows per block (memory ≈ 8 · m · chunk bytes).
    return_max_norm
        Also return max_i ‖k_i‖₂ (used to check a sensitivity bound R_k on the data).
    """
    X = as_finite_array("X", X, ndim=2)
    y = as_finite_array("y", y, ndim=1)
    m = np.asarray(Z).shape[0]
    A = np.zeros(m)
    B = np.zeros((m, m))
    max_sq = 0.0
    for start in range(0, X.shape[0], chunk):
        sl = slice(start, start + chunk)
        Kzx = np.asarray(kernel(Z, X[sl]), dtype=float)
        if return_max_norm:
            max_sq = max(max_sq, float(np.max(np.einsum("ij,ij->j", Kzx, Kzx))))
        if weights is None:
            A += Kzx @ y[sl]
            B += Kzx @ Kzx.T
        else:
            w = np.asarray(weights[sl], dtype=float)
            A += Kzx @ (w * y[sl])
            B += (Kzx * w) @ Kzx.T
    B = 0.5 * (B + B.T)
    if return_max_norm:
        return A, B, float(np.sqrt(max_sq))
    return A, B


def titsias_qu(Kzz: np.ndarray, A: np.ndarray, B: np.ndarray, noise_var: float) -> QU:
    """The optimal q(u) of Titsias (2009) from exact statistics (H eq. 2).

    Computed as K_ZZ P⁻¹ (·) with P = K_ZZ + σ⁻² B via one Cholesky factor.
    """
    P = Kzz + B / noise_var
    L = psd_cholesky(0.5 * (P + P.T), name="K_ZZ + B/sigma^2")
    Sigma_Kzz = linalg.cho_solve((L, True), Kzz)
    m = Kzz @ linalg.cho_solve((L, True), A) / noise_var
    S = Kzz @ Sigma_Kzz
    return QU(m, 0.5 * (S + S.T))


def predict_from_qu(Kzz: np.ndarray, Kvz: np.ndarray, kvv: np.ndarray, qu: QU, *,
                    full_cov: bool = False, jitter: float = 1e-8) -> tuple[np.ndarray, np.ndarray]:
    """Predictive N(μ̂, Σ̂) of f at V from q(u) (H eq. 17; Hensman et al. 2015, eq. 21).

    μ̂ = K_VZ K_ZZ⁻¹ m,   Σ̂ = K_VV − K_VZ K_ZZ⁻¹ (K_ZZ − S) K_ZZ⁻¹ K_ZV,

    evaluated as (K_VV − Q_VV) + W S Wᵀ with W = K_VZ K_ZZ⁻¹, a sum of two PSD
    terms. ``kvv`` is the diagonal of K_VV (or the full matrix with
    ``full_cov=True``). ``jitter`` (relative to the mean diagonal of K_ZZ) guards
    the solve with K_ZZ.
    """
    m = Kzz.shape[0]
    scale = float(np.trace(Kzz)) / m
    L = psd_cholesky(Kzz, jitter=jitter * scale, name="K_ZZ")
    Linv_Kzv = linalg.solve_triangular(L, Kvz.T, lower=True)          # (m, v)
    W = linalg.solve_triangular(L, Linv_Kzv, lower=True, trans="T").T   # K_VZ K_ZZ^-1
    mean = W @ qu.m
    if full_cov:
        cov = kvv - Linv_Kzv.T @ Linv_Kzv + W @ qu.S @ W.T
        return mean, 0.5 * (cov + cov.T)
    var = kvv - np.sum(Linv_Kzv * Linv_Kzv, axis=0) + np.sum((W @ qu.S) * W, axis=1)
    return mean, np.maximum(var, 0.0)


def gaussian_log_density(y: np.ndarray, mean: np.ndarray, var: np.ndarray) -> np.ndarray:
    """Elementwise log N(y; mean, var) (H eq. 18, one term per validation point)."""
    return -0.5 * (np.log(2.0 * np.pi * var) + (y - mean) ** 2 / var)
