"""GP noise on a regular D-dimensional grid (catalogue R.3; R App. B, Alg. 4).

A product kernel ``k(z, z') = Π_d k_d(z_d, z'_d)`` evaluated on a Cartesian grid
has a Kronecker-structured covariance ``K = K_1 ⊗ … ⊗ K_D`` (R eq. 45). If
``L_d L_dᵀ = K_d`` then ``(L_1 ⊗ … ⊗ L_D)`` is a square root of ``K``, and applying
it to a grid of i.i.d. standard normals is ``D`` batched products, one per axis
(R eq. 46, 48). Cost: ``O(Σ N_d³)`` to factorise and ``O(Σ_d N_d · Π N)`` per
sample, against ``O(Π N_d³)`` and ``O(Π N_d²)`` for the naive full Cholesky of
``K``, which :class:`NaiveGridSampler` implements for comparison.

Numerical square roots need a little jitter on ill-conditioned factors (an EQ
kernel on a fine grid). The jitter is *added* to every factor, so the implied
covariance ``⊗(K_d + j_d I)`` dominates ``⊗ K_d`` in the Loewner order: the
sampled noise is never smaller than the noise the privacy proof asks for.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import reduce
from typing import Literal

import numpy as np
from scipy import linalg

from dpgp_audit._validation import as_finite_array, check_positive_int, check_rng

__all__ = [
    "FactorKernel",
    "Grid",
    "KroneckerGridSampler",
    "NaiveGridSampler",
    "product_kernel_matrix",
]

FactorKernel = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""A one-dimensional kernel: ``k(a, b)`` with ``a`` (n, 1), ``b`` (m, 1) → (n, m)."""

_DENSE_LIMIT = 8192  # largest grid whose dense covariance we are willing to build


@dataclass(frozen=True)
class Grid:
    """The grid ``x_{n_1…n_D} = (u_1 + (n_1 − 1)γ_1, …, u_D + (n_D − 1)γ_D)`` of R eq. (43).

    Parameters
    ----------
    starts
        ``u_d``, the first coordinate along each axis.
    spacings
        ``γ_d > 0``.
    counts
        ``N_d ≥ 1`` points along each axis.

    Notes
    -----
    A grid used by a private mechanism must be public: build it from fixed
    numbers (a window and a resolution), never from the private inputs.
    """

    starts: tuple[float, ...]
    spacings: tuple[float, ...]
    counts: tuple[int, ...]

    def __post_init__(self) -> None:
        starts = tuple(float(v) for v in np.atleast_1d(self.starts))
        spacings = tuple(float(v) for v in np.atleast_1d(self.spacings))
        raw = np.atleast_1d(self.counts)
        if not np.all(np.isfinite(raw.astype(float))) or np.any(raw.astype(float) % 1 != 0):
            raise ValueError(f"counts must be positive integers, got {self.counts!r}")
        counts = tuple(check_positive_int("counts", int(v)) for v in raw)
        if not (len(starts) == len(spacings) == len(counts)) or not starts:
            raise ValueError("starts, spacings and counts must have the same (non-zero) length")
        if not all(math.isfinite(u) for u in starts):
            raise ValueError(f"starts must be finite, got {starts}")
        if not all(math.isfinite(g) and g > 0 for g in spacings):
            raise ValueError(f"spacings must be finite and > 0, got {spacings}")
        object.__setattr__(self, "starts", starts)
        object.__setattr__(self, "spacings", spacings)
        object.__setattr__(self, "counts", counts)

    @classmethod
    def from_window(cls, lower: Sequence[float] | float, upper: Sequence[float] | float,
                    points_per_unit: float) -> Grid:
        """A grid covering ``[lower, upper]`` per axis with at least ``points_per_unit`` density.

        Both ends are grid points; the spacing is the window width divided by
        ``ceil(width · points_per_unit)``.
        """
        lo = np.atleast_1d(as_finite_array("lower", lower))
        hi = np.atleast_1d(as_finite_array("upper", upper))
        if lo.shape != hi.shape or lo.ndim != 1:
            raise ValueError("lower and upper must have the same length")
        if np.any(hi <= lo):
            raise ValueError(f"upper must exceed lower on every axis, got {lo} and {hi}")
        ppu = float(points_per_unit)
        if not (math.isfinite(ppu) and ppu > 0):
            raise ValueError(f"points_per_unit must be finite and > 0, got {points_per_unit!r}")
        intervals = np.maximum(np.ceil((hi - lo) * ppu - 1e-9), 1).astype(int)
        return cls(tuple(lo), tuple((hi - lo) / intervals), tuple(intervals + 1))

    @property
    def dim(self) -> int:
        """Number of axes D."""
        return len(self.counts)

    @property
    def shape(self) -> tuple[int, ...]:
        """``(N_1, …, N_D)``."""
        return self.counts

    @property
    def size(self) -> int:
        """Total number of grid points ``Π N_d``."""
        return int(np.prod(self.counts))

    def axes(self) -> list[np.ndarray]:
        """The coordinates along each axis, ``[u_d + γ_d · arange(N_d)]``."""
        return [u + g * np.arange(n) for u, g, n in zip(self.starts, self.spacings, self.counts,
                                                        strict=True)]

    def points(self) -> np.ndarray:
        """All grid points, shape ``(size, D)``, in C order (last axis fastest)."""
        mesh = np.meshgrid(*self.axes(), indexing="ij")
        return np.stack([m.ravel() for m in mesh], axis=1)


