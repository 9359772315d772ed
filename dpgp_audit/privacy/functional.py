"""The functional mechanism: release a function plus a scaled GP sample path (catalogue P.5).

Hall et al. (2013); S18 eqs. (1)–(2); R Def. 3.3, App. A.2, Thms 3.3 and 4.1.
For a family of functions f_D in the RKHS H of a kernel k with
RKHS sensitivity Δ ≥ sup_{D∼D′} ‖f_D − f_D′‖_H, the mechanism releases

    M(D) = f_D + c g,   g ~ GP(0, k),

evaluated at any finite set of points. At points x_1..x_m the noise is
N(0, c² K) with K_ij = k(x_i, x_j), and for every finite set of points the
Mahalanobis change ‖K^{-1/2}(f_D − f_D′)(x)‖ is at most the RKHS distance
(R Lemma A.2), so the release is a Gaussian mechanism with sensitivity Δ/c in
units of the noise. The multiplier c is

* ``"gdp"`` (R Thm 4.1): c = Δ/μ(ε, δ) — the mechanism is exactly μ-GDP, valid
  for every ε (``"analytic"`` is an alias: the same σ by Balle & Wang's route);
* ``"hall"`` (R Thm 3.3; S18 eq. 2): c = Δ sqrt(2 ln(2/δ)) / ε, proven for ε ≤ 1;
* ``"classical"``: c = Δ sqrt(2 ln(1.25/δ)) / ε, proven for ε ≤ 1;
* ``"rdp"``: the RDP route (Jiang et al. 2023 as compared in R Fig. 4; R App. A.6
  eq. 40), valid for every ε but looser than ``"gdp"``.

The range checks are those of :func:`dpgp_audit.privacy.calibrate.calibrate_gaussian`.

:class:`GPPathSampler` evaluates a GP sample path at fixed points. It needs only a
callable ``kernel(X, Y) -> Gram matrix`` and caches the factor of the Gram matrix,
computed by an eigendecomposition so that PSD-singular Gram matrices (repeated or
very close points) are handled.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dpgp_audit._validation import (
    as_finite_array,
    check_delta,
    check_epsilon,
    check_positive_float,
    check_positive_int,
    check_rng,
)
from dpgp_audit.privacy.calibrate import (
    GaussianCalibration,
    calibrate_gaussian,
    check_sensitivity,
)
from dpgp_audit.privacy.conversions import rdp_gaussian_sigma
from dpgp_audit.privacy.multivariate import covariance_factor

__all__ = [
    "FUNCTIONAL_METHODS",
    "GPPathSampler",
    "functional_mechanism_calibration",
    "functional_mechanism_mu",
    "functional_mechanism_scale",
    "gp_path_noise",
    "gram_factor",
]

Kernel = Callable[[np.ndarray, np.ndarray], np.ndarray]
FUNCTIONAL_METHODS: tuple[str, ...] = ("gdp", "analytic", "hall", "classical", "rdp")


def _points(points: np.ndarray) -> np.ndarray:
    P = as_finite_array("points", points, ndim=(1, 2))
    if P.ndim == 1:
        P = P[:, None]
    if P.shape[0] == 0:
        raise ValueError("points must hold at least one point")
    return P


def gram_factor(gram: np.ndarray, *, rtol: float = 0.0) -> np.ndarray:
    """F (m × r) with F Fᵀ = K for a PSD Gram matrix K.

    Eigendecomposition rather than Cholesky: a Gram matrix of repeated or nearly
    coincident points is singular (Cholesky fails or needs jitter, which changes the
    released distribution), and the sample path then takes equal values on repeated
    points, which this factor reproduces up to rounding. With the default
    ``rtol=0`` every positive eigenvalue is kept (see
    :func:`~dpgp_audit.privacy.multivariate.covariance_factor`).
    """
    return covariance_factor(gram, rtol=rtol, name="gram")


@dataclass(frozen=True, eq=False)
class GPPathSampler:
    """Values of a zero-mean GP sample path g ~ GP(0, k) at fixed points, factor cached.

    Parameters
    ----------
    kernel
        Any callable ``kernel(X, Y)`` returning the (m × m') Gram matrix.
    points
        Evaluation points, shape (m, D) (or (m,) for D = 1).
    rtol
        Eigenvalues at or below ``rtol · λ_max`` of the Gram matrix are dropped from
        the factor (default 0: keep every positive one, so no direction with
        variance is left without noise).
    """

    kernel: Kernel
    points: np.ndarray
    rtol: float = 0.0
    gram: np.ndarray = field(init=False, repr=False)
    factor: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        P = _points(self.points)
        P.setflags(write=False)
        object.__setattr__(self, "points", P)
        K = as_finite_array("kernel(points, points)", self.kernel(P, P), ndim=2)
        if K.shape != (P.shape[0], P.shape[0]):
            raise ValueError(f"kernel(points, points) must have shape {(P.shape[0],) * 2}, "
                             f"got {K.shape}")
        K.setflags(write=False)
        object.__setattr__(self, "gram", K)
        object.__setattr__(self, "factor", _cached_factor(K, self.rtol))

    def sample(self, n: int, rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
        """``n`` independent paths times ``scale``, shape (n, m)."""
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        scale = check_positive_float("scale", scale)
        z = rng.standard_normal((n, self.factor.shape[1]))
        return scale * (z @ self.factor.T)

    def covariance(self, scale: float = 1.0) -> np.ndarray:
        """Covariance of ``scale · g`` at the points: scale² K."""
        return float(scale) ** 2 * np.array(self.gram)


_FACTOR_CACHE: OrderedDict[tuple, np.ndarray] = OrderedDict()
_FACTOR_CACHE_SIZE = 16


def _cached_factor(K: np.ndarray, rtol: float) -> np.ndarray:
    """Content-addressed LRU cache of Gram factors (same matrix → same factor)."""
    key = (K.shape, rtol, hashlib.sha1(np.ascontiguousarray(K).tobytes()).hexdigest())
    hit = _FACTOR_CACHE.get(key)
    if hit is not None:
        _FACTOR_CACHE.move_to_end(key)
        return hit
    F = gram_factor(K, rtol=rtol)
    F.setflags(write=False)
    _FACTOR_CACHE[key] = F
    if len(_FACTOR_CACHE) > _FACTOR_CACHE_SIZE:
        _FACTOR_CACHE.popitem(last=False)
    return F


def gp_path_noise(kernel: Kernel, points: np.ndarray, n: int, rng: np.random.Generator,
                  scale: float = 1.0) -> np.ndarray:
    """``n`` draws of c·g at ``points`` with g ~ GP(0, k): the functional mechanism's noise.

    Parameters
    ----------
    kernel
        Callable ``kernel(X, Y) -> Gram matrix`` (the same kernel as the RKHS in which
        the sensitivity is measured).
    points
        Evaluation points, shape (m, D) or (m,).
    n
        Number of independent paths.
    rng
        Source of randomness.
    scale
        The multiplier c (see :func:`functional_mechanism_scale`).

    Returns
    -------
    numpy.ndarray
        Shape (n, m); covariance of each row is c² K(points, points).

    Notes
    -----
    The Gram factor is cached by content, so repeated calls with the same kernel
    and points factorise once. For many calls build a :class:`GPPathSampler`.
    """
    return GPPathSampler(kernel, points).sample(n, rng, scale)


def functional_mechanism_calibration(epsilon: float, delta: float, rkhs_sensitivity: float,
                                     method: str = "gdp", *,
                                     allow_unproven: bool = False) -> GaussianCalibration:
    """The calibration record of the functional mechanism; ``.sigma`` is the multiplier c.

    ``method`` is ``"gdp"`` (R Thm 4.1, every ε), ``"analytic"`` (same value),
    ``"hall"`` (R Thm 3.3, ε ≤ 1), ``"classical"`` (ε ≤ 1) or ``"rdp"`` (R eq. 40,
    every ε). The ε ≤ 1 methods
    raise :class:`~dpgp_audit.privacy.calibrate.CalibrationRangeError` above ε = 1
    unless ``allow_unproven=True`` (warns; ``proven=False``).
    """
    if method not in FUNCTIONAL_METHODS:
        raise ValueError(f"method must be one of {FUNCTIONAL_METHODS}, got {method!r}")
    if method == "rdp":
        epsilon = check_epsilon(epsilon)
        delta = check_delta(delta)
        rkhs_sensitivity = check_sensitivity(rkhs_sensitivity)
        return GaussianCalibration("rdp", epsilon, delta, rkhs_sensitivity,
                                   rdp_gaussian_sigma(epsilon, delta, rkhs_sensitivity), True)
    return calibrate_gaussian(epsilon, delta, rkhs_sensitivity, method,  # type: ignore[arg-type]
                              allow_unproven=allow_unproven)


def functional_mechanism_scale(epsilon: float, delta: float, rkhs_sensitivity: float,
                               method: str = "gdp", *, allow_unproven: bool = False) -> float:
    """The multiplier c of the functional mechanism M(D) = f_D + c g (P.5).

    Parameters
    ----------
    epsilon, delta
        Target (ε, δ).
    rkhs_sensitivity
        Δ ≥ sup ‖f_D − f_D′‖_H (S18 eq. 1; R eq. 8).
    method
        ``"gdp"``: c = Δ/μ(ε, δ) (R Thm 4.1); ``"hall"``: c = Δ sqrt(2 ln(2/δ))/ε
        (R Thm 3.3, S18 eqs. 1–2; ε ≤ 1 only); ``"classical"``:
        c = Δ sqrt(2 ln(1.25/δ))/ε (ε ≤ 1 only); ``"analytic"``: same as ``"gdp"``;
        ``"rdp"``: R App. A.6 eq. (40).
    allow_unproven
        Permit ``hall``/``classical`` at ε > 1 (warns).
    """
    return functional_mechanism_calibration(epsilon, delta, rkhs_sensitivity, method,
                                            allow_unproven=allow_unproven).sigma


def functional_mechanism_mu(scale: float, rkhs_sensitivity: float) -> float:
    """μ = Δ/c: the functional mechanism with multiplier c is μ-GDP (R Thm 4.1)."""
    scale = check_positive_float("scale", scale)
    rkhs_sensitivity = check_positive_float("rkhs_sensitivity", rkhs_sensitivity)
    return rkhs_sensitivity / scale
