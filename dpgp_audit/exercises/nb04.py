"""Checks for notebook 04 (Räisä et al.: GDP functional mechanism and DPConvCNP, R.1, R.3).

``04.1`` — the GDP calibration of the functional mechanism (R Thm 4.1 with R eq. 5):
solve μ from (ε, δ) with the GDP privacy profile
``δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)``, then the multiplier is ``c = Δ/μ``.
Compared with the kit's :func:`dpgp_audit.privacy.gdp.gdp_mu`.

``04.2`` — GP noise on a D-dimensional grid from per-axis factors (R Alg. 4, App. B):
``f = (L_1 ⊗ … ⊗ L_D) z`` with ``L_d L_dᵀ = K_d``, applied axis by axis without the
Kronecker product. The check builds the linear map the answer applies (one basis
vector at a time, on small grids) and asks that its covariance be ``K_1 ⊗ … ⊗ K_D``
— so any square root per axis is accepted, and a wrong factor, a transposed one or a
skipped axis is not.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from dpgp_audit.exercises import exercise
from dpgp_audit.exercises._answers import as_number as _number
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.privacy.gdp import gdp_delta, gdp_mu


def multiplier_reference(epsilon: float, delta: float, sensitivity: float) -> float:
    """The multiplier Δ/μ, μ the GDP parameter of (ε, δ) (R Thm 4.1, eq. 5)."""
    return sensitivity / gdp_mu(epsilon, delta)


@exercise("04.1", "the GDP multiplier c = Δ/μ of the functional mechanism")
def _multiplier(answer: object) -> Iterator[tuple[bool, str]]:
    yield callable(answer), "it is a function functional_multiplier(epsilon, delta, sensitivity)"
    c = _number(answer(1.0, 1e-3, 1.0))
    yield c is not None and c > 0, "it returns one positive number"
    mu = 1.0 / c
    yield math.isclose(gdp_delta(1.0, mu), 1e-3, rel_tol=1e-4), (
        "at ε = 1, δ = 1e-3, Δ = 1 the μ = Δ/c it implies must make R eq. (5) give exactly "
        "δ = 1e-3 (solve eq. (5) for μ; mind the sign of each μ/2 and the factor e^ε)")
    yield math.isclose(c, multiplier_reference(1.0, 1e-3, 1.0), rel_tol=1e-6), (
        "solve eq. (5) to full precision (a root finder on μ, e.g. scipy.optimize.brentq)")
    yield math.isclose(_number(answer(1.0, 1e-3, 3.0)) or 0.0, 3.0 * c, rel_tol=1e-6), (
        "c is proportional to the sensitivity Δ (R Thm 4.1: μ = Δ/c)")
    hall = math.sqrt(2.0 * math.log(2.0 / 1e-3))  # Hall et al. at ε = 1, Δ = 1
    yield c < hall, (
        "at ε = 1 it is below Hall et al.'s classical multiplier Δ·sqrt(2 ln(2/δ))/ε")
    ok = all(math.isclose(_number(answer(e, d, s)) or 0.0, multiplier_reference(e, d, s),
                          rel_tol=1e-6) for e, d, s in ((4.0, 1e-3, 1.0), (0.3, 1e-5, 2.0),
                                                         (2.0, 1e-6, 0.5)))
    yield ok, "it is right for ε > 1 too (where Hall's bound has no proof) and for other δ, Δ"


def axis_covariances(sizes: tuple[int, ...], seed: int) -> list[np.ndarray]:
    """Per-axis EQ covariances on grids of the given sizes (distinct lengthscales, jitter)."""
    rng = np.random.default_rng(seed)
    out = []
    for n in sizes:
        x = np.sort(rng.uniform(-1, 1, n))[:, None]
        out.append(EQ(float(rng.uniform(0.3, 1.0)))(x, x) + 1e-6 * np.eye(n))
    return out


def _normals(n: int, *, seed: int) -> np.ndarray:
    """``n`` standard normals from a generator of their own (checks are deterministic)."""
    return np.random.default_rng(seed).standard_normal(n)


def kron(mats: list[np.ndarray]) -> np.ndarray:
    """K_1 ⊗ … ⊗ K_D (row-major grid order: the last axis varies fastest)."""
    out = np.ones((1, 1))
    for m in mats:
        out = np.kron(out, m)
    return out


def applied_map(answer, covs: list[np.ndarray]) -> np.ndarray | None:
    """The matrix of z ↦ answer(covs, z), column by column (None if it is not a map)."""
    shape = tuple(c.shape[0] for c in covs)
    n = int(np.prod(shape))
    cols = []
    for i in range(n):
        e = np.zeros(n)
        e[i] = 1.0
        try:
            f = np.asarray(answer(list(covs), e.reshape(shape)), dtype=float)
        except (TypeError, ValueError):
            return None
        if f.shape != shape or not np.all(np.isfinite(f)):
            return None
        cols.append(f.ravel())
    return np.array(cols).T


@exercise("04.2", "GP noise on a grid from per-axis factors (R Alg. 4)")
def _kron_noise(answer: object) -> Iterator[tuple[bool, str]]:
    yield callable(answer), "it is a function kron_noise(covs, z)"
    covs1 = axis_covariances((5,), 1)
    z = _normals(5, seed=2)
    f = np.asarray(answer(list(covs1), z), dtype=float)
    yield f.shape == (5,) and bool(np.all(np.isfinite(f))), (
        "it returns an array of the grid's shape (the shape of z)")
    A1 = applied_map(answer, covs1)
    yield A1 is not None and np.allclose(A1 @ A1.T, covs1[0], atol=1e-9), (
        "in 1-D the noise f = L z must have covariance L Lᵀ = K (use a Cholesky factor "
        "of K, not K itself, and mind the transpose)")
    yield np.allclose(np.asarray(answer(list(covs1), 2 * z), dtype=float), 2 * f,
                      atol=1e-12), (
        "the noise is linear in z (z is the only randomness)")
    covs2 = axis_covariances((3, 4), 3)
    A2 = applied_map(answer, covs2)
    yield A2 is not None, (
        "on a 3 x 4 grid it returns a 3 x 4 array (apply L_1 along axis 0, L_2 along axis 1)")
    yield np.allclose(A2 @ A2.T, kron(covs2), atol=1e-9), (
        "on a 3 x 4 grid the covariance must be K_1 ⊗ K_2: every axis needs its own factor, "
        "each applied along its own axis")
    covs3 = axis_covariances((2, 3, 4), 4)
    A3 = applied_map(answer, covs3)
    yield A3 is not None and np.allclose(A3 @ A3.T, kron(covs3), atol=1e-9), (
        "it works for any number of axes D (here a 2 x 3 x 4 grid)")
