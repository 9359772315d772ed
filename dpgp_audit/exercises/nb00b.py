"""Checks for notebook 00b (the GP primer).

``00b.1`` — the GP posterior mean (Rasmussen & Williams Alg. 2.1):
f̄ = k_*ᵀ K⁻¹ y with K = K′ + σ²I.

``00b.2`` — the RKHS sensitivity of the posterior mean under outputs-only neighbours
(S18 eq. 1 and §3; catalogue S18.1): Δ = d max_j sqrt(e_jᵀ K⁻¹ K′ K⁻¹ e_j).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from dpgp_audit.exercises import check_rng, exercise
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.methods.s18.standard import rkhs_sensitivity


def primer_problem(n: int, m: int, lengthscale: float, seed: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A small regression problem: (K′ = k(X, X), k_* = k(X, X_*), y), from a fixed seed."""
    rng = check_rng(seed)
    X = np.sort(rng.uniform(-3.0, 3.0, n))[:, None]
    Xs = np.linspace(-3.5, 3.5, m)[:, None]
    kern = EQ(lengthscale=lengthscale)
    y = np.sin(2.0 * X[:, 0]) + 0.1 * rng.standard_normal(n)
    return kern(X), kern(X, Xs), y


def reference_mean(K_prime: np.ndarray, k_star: np.ndarray, y: np.ndarray,
                   noise_var: float) -> np.ndarray:
    """k_*ᵀ (K′ + σ²I)⁻¹ y, by a linear solve."""
    return k_star.T @ np.linalg.solve(K_prime + noise_var * np.eye(len(y)), y)


def _as_vector(value: object, m: int) -> np.ndarray | None:
    if value is None:
        return None
    arr = np.asarray(value, dtype=float)
    return arr.reshape(-1) if arr.size == m else None


@exercise("00b.1", "the GP posterior mean posterior_mean(K_prime, k_star, y, noise_var)")
def _posterior_mean(answer: object) -> Iterator[tuple[bool, str]]:
    yield callable(answer), "it is a function posterior_mean(K_prime, k_star, y, noise_var)"
    K_prime, k_star, y = primer_problem(12, 7, 1.0, 0)
    got = _as_vector(answer(K_prime, k_star, y, 0.04), 7)
    yield got is not None, "it returns one mean per test input (k_star has one column each)"
    yield np.allclose(got, reference_mean(K_prime, k_star, y, 0.04), rtol=1e-6, atol=1e-8), (
        "it equals the posterior mean of R&W Alg. 2.1 (which matrix do the targets' "
        "noise variances enter, and is noise_var a variance or a standard deviation?)")
    doubled = _as_vector(answer(K_prime, k_star, 2 * y, 0.04), 7)
    yield doubled is not None and np.allclose(doubled, 2 * got, rtol=1e-6, atol=1e-8), (
        "it is linear in the targets y")
    K2, ks2, y2 = primer_problem(20, 9, 0.5, 1)
    other = _as_vector(answer(K2, ks2, y2, 0.25), 9)
    yield other is not None and np.allclose(other, reference_mean(K2, ks2, y2, 0.25),
                                            rtol=1e-6, atol=1e-8), (
        "it is right for another data set, lengthscale and noise variance too")


@exercise("00b.2", "the RKHS sensitivity rkhs_change(K_prime, noise_var, d)")
def _rkhs_change(answer: object) -> Iterator[tuple[bool, str]]:
    yield callable(answer), "it is a function rkhs_change(K_prime, noise_var, d)"
    K_prime, _, y = primer_problem(15, 3, 1.0, 2)
    K = K_prime + 0.04 * np.eye(len(y))
    want = rkhs_sensitivity(np.linalg.inv(K), K_prime, 1.0)
    value = answer(K_prime, 0.04, 1.0)
    ok = value is not None and np.ndim(value) == 0 and math.isfinite(float(value))
    yield ok, "it returns one finite number (the largest change over the targets j)"
    yield math.isclose(float(value), want, rel_tol=1e-6), (
        "it equals the largest RKHS norm of the change of the posterior mean when one target "
        "moves by d (which of K and K' belongs in the middle of the quadratic form, and "
        "which outside?)")
    yield math.isclose(float(answer(K_prime, 0.04, 2.5)), 2.5 * want, rel_tol=1e-6), (
        "it is proportional to d")
    K2, _, y2 = primer_problem(25, 3, 0.4, 3)
    want2 = rkhs_sensitivity(np.linalg.inv(K2 + 0.1 * np.eye(len(y2))), K2, 1.0)
    yield math.isclose(float(answer(K2, 0.1, 1.0)), want2, rel_tol=1e-6), (
        "it is right for another data set and noise variance too")
