"""Checks for notebook 02 (Smith, Álvarez & Lawrence 2021: sparse cloaking, classification).

``02.1`` — the sparse (FITC) cloaking matrix of S21 eq. (9),
C = k_*M Q_MM⁻¹ K_MN (Λ + σ²I)⁻¹ with Q_MM = K_MM + K_MN (Λ + σ²I)⁻¹ K_NM and
Λ = diag(K_nn − k_nMᵀ K_MM⁻¹ k_nM); catalogue S21.2.

``02.2`` — the cloaking matrix of one Laplace Newton step, S21 eq. (11):
C = ½ (K⁻¹ + W)⁻¹ with W = diag(π_i (1 − π_i)), π = logistic(f̂); catalogue S21.3.

``02.3`` — the valid per-error sensitivity of the clipped squared error of S21 Alg. 1
(line 8 clips errors at ±4d): g(δ) = sup_e |h(e + δ) − h(e)|, h(e) = min(e², (4d)²);
catalogue S21.5. The paper's text counts δ² only.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from dpgp_audit.exercises import check_rng, exercise


def _close(a: object, b: np.ndarray, rtol: float = 1e-6) -> bool:
    try:
        arr = np.asarray(a, dtype=float)
    except (TypeError, ValueError):
        return False
    return arr.shape == b.shape and bool(np.allclose(arr, b, rtol=rtol,
                                                     atol=rtol * float(np.max(np.abs(b)))))


def _fitc_case(seed: int, n: int, m: int, k: int):
    from dpgp_audit.gp.kernels import EQ

    g = check_rng(seed)
    X = np.sort(g.uniform(0.0, 10.0, n))[:, None]
    Z = np.linspace(1.0, 9.0, m)[:, None]
    Xs = np.linspace(-1.0, 11.0, k)[:, None]
    return EQ(lengthscale=float(g.uniform(1.0, 2.5)), variance=float(g.uniform(0.5, 2.0))), \
        X, Z, Xs, float(g.uniform(0.05, 0.5))


def reference_fitc_cloaking_matrix(kernel, X, Z, Xs, noise_variance) -> np.ndarray:
    """S21 eq. (9) from the kit's sparse GP (no jitter, so the formula is exact)."""
    from dpgp_audit.gp.sparse import SparseGP

    X = np.asarray(X, dtype=float)
    gp = SparseGP(kernel, noise_variance, Z, approximation="fitc", jitter=0.0)
    return gp.fit(X, np.zeros(X.shape[0])).mean_weights(Xs)


@exercise("02.1", "the FITC cloaking matrix fitc_cloaking_matrix(kernel, X, Z, Xs, noise_variance)")
def _fitc(answer: object) -> Iterator[tuple[bool, str]]:
    yield callable(answer), (
        "it is a function fitc_cloaking_matrix(kernel, X, Z, Xs, noise_variance)")
    case = _fitc_case(1, 12, 3, 5)
    value = answer(*case)
    ref = reference_fitc_cloaking_matrix(*case)
    try:
        shape = np.shape(value)
    except (TypeError, ValueError):
        shape = None
    yield shape == ref.shape, (
        "it returns an array of shape (number of test inputs, number of training inputs): "
        "row i says how prediction i moves with each training target")
    yield _close(value, ref), (
        "it matches S21 eq. (9) on 12 points, 3 inducing inputs, 5 test inputs: check Λ "
        "(the FITC diagonal correction), the noise σ² beside it, and which matrix you invert "
        "(Q_MM, not K_MM)")
    kern, X, Z, Xs, s2 = _fitc_case(2, 20, 5, 4)
    yield _close(answer(kern, X, X[::4], Xs, s2), reference_fitc_cloaking_matrix(
        kern, X, X[::4], Xs, s2)), "it also works with inducing inputs placed on training inputs"
    case = _fitc_case(3, 15, 4, 6)
    yield _close(answer(*case), reference_fitc_cloaking_matrix(*case)), (
        "it matches on another kernel and noise level")


