"""Shared dense linear algebra for Gaussian processes.

Functions take *factors* (lower Cholesky factors) rather than matrices where
possible, so that a factorisation is computed once and reused (fit once,
predict / sample / audit many times).

The low-rank-plus-diagonal helpers serve the sparse approximations (SoR,
FITC, Titsias' q(u)): with ``V = L_uu⁻¹ K_uf`` (m × n) the approximate
covariance is ``Q_ff + diag(d) = Vᵀ V + diag(d)``, and the Woodbury identity
reduces its solve and log-determinant to an m × m Cholesky factor
(R&W §8.3.3; Titsias 2009).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve, solve_triangular

__all__ = [
    "FactoredMatrix",
    "LowRankPlusDiag",
    "check_psd_matrix",
    "cho_solve_lower",
    "logdet_from_cholesky",
    "low_rank_plus_diag",
    "mvn_logpdf_from_cholesky",
    "psd_cholesky",
    "solve_lower",
    "woodbury_logdet",
    "woodbury_solve",
]

_SYM_RTOL = 1e-10


def _square_finite(name: str, K: object) -> np.ndarray:
    A = np.asarray(K, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be a square 2-D matrix, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        bad = int(A.size - np.count_nonzero(np.isfinite(A)))
        raise ValueError(f"{name} contains {bad} non-finite value(s) (NaN or inf)")
    return A


def check_psd_matrix(K: object, *, name: str = "K") -> np.ndarray:
    """Validate a square, finite, symmetric matrix and return its symmetrised copy.

    Symmetry is checked to a relative tolerance of 1e-10 of the largest entry.
    (Positive definiteness is checked by :func:`psd_cholesky`.)
    """
    A = _square_finite(name, K)
    scale = float(np.max(np.abs(A))) if A.size else 0.0
    asym = float(np.max(np.abs(A - A.T))) if A.size else 0.0
    if asym > _SYM_RTOL * max(scale, np.finfo(float).tiny):
        raise ValueError(
            f"{name} is not symmetric: max |{name} - {name}.T| = {asym:.3g} "
            f"(largest entry {scale:.3g})")
    return 0.5 * (A + A.T)


def psd_cholesky(K: object, *, jitter: float = 0.0, name: str = "K") -> np.ndarray:
    """Lower Cholesky factor L with ``L Lᵀ = K + jitter · I``.

    Parameters
    ----------
    K
        Square, finite, symmetric matrix (checked; symmetrised before factorising).
    jitter
        Non-negative value added to the diagonal (0 by default: never silently).
    name
        Name used in error messages.

    Raises
    ------
    ValueError
        For a non-square, non-finite or non-symmetric matrix, a negative or
        non-finite jitter, or when ``K + jitter · I`` is not numerically positive
        definite (the message gives the smallest eigenvalue and suggests a jitter).
    """
    jitter = float(jitter)
    if not np.isfinite(jitter) or jitter < 0:
        raise ValueError(f"jitter must be a finite non-negative number, got {jitter!r}")
    A = check_psd_matrix(K, name=name)
    n = A.shape[0]
    if jitter:
        A = A + jitter * np.eye(n)
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        L = None
    if L is None or not np.all(np.diag(L) > 0) or not np.all(np.isfinite(L)):
        eig = np.linalg.eigvalsh(A)
        lam_min, lam_max = float(eig[0]), float(eig[-1])
        suggest = max(abs(lam_min), 1e-10 * max(abs(lam_max), 1.0)) * 10.0
        raise ValueError(
            f"{name}{' + jitter*I' if jitter else ''} (n={n}) is not positive definite: "
            f"smallest eigenvalue {lam_min:.3g} (largest {lam_max:.3g}). "
            f"Add noise or pass jitter (e.g. jitter={suggest:.1g}); for a GP, check for "
            "duplicate inputs or use a positive noise variance.")
    return L


def solve_lower(L: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``L⁻¹ B`` for lower-triangular L (one triangular solve)."""
    return solve_triangular(L, B, lower=True, check_finite=False)