def product_kernel_matrix(factors: Sequence[FactorKernel], X: np.ndarray,
                          Y: np.ndarray | None = None) -> np.ndarray:
    """The product kernel ``Π_d k_d(X[:, d], Y[:, d])`` as a dense matrix (R eq. 44)."""
    X = as_finite_array("X", X, ndim=2)
    Y = X if Y is None else as_finite_array("Y", Y, ndim=2)
    if len(factors) != X.shape[1] or X.shape[1] != Y.shape[1]:
        raise ValueError(f"need one factor per input dimension: {len(factors)} factors, "
                         f"X has {X.shape[1]} columns, Y has {Y.shape[1]}")
    out = np.ones((X.shape[0], Y.shape[0]))
    for d, k in enumerate(factors):
        out *= np.asarray(k(X[:, d:d + 1], Y[:, d:d + 1]), dtype=float)
    return out


def _check_factors(grid: Grid, factors: Sequence[FactorKernel] | FactorKernel
                   ) -> tuple[FactorKernel, ...]:
    if callable(factors):
        return (factors,) * grid.dim
    factors = tuple(factors)
    if len(factors) != grid.dim:
        raise ValueError(f"need {grid.dim} kernel factors (one per grid axis), got {len(factors)}")
    if not all(callable(k) for k in factors):
        raise ValueError("every kernel factor must be callable as k(a, b)")
    return factors


def _psd_root(K: np.ndarray, jitter: float, method: str, axis: int) -> np.ndarray:
    """A root ``R`` with ``R Rᵀ = K + j·max(diag K)·I`` (eigh: negative eigenvalues floored)."""
    if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(K).max())):
        raise ValueError(f"kernel factor {axis} is not symmetric on the grid")
    scale = float(np.max(np.diag(K)))
    if not scale > 0:
        raise ValueError(f"kernel factor {axis} has a non-positive diagonal on the grid")
    n = K.shape[0]
    if method == "cholesky":
        try:
            return linalg.cholesky(K + jitter * scale * np.eye(n), lower=True, check_finite=True)
        except linalg.LinAlgError:
            raise ValueError(
                f"kernel factor {axis} is not positive definite on the grid with jitter={jitter:g} "
                "(relative); increase jitter or use method='eigh'") from None
    w, U = linalg.eigh(K)
    if w[0] < -1e-8 * max(w[-1], 0.0):
        raise ValueError(f"kernel factor {axis} is not positive semi-definite on the grid "
                         f"(smallest eigenvalue {w[0]:.3g})")
    return U * np.sqrt(np.maximum(w, 0.0) + jitter * scale)


def _matmul_along(A: np.ndarray, f: np.ndarray, axis: int) -> np.ndarray:
    """R eq. (48): contract ``A`` with ``f`` along ``axis``, batching over every other axis."""
    moved = np.moveaxis(f, axis, -1)
    return np.moveaxis(moved @ A.T, -1, axis)


