"""The norms in which sensitivity proofs are stated (catalogue P.4, P.5, A.4).

Each norm is a small frozen object that measures the difference of two
noise-free query outputs. A sensitivity proof bounds ``norm(q(D) − q(D′))`` over
all neighbours; the sensitivity checker (A.4) searches for the largest value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
from scipy import linalg

__all__ = ["L1", "L2", "Linf", "Mahalanobis", "Norm", "RKHS", "row_norms"]


@runtime_checkable
class Norm(Protocol):
    """Measures the size of a query difference."""

    name: str

    def __call__(self, diff: np.ndarray) -> float:
        """Size of the query difference ``diff``."""
        ...


@dataclass(frozen=True)
class L1:
    """Sum of absolute values (Laplace mechanism)."""

    name: str = "L1"

    def __call__(self, diff: np.ndarray) -> float:
        """Size of ``diff`` in this norm."""
        return float(np.sum(np.abs(np.ravel(diff))))


@dataclass(frozen=True)
class L2:
    """Euclidean norm (Gaussian mechanism)."""

    name: str = "L2"

    def __call__(self, diff: np.ndarray) -> float:
        """Size of ``diff`` in this norm."""
        return float(np.linalg.norm(np.ravel(diff)))


@dataclass(frozen=True)
class Linf:
    """Largest absolute entry (a common *wrong* shortcut for GP sensitivities)."""

    name: str = "Linf"

    def __call__(self, diff: np.ndarray) -> float:
        """Size of ``diff`` in this norm."""
        return float(np.max(np.abs(np.ravel(diff))))


@dataclass(frozen=True, eq=False)
class Mahalanobis:
    """sqrt(vᵀ M⁺ v) for a PSD matrix M, infinite when v leaves the range of M.

    The Gaussian mechanism with noise N(0, σ² M) has sensitivity in this norm
    (Hall et al. 2013, Prop. 3; S18 eqs. 6–7). A singular M is allowed; a
    difference with a component outside its range has infinite privacy loss.

    Parameters
    ----------
    M
        Symmetric PSD matrix.
    rtol
        Eigenvalues below ``rtol · λ_max`` count as zero.
    """

    M: np.ndarray
    rtol: float = 1e-10
    name: str = "Mahalanobis"
    _eig: tuple[np.ndarray, np.ndarray] = field(init=False, repr=False)
    _full: tuple[np.ndarray, np.ndarray] = field(init=False, repr=False)  # every eigenpair

    def __post_init__(self) -> None:
        M = np.asarray(self.M, dtype=float)
        if M.ndim != 2 or M.shape[0] != M.shape[1]:
            raise ValueError(f"M must be square, got shape {M.shape}")
        if not np.all(np.isfinite(M)):
            raise ValueError("M contains non-finite values")
        if not np.allclose(M, M.T, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(M).max())):
            raise ValueError("M must be symmetric")
        w, U = linalg.eigh(M)
        if w[0] < -1e-8 * max(w[-1], 0.0) - 1e-300:
            raise ValueError(f"M is not positive semi-definite (smallest eigenvalue {w[0]:.3g})")
        keep = w > self.rtol * max(w[-1], 0.0)
        object.__setattr__(self, "_eig", (w[keep], U[:, keep]))
        object.__setattr__(self, "_full", (w, U))

    @property
    def rank(self) -> int:
        """Numerical rank of M."""
        return int(self._eig[0].size)

    def out_of_range(self, diff: np.ndarray) -> np.ndarray:
        """The component of ``diff`` orthogonal to the range of M."""
        v = np.ravel(diff).astype(float)
        U = self._eig[1]
        return v - U @ (U.T @ v)

    def __call__(self, diff: np.ndarray) -> float:
        """Size of ``diff`` in this norm."""
        v = np.ravel(diff).astype(float)
        w, U = self._eig
        resid = self.out_of_range(v)
        if np.linalg.norm(resid) > 1e-9 * max(1.0, np.linalg.norm(v)):
            return float("inf")
        return float(np.sqrt(np.sum((U.T @ v) ** 2 / w)))

    def lower_bound(self, diff: np.ndarray) -> float:
        """A lower bound on the exact ``sqrt(vᵀ M⁻¹ v)`` that never reads rounding as infinity.

        :meth:`__call__` calls a component outside the kept range infinite. For an auditor
        that is too much: a kernel Gram matrix on a fine grid has eigenvalues below
        ``rtol · λ_max`` that are positive in exact arithmetic, and a function of bounded
        RKHS norm has components of size ``sqrt(λ)`` along them. Each dropped direction's
        exact eigenvalue is at most its computed one (clipped at 0) plus the eigensolver's
        error ``16 ε λ_max``, so its term ``(uᵀv)²/λ`` is at least ``(uᵀv)²`` over that:
        the sum is a lower bound for M itself. Only a direction whose eigenvalue is
        exactly zero as computed (a structural zero, e.g. a diagonal M) keeps the infinite
        value of :meth:`__call__` for a component above its tolerance.
        """
        v = np.ravel(diff).astype(float)
        w_all, U_all = self._full
        top = max(float(w_all[-1]), 0.0)
        err = 16 * np.finfo(float).eps * top
        c = U_all.T @ v
        kept = w_all > self.rtol * top
        zero = (w_all == 0.0) & (np.abs(c) > 1e-9 * max(1.0, float(np.linalg.norm(v))))
        if np.any(zero):
            return float("inf")
        if err <= 0.0:  # M = 0: every non-zero change is unbounded
            return float("inf") if np.any(c != 0.0) else 0.0
        denom = np.where(kept, w_all, np.maximum(w_all, 0.0) + err)
        return float(np.sqrt(np.sum(c * c / denom)))


@dataclass(frozen=True, eq=False)
class RKHS:
    """RKHS norm of f = Σ β_i k(·, x_i): sqrt(βᵀ K β) with K the Gram matrix.

    The query's output is the coefficient vector β; the Gram matrix of the
    (public) centres is fixed at construction (S18 §2; R Def. 3.3).
    """

    gram: np.ndarray
    name: str = "RKHS"

    def __call__(self, diff: np.ndarray) -> float:
        """Size of ``diff`` in this norm."""
        beta = np.ravel(diff).astype(float)
        q = float(beta @ np.asarray(self.gram) @ beta)
        return float(np.sqrt(max(q, 0.0)))


def row_norms(norm: Norm, diffs: np.ndarray) -> np.ndarray | None:
    """``[norm(d) for d in diffs]`` in one pass where it is the same arithmetic, else ``None``.

    ``diffs`` holds one query difference per row (shape (m, k), floats). The values are
    exactly those of calling ``norm`` on each row (issue 20 §2: a query-edge scan measures
    thousands of them): :class:`Linf` for any k (a maximum of absolute values is exact in
    any order); :class:`L1` and :class:`L2` for scalar queries (k = 1), where the sum of one
    absolute value is that value and the Euclidean norm is ``sqrt(d·d)`` of one product.
    Any other norm or shape: ``None`` (call the norm row by row).
    """
    D = np.asarray(diffs)
    if D.ndim != 2 or D.dtype != np.float64 or D.shape[1] == 0:
        return None
    kind = type(norm)
    if kind is Linf:
        return np.abs(D).max(axis=1)
    if D.shape[1] != 1:
        return None
    if kind is L1:
        return np.abs(D[:, 0])
    if kind is L2:
        d = D[:, 0]
        return np.sqrt(d * d)
    return None