def cho_solve_lower(L: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``(L Lᵀ)⁻¹ B`` from a lower Cholesky factor L (two triangular solves)."""
    return cho_solve((L, True), B, check_finite=False)


def logdet_from_cholesky(L: np.ndarray) -> float:
    """``log det(L Lᵀ) = 2 Σ log L_ii``."""
    return float(2.0 * np.sum(np.log(np.diag(L))))


def mvn_logpdf_from_cholesky(r: np.ndarray, L: np.ndarray) -> float:
    """``log N(r; 0, L Lᵀ)`` for a residual vector r (R&W eq. 2.30 / Alg. 2.1 line 7)."""
    r = np.asarray(r, dtype=float)
    v = solve_lower(L, r)
    n = r.shape[0]
    return float(-0.5 * v @ v - 0.5 * logdet_from_cholesky(L) - 0.5 * n * np.log(2.0 * np.pi))


# --------------------------------------------------------------------------- low rank + diag
@dataclass(frozen=True, eq=False)
class LowRankPlusDiag:
    """Factorisation of ``A = Vᵀ V + diag(d)`` (V: m × n, d > 0: n) via Woodbury.

    ``B = I_m + V diag(d)⁻¹ Vᵀ = L_B L_Bᵀ``; then
    ``A⁻¹ = D⁻¹ − D⁻¹ Vᵀ B⁻¹ V D⁻¹`` and ``log det A = log det B + Σ log d``.
    Costs O(n m²) instead of O(n³).
    """

    V: np.ndarray
    d: np.ndarray
    L_B: np.ndarray

    def solve(self, R: np.ndarray) -> np.ndarray:
        """``A⁻¹ R`` for R of shape (n,) or (n, k)."""
        R = np.asarray(R, dtype=float)
        dinv = 1.0 / self.d if R.ndim == 1 else (1.0 / self.d)[:, None]
        DR = dinv * R
        return DR - dinv * (self.V.T @ cho_solve_lower(self.L_B, self.V @ DR))

    def logdet(self) -> float:
        """``log det A``."""
        return logdet_from_cholesky(self.L_B) + float(np.sum(np.log(self.d)))

    def quad(self, r: np.ndarray) -> float:
        """``rᵀ A⁻¹ r``."""
        r = np.asarray(r, dtype=float)
        return float(r @ self.solve(r))

    def logpdf(self, r: np.ndarray) -> float:
        """``log N(r; 0, A)``."""
        n = self.d.shape[0]
        return -0.5 * self.quad(r) - 0.5 * self.logdet() - 0.5 * n * np.log(2.0 * np.pi)

    def dense(self) -> np.ndarray:
        """The dense matrix A (for tests and small problems)."""
        return self.V.T @ self.V + np.diag(self.d)


def low_rank_plus_diag(V: object, d: object) -> LowRankPlusDiag:
    """Factorise ``Vᵀ V + diag(d)`` (V: m × n, d: n positive or a positive scalar)."""
    Va = np.asarray(V, dtype=float)
    if Va.ndim != 2:
        raise ValueError(f"V must be a 2-D (m, n) matrix, got shape {Va.shape}")
    if not np.all(np.isfinite(Va)):
        raise ValueError("V contains non-finite value(s) (NaN or inf)")
    da = np.broadcast_to(np.asarray(d, dtype=float), (Va.shape[1],)).copy()
    if not np.all(np.isfinite(da)) or np.any(da <= 0):
        raise ValueError("d (the diagonal) must be finite and strictly positive")
    W = Va / np.sqrt(da)
    B = np.eye(Va.shape[0]) + W @ W.T
    return LowRankPlusDiag(Va, da, psd_cholesky(B, name="I + V D^-1 V^T"))


def woodbury_solve(V: object, d: object, R: object) -> np.ndarray:
    """``(Vᵀ V + diag(d))⁻¹ R`` via the Woodbury identity."""
    return low_rank_plus_diag(V, d).solve(np.asarray(R, dtype=float))


def woodbury_logdet(V: object, d: object) -> float:
    """``log det(Vᵀ V + diag(d))`` via the matrix determinant lemma."""
    return low_rank_plus_diag(V, d).logdet()


# --------------------------------------------------------------------------- low-rank product
@dataclass(frozen=True, eq=False)
class FactoredMatrix:
    """A k × n matrix kept as its factors, ``C = F G`` (F: k × m, G: m × n, m ≪ n).

    Sparse GPs produce their linear maps in this form (S21 eq. 9: the FITC cloaking matrix
    is ``k_*Z Q_ZZ⁻¹ · K_Zf (Λ + σ² I)⁻¹``); keeping the factors lets the cloaking solver
    work in O(n m²) time and O(n m) memory and never form a k × n (or n × n) array.

    ``C @ x`` and ``A @ C`` are evaluated through the factors; ``np.asarray(C)`` or
    :meth:`dense` form the product (small problems and tests only).
    """

    F: np.ndarray
    G: np.ndarray

    __array_ufunc__ = None  # make ``ndarray @ FactoredMatrix`` defer to __rmatmul__

    def __post_init__(self) -> None:
        for name in ("F", "G"):
            arr = np.array(getattr(self, name), dtype=float)
            if arr.ndim != 2:
                raise ValueError(f"{name} must be a 2-D matrix, got shape {arr.shape}")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} contains non-finite value(s) (NaN or inf)")
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        if self.F.shape[1] != self.G.shape[0]:
            raise ValueError(f"inner dimensions differ: F is {self.F.shape}, G is {self.G.shape}")

    @property
    def shape(self) -> tuple[int, int]:
        """``(k, n)``."""
        return (int(self.F.shape[0]), int(self.G.shape[1]))

    @property
    def ndim(self) -> int:
        """Always 2."""
        return 2

    def __matmul__(self, other: np.ndarray) -> np.ndarray:
        return self.F @ (self.G @ np.asarray(other, dtype=float))

    def __rmatmul__(self, other: np.ndarray) -> np.ndarray:
        return (np.asarray(other, dtype=float) @ self.F) @ self.G

    def dense(self) -> np.ndarray:
        """The k × n product (memory k·n: small problems only)."""
        return self.F @ self.G

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        out = self.dense()
        return out if dtype is None else out.astype(dtype)

    def column_norms(self) -> np.ndarray:
        """``‖c_i‖`` for every column, via the m × m Gram matrix ``FᵀF`` (O(n m²))."""
        gram = self.F.T @ self.F
        return np.sqrt(np.maximum(np.einsum("ij,ij->j", self.G, gram @ self.G), 0.0))