@dataclass(frozen=True, eq=False)
class KroneckerGridSampler:
    """R Alg. 4: GP noise on a grid from per-axis square roots (catalogue R.3).

    Parameters
    ----------
    grid
        The (public) grid.
    factors
        One-dimensional kernels ``k_d`` (one per axis, or a single one for all).
    jitter
        Relative jitter added to each factor's diagonal (times its largest
        diagonal entry); only ever adds noise.
    method
        ``"cholesky"`` (R Alg. 4) or ``"eigh"`` (symmetric square root with
        negative round-off eigenvalues floored at zero; robust for very
        ill-conditioned factors).

    Notes
    -----
    The factorisation is computed once at construction; :meth:`sample` only
    draws normals and applies ``D`` batched matrix products.
    """

    grid: Grid
    factors: Sequence[FactorKernel] | FactorKernel
    jitter: float = 1e-10
    method: Literal["cholesky", "eigh"] = "cholesky"
    roots: tuple[np.ndarray, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.method not in ("cholesky", "eigh"):
            raise ValueError(f"method must be 'cholesky' or 'eigh', got {self.method!r}")
        jitter = float(self.jitter)
        if not (math.isfinite(jitter) and jitter >= 0):
            raise ValueError(f"jitter must be finite and >= 0, got {self.jitter!r}")
        factors = _check_factors(self.grid, self.factors)
        roots = []
        for d, (k, axis) in enumerate(zip(factors, self.grid.axes(), strict=True)):
            K = np.asarray(k(axis[:, None], axis[:, None]), dtype=float)
            if K.shape != (axis.size, axis.size) or not np.all(np.isfinite(K)):
                raise ValueError(f"kernel factor {d} returned a bad matrix on the grid")
            roots.append(_psd_root(K, jitter, self.method, d))
        for R in roots:
            R.setflags(write=False)
        object.__setattr__(self, "factors", factors)
        object.__setattr__(self, "roots", tuple(roots))

    def apply(self, z: np.ndarray) -> np.ndarray:
        """Map standard normals ``z`` of shape ``(..., N_1, …, N_D)`` to GP noise (R eq. 46)."""
        z = np.asarray(z, dtype=float)
        D = self.grid.dim
        if z.shape[-D:] != self.grid.shape:
            raise ValueError(f"z must end in the grid shape {self.grid.shape}, got {z.shape}")
        lead = z.ndim - D
        for d, R in enumerate(self.roots):
            z = _matmul_along(R, z, lead + d)
        return z

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` independent GP noise draws on the grid, shape ``(n, N_1, …, N_D)``."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        return self.apply(rng.standard_normal((n, *self.grid.shape)))

    def factor_covariances(self) -> tuple[np.ndarray, ...]:
        """The implied per-axis covariances ``R_d R_dᵀ`` (``K_d`` plus the jitter)."""
        return tuple(R @ R.T for R in self.roots)

    def covariance(self) -> np.ndarray:
        """The implied dense covariance ``⊗_d R_d R_dᵀ`` of a flattened (C-order) sample."""
        if self.grid.size > _DENSE_LIMIT:
            raise ValueError(f"grid has {self.grid.size} points; the dense covariance is limited "
                             f"to {_DENSE_LIMIT}")
        return reduce(np.kron, self.factor_covariances())


@dataclass(frozen=True, eq=False)
class NaiveGridSampler:
    """The naive baseline: Cholesky of the full ``Π N_d × Π N_d`` grid covariance.

    Parameters
    ----------
    grid
        The grid.
    factors
        The product kernel's one-dimensional factors (as for :class:`KroneckerGridSampler`).
    jitter
        Relative jitter on the diagonal of the full covariance.
    """

    grid: Grid
    factors: Sequence[FactorKernel] | FactorKernel
    jitter: float = 1e-10
    chol: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.grid.size > _DENSE_LIMIT:
            raise ValueError(f"grid has {self.grid.size} points; the naive sampler is limited to "
                             f"{_DENSE_LIMIT}")
        factors = _check_factors(self.grid, self.factors)
        K = product_kernel_matrix(factors, self.grid.points())
        object.__setattr__(self, "factors", factors)
        object.__setattr__(self, "chol", _psd_root(K, float(self.jitter), "cholesky", -1))

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` draws, shape ``(n, N_1, …, N_D)``."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        z = rng.standard_normal((self.grid.size, n))
        return (self.chol @ z).T.reshape((n, *self.grid.shape))
