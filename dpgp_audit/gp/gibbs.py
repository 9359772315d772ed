"""Non-stationary Gibbs kernel with density-driven lengthscales (catalogue S21.1).

The Gibbs (1998) covariance, in the multi-input form of S21 eq. (8), lets the
lengthscale vary with the input:

    k(x, x') = σ² Π_l [2 r_l(x) r_l(x') / (r_l(x)² + r_l(x')²)]^{1/2}
               · exp(− Σ_l (x_l − x'_l)² / (r_l(x)² + r_l(x')²)).

It is positive semi-definite for *any* positive lengthscale function r (it is
the limit of a sum of products of basis functions, S21 §3.1), and with a
constant r it is the EQ kernel with lengthscale r.

S21 §3.1 chooses r from the density of the **public** training inputs:
``r(x) = [1/m + ρ(x)/n]⁻¹`` where ρ is a kernel density estimate (EQ window),
n the number of points wanted within about one lengthscale and m an upper
bound on the lengthscale. §6.1 then uses the smallest density in a
neighbourhood of x instead of ρ(x) itself, so that dense edge regions next to
outliers also get long lengthscales (:class:`DensityLengthscale` with
``neighbourhood``).

Only public inputs enter the lengthscale, so the kernel spends no privacy; a
lengthscale built from targets would (never pass y here).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dpgp_audit.gp.kernels import (
    Kernel,
    _positive,
    _positive_vector,
    as_inputs,
    register_kernel_example,
)

__all__ = [
    "ConstantLengthscale",
    "DensityLengthscale",
    "Gibbs",
    "LengthscaleFunction",
    "density_lengthscale",
    "kde_count_density",
]


class LengthscaleFunction:
    """A positive lengthscale field ``r(X) -> (n, D)`` (base class; public inputs only)."""

    def __call__(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        """Lengthscales at the rows of X, shape (n, D) (or (n,) for one shared value)."""
        raise TypeError(f"{type(self).__name__} must implement __call__")


@dataclass(frozen=True, eq=False)
class ConstantLengthscale(LengthscaleFunction):
    """``r(x) = value`` everywhere (the Gibbs kernel then equals EQ(value))."""

    value: float | np.ndarray = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", _positive_vector("value", self.value))

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """Lengthscales (n, D)."""
        X = as_inputs("X", X)
        return np.broadcast_to(np.asarray(self.value, dtype=float), X.shape).copy()


def kde_count_density(X_public: object, X: object, bandwidth: float | np.ndarray) -> np.ndarray:
    """Per-axis count density of the public inputs at ``X`` (S21 §3.1's ρ), shape (n, D).

    ``w(x) = Σ_i exp(−½ Σ_l (x_l − x_il)² / h_l²)`` is the EQ-window number of
    neighbours of x; ``ρ_l(x) = w(x) / (sqrt(2π) h_l)`` is neighbours per unit
    length along axis l. In one dimension this is exactly N times the Gaussian
    KDE density (points per unit length), the ρ of S21 §3.1.
    """
    Xp = as_inputs("X_public", X_public)
    Xa = as_inputs("X", X)
    if Xa.shape[1] != Xp.shape[1]:
        raise ValueError(f"X has D = {Xa.shape[1]} but X_public has D = {Xp.shape[1]}")
    h = np.broadcast_to(np.asarray(_positive_vector("bandwidth", bandwidth), dtype=float),
                        (Xp.shape[1],))
    diff = (Xa[:, None, :] - Xp[None, :, :]) / h
    w = np.exp(-0.5 * np.einsum("ijk,ijk->ij", diff, diff)).sum(axis=1)
    return w[:, None] / (np.sqrt(2.0 * np.pi) * h[None, :])


def density_lengthscale(rho: np.ndarray, m: float | np.ndarray, n_per: float) -> np.ndarray:
    """``r = [1/m + ρ/n]⁻¹`` (S21 §3.1): long (≤ m) where the inputs are sparse."""
    m_arr = np.asarray(m, dtype=float)
    return 1.0 / (1.0 / m_arr + np.asarray(rho, dtype=float) / float(n_per))


@dataclass(frozen=True, eq=False)
class DensityLengthscale(LengthscaleFunction):
    """The density-driven lengthscale of S21 §3.1 (and the §6.1 neighbourhood-minimum variant).

    Parameters
    ----------
    X_public
        The public training inputs whose density sets the lengthscale (never y).
    bandwidth
        KDE bandwidth h (scalar or per axis).
    m
        Upper bound on the lengthscale (scalar or per axis).
    n_per
        n: the number of points wanted within about one lengthscale.
    neighbourhood
        ``None`` (S21 §3.1: ρ at x) or a radius (scalar or per axis): ρ is replaced by
        its smallest value over a ``probes``-per-axis grid in the box of that radius
        around x (S21 §6.1).
    probes
        Grid points per axis for the neighbourhood minimum (odd, so x itself is probed).
    """

    X_public: np.ndarray
    bandwidth: float | np.ndarray
    m: float | np.ndarray
    n_per: float
    neighbourhood: float | np.ndarray | None = None
    probes: int = 9
    _offsets: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        Xp = as_inputs("X_public", self.X_public).copy()
        if Xp.shape[0] == 0:
            raise ValueError("X_public must hold at least one input")
        Xp.setflags(write=False)
        object.__setattr__(self, "X_public", Xp)
        object.__setattr__(self, "bandwidth", _positive_vector("bandwidth", self.bandwidth))
        object.__setattr__(self, "m", _positive_vector("m", self.m))
        object.__setattr__(self, "n_per", _positive("n_per", self.n_per))
        D = Xp.shape[1]
        if isinstance(self.probes, bool) or int(self.probes) < 1 or int(self.probes) % 2 == 0:
            raise ValueError(f"probes must be a positive odd integer, got {self.probes!r}")
        offsets = np.zeros((1, D))
        if self.neighbourhood is not None:
            rad = np.broadcast_to(np.asarray(_positive_vector("neighbourhood",
                                                              self.neighbourhood)), (D,))
            grids = [np.linspace(-r, r, int(self.probes)) for r in rad]
            mesh = np.meshgrid(*grids, indexing="ij")
            offsets = np.column_stack([g.ravel() for g in mesh])
        offsets.setflags(write=False)
        object.__setattr__(self, "_offsets", offsets)

    def density(self, X: object) -> np.ndarray:
        """ρ(x) (or its neighbourhood minimum), shape (n, D)."""
        Xa = as_inputs("X", X)
        if Xa.shape[1] != self.X_public.shape[1]:
            raise ValueError(f"X has D = {Xa.shape[1]} but X_public has "
                             f"D = {self.X_public.shape[1]}")
        probes = (Xa[:, None, :] + self._offsets[None, :, :]).reshape(-1, Xa.shape[1])
        rho = kde_count_density(self.X_public, probes, self.bandwidth)
        return rho.reshape(Xa.shape[0], self._offsets.shape[0], -1).min(axis=1)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """Lengthscales r(x), shape (n, D)."""
        return density_lengthscale(self.density(X), self.m, self.n_per)


@dataclass(frozen=True, eq=False)
class Gibbs(Kernel):
    """The Gibbs non-stationary kernel, S21 eq. (8).

    Parameters
    ----------
    lengthscale
        A :class:`LengthscaleFunction` (a function of public inputs only), or a positive
        scalar / per-axis array for a constant lengthscale.
    variance
        σ² (θ₁ in eq. 8).
    """

    lengthscale: LengthscaleFunction | float | np.ndarray = 1.0
    variance: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.lengthscale, LengthscaleFunction):
            object.__setattr__(self, "lengthscale", ConstantLengthscale(self.lengthscale))
        object.__setattr__(self, "variance", _positive("variance", self.variance))

    def _r(self, X: np.ndarray) -> np.ndarray:
        r = np.asarray(self.lengthscale(X), dtype=float)
        if r.ndim == 1:
            r = r[:, None]
        r = np.broadcast_to(r, X.shape)
        if not np.all(np.isfinite(r)) or np.any(r <= 0):
            raise ValueError("the lengthscale function returned non-positive or non-finite "
                             "values")
        return r

    def _K(self, X: np.ndarray, Y: np.ndarray | None) -> np.ndarray:
        rx = self._r(X)
        Z = X if Y is None else Y
        rz = rx if Y is None else self._r(Y)
        log_k = np.zeros((X.shape[0], Z.shape[0]))
        for d in range(X.shape[1]):  # one (n, m) slab per axis
            s = rx[:, d, None] ** 2 + rz[None, :, d] ** 2
            log_k += 0.5 * np.log(2.0 * rx[:, d, None] * rz[None, :, d] / s)
            log_k -= (X[:, d, None] - Z[None, :, d]) ** 2 / s
        K = self.variance * np.exp(log_k)
        if Y is None:
            K = 0.5 * (K + K.T)
            np.fill_diagonal(K, self.variance)
        return K

    def _diag(self, X: np.ndarray) -> np.ndarray:
        self._r(X)
        return np.full(X.shape[0], self.variance)


def _example_density_1d() -> Gibbs:
    anchors = np.concatenate([np.linspace(-3.0, 0.0, 25), [1.5, 2.8]])[:, None]
    return Gibbs(DensityLengthscale(anchors, bandwidth=0.5, m=3.0, n_per=4.0), variance=1.2)


def _example_density_2d() -> Gibbs:
    g = np.linspace(-2.0, 1.0, 5)
    anchors = np.array([[a, b] for a in g for b in g] + [[2.5, 2.5]])
    return Gibbs(DensityLengthscale(anchors, bandwidth=[0.6, 0.4], m=[2.0, 3.0], n_per=3.0,
                                    neighbourhood=[0.5, 0.5], probes=3), variance=0.7)


register_kernel_example(Gibbs(0.8, variance=1.1), name="Gibbs-constant")
register_kernel_example(_example_density_1d(), name="Gibbs-density")
register_kernel_example(_example_density_2d(), input_dim=2, name="Gibbs-density-neighbourhood-2d")