def _newton_case(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    from dpgp_audit.gp.kernels import EQ

    g = check_rng(seed)
    X = np.sort(g.uniform(0.0, 10.0, n))[:, None]
    K = EQ(lengthscale=float(g.uniform(1.0, 3.0)), variance=float(g.uniform(1.0, 4.0)))(X)
    return K + 1e-6 * np.eye(n), g.normal(0.0, 1.5, n)


def reference_newton_cloaking_matrix(K: np.ndarray, f_hat: np.ndarray) -> np.ndarray:
    """½ (K⁻¹ + W)⁻¹ computed stably as ½ (K − K W^½ B⁻¹ W^½ K), B = I + W^½ K W^½."""
    K = np.asarray(K, dtype=float)
    pi = 1.0 / (1.0 + np.exp(-np.asarray(f_hat, dtype=float)))
    s = np.sqrt(pi * (1.0 - pi))
    B = np.eye(K.shape[0]) + s[:, None] * K * s[None, :]
    A = K - (K * s[None, :]) @ np.linalg.solve(B, s[:, None] * K)
    return 0.5 * (0.5 * (A + A.T))


@exercise("02.2", "one Newton step's cloaking matrix newton_cloaking_matrix(K, f_hat)")
def _newton(answer: object) -> Iterator[tuple[bool, str]]:
    yield callable(answer), "it is a function newton_cloaking_matrix(K, f_hat)"
    K, f = _newton_case(1, 6)
    value = answer(K, f)
    ref = reference_newton_cloaking_matrix(K, f)
    try:
        shape = np.shape(value)
    except (TypeError, ValueError):
        shape = None
    yield shape == ref.shape, "it returns an n × n matrix (one column per training label)"
    yield _close(value, ref), (
        "it matches S21 eq. (11) at a latent f̂ that is not zero: W holds the logistic "
        "likelihood's curvature π(1 − π) at f̂, and the labels enter the step as y/2")
    K, f = _newton_case(2, 9)
    yield _close(answer(K, 3.0 * f), reference_newton_cloaking_matrix(K, 3.0 * f)), (
        "it matches far from f̂ = 0, where W is small and C approaches ½ K")
    K, f = _newton_case(3, 5)
    yield _close(answer(K, np.zeros(5)), reference_newton_cloaking_matrix(K, np.zeros(5))), (
        "it matches at the usual starting point f̂ = 0")


def brute_force_clipped_square_sensitivity(delta: float, d: float, points: int = 200_001
                                           ) -> float:
    """sup_e |h(e + δ) − h(e)| over a fine grid of e, h(e) = min(e², (4d)²).

    Independent of the closed form: the supremum is attained for e in
    [−4d − |δ|, 4d + |δ|] (outside, both errors are clipped), which the grid covers;
    the kinks of h(e) and h(e + δ) (e = ±4d, ±4d − δ) are added to it.
    """
    a = 4.0 * float(d)
    kinks = np.array([a, -a, a - delta, -a - delta])
    e = np.concatenate([np.linspace(-a - abs(delta), a + abs(delta), points), kinks])
    h = np.minimum(e**2, a**2)
    h2 = np.minimum((e + delta) ** 2, a**2)
    return float(np.max(np.abs(h2 - h)))


def reference_clipped_square_sensitivity(delta: float, d: float) -> float:
    """The closed form |δ|(8d − |δ|) for |δ| ≤ 4d, 16d² beyond, from the kit."""
    from dpgp_audit.methods.s21.cv_utility import clipped_square_sensitivity

    return float(clipped_square_sensitivity(delta, d))


@exercise("02.3", "the clipped squared error's sensitivity clipped_square_sensitivity(delta, d)")
def _clipped(answer: object) -> Iterator[tuple[bool, str]]:
    yield callable(answer), "it is a function clipped_square_sensitivity(delta, d)"
    value = answer(0.5, 1.0)
    try:
        ok = math.isfinite(float(value))
    except (TypeError, ValueError):
        ok = False
    yield ok, "it returns one finite number"
    yield math.isclose(float(value), reference_clipped_square_sensitivity(0.5, 1.0),
                       rel_tol=1e-9), (
        "for a small move (δ = 0.5, d = 1) it is the largest change of a clipped squared "
        "error over every error e: the cross term 2eδ counts, and e can be as large as the "
        "clip allows")
    yield math.isclose(float(answer(-0.5, 1.0)), float(value), rel_tol=1e-12), (
        "a move down is as bad as a move up")
    yield math.isclose(float(answer(2.0, 1.0)), brute_force_clipped_square_sensitivity(2.0, 1.0),
                       rel_tol=1e-6), "it is exact (not just an upper bound) for δ = 2d"
    yield math.isclose(float(answer(10.0, 1.0)), reference_clipped_square_sensitivity(10.0, 1.0),
                       rel_tol=1e-9), (
        "for a move beyond the clip (δ = 10, d = 1) it is capped: a clipped error cannot "
        "change by more than the clip allows")
    ok = all(math.isclose(float(answer(x, dd)), reference_clipped_square_sensitivity(x, dd),
                          rel_tol=1e-9) for x, dd in ((0.3, 2.0), (7.9, 2.0), (100.0, 0.1)))
    yield ok, "it scales with d"
