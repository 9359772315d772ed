"""Checks for notebook 03 (Honkela: DP sparse variational GPs, catalogue H.1, H.2).

``03.1`` — the change of the released statistics under one whole-row substitution
(H eq. 6 and its derivation, H eqs. 25–28): replacing the row with kernel vector
``k = k(Z, x)`` and target ``y`` by ``(k', y')`` moves the rescaled release
``[A; c·b̂]`` (``b̂`` the upper triangle of ``B`` with off-diagonal entries scaled by √2,
so ``‖b̂‖ = ‖B‖_F``) by ``sqrt(‖y k − y' k'‖² + c² ‖k kᵀ − k' k'ᵀ‖_F²)``.

``03.2`` — the covariance the noise on ``A`` adds to the posterior mean (H eq. 11):
``m = σ⁻² K_ZZ Σ̃ Ã`` is linear in ``Ã = A + E_a``, ``E_a ~ N(0, σ_a² I)``, so
``S_{2,1} = σ_a² σ⁻⁴ M Mᵀ`` with ``M = K_ZZ Σ̃``.

Both are compared with closed forms (the second also with the kit's
:func:`dpgp_audit.methods.honkela.posterior.s21`) on cases drawn from fixed generators.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from dpgp_audit.exercises import exercise
from dpgp_audit.exercises._answers import as_number as _number
from dpgp_audit.methods.honkela.posterior import s21


def stats_change_reference(k: np.ndarray, y: float, k_new: np.ndarray, y_new: float,
                           c: float) -> float:
    """‖[A; c b̂](D) − [A; c b̂](D′)‖₂ for one substituted row (H eqs. 25–28)."""
    k, k_new = np.asarray(k, float), np.asarray(k_new, float)
    a = y * k - y_new * k_new
    b = np.outer(k, k) - np.outer(k_new, k_new)
    return math.sqrt(float(a @ a) + c * c * float(np.sum(b * b)))



def _close(a: float | None, b: float, rel: float = 1e-9) -> bool:
    return a is not None and math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


def stats_change_cases(seed: int, count: int) -> list[tuple]:
    """Random (k, y, k', y', c) cases: |Z| from 1 to 9, targets in [−2, 2], c in [0.1, 5]."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        d = int(rng.integers(1, 10))
        out.append((rng.uniform(-1, 1, d), float(rng.uniform(-2, 2)), rng.uniform(-1, 1, d),
                    float(rng.uniform(-2, 2)), float(rng.uniform(0.1, 5.0))))
    return out


@exercise("03.1", "the change of the released [A; c·b̂] when one whole row is replaced")
def _stats_change(answer: object) -> Iterator[tuple[bool, str]]:
    yield callable(answer), "it is a function stats_change(k, y, k_new, y_new, c)"
    k = np.array([0.6, 0.8, 0.0])
    value = _number(answer(k, 1.0, k, 1.0, 1.0))
    yield value is not None, "it returns one finite number (a norm)"
    yield _close(value, 0.0), "replacing a row by itself changes nothing: the change is 0"
    # only the target moves: B is unchanged, A moves by (y - y') k
    yield _close(_number(answer(k, 1.0, k, -0.5, 1.0)), 1.5 * 1.0), (
        "with the same input and targets 1 and -0.5 only A moves, by |y - y'| ‖k‖ "
        "(check the A part: the sum of y_i k_i)")
    # only B moves (targets 0): the norm of the B part must be ‖k kᵀ − k′k′ᵀ‖_F
    k2 = np.array([0.0, 0.6, 0.8])
    want = stats_change_reference(k, 0.0, k2, 0.0, 1.0)
    yield _close(_number(answer(k, 0.0, k2, 0.0, 1.0)), want), (
        "with both targets 0 only B moves: the change is the Frobenius norm of "
        "k kᵀ − k′ k′ᵀ (each off-diagonal entry appears once in b̂ — with which scale?)")
    yield _close(_number(answer(k, 0.0, k2, 0.0, 2.0)), 2.0 * want), (
        "the B part is multiplied by c = σ_a/σ_b (doubling c doubles it)")
    ok = all(_close(_number(answer(*case)), stats_change_reference(*case), 1e-8)
             for case in stats_change_cases(3, 20))
    yield ok, "it matches the change of [A; c·b̂] on random rows (|Z| from 1 to 9)"
    yield _close(_number(answer(k, 1.5, -k, 1.5, 0.3)), 2 * 1.5 * 1.0), (
        "with k′ = −k and the same target the change is 2|y|‖k‖ (B does not move: the case "
        "H eq. (6) misses)")


def s21_reference(Kzz: np.ndarray, Sigma: np.ndarray, sigma_a: float,
                  noise_var: float) -> np.ndarray:
    """σ_a² σ⁻⁴ (K_ZZ Σ̃)(K_ZZ Σ̃)ᵀ (H eq. 11), via the kit's implementation."""
    return s21(np.asarray(Kzz) @ np.asarray(Sigma), sigma_a, noise_var)


def s21_cases(seed: int, count: int) -> list[tuple]:
    """Random (K_ZZ, Σ̃, σ_a, σ²) with SPD matrices of size 1 to 8."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        d = int(rng.integers(1, 9))
        G = rng.standard_normal((d, d))
        H = rng.standard_normal((d, d))
        out.append((G @ G.T + d * np.eye(d), np.linalg.inv(H @ H.T + np.eye(d)),
                    float(rng.uniform(0.1, 20.0)), float(rng.uniform(0.01, 1.0))))
    return out


def _matrix(value: object, d: int) -> np.ndarray | None:
    try:
        out = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return out if out.shape == (d, d) and np.all(np.isfinite(out)) else None


@exercise("03.2", "S₂,₁: the posterior covariance added by the noise on A")
def _s21(answer: object) -> Iterator[tuple[bool, str]]:
    yield callable(answer), "it is a function s21_correction(Kzz, Sigma, sigma_a, noise_var)"
    Kzz, Sigma, sa, nv = s21_cases(5, 1)[0]
    d = Kzz.shape[0]
    got = _matrix(answer(Kzz, Sigma, sa, nv), d)
    yield got is not None, f"it returns a finite |Z| x |Z| matrix (here {d} x {d})"
    yield np.allclose(got, got.T, rtol=1e-9, atol=1e-12), (
        "a covariance is symmetric: M Mᵀ, not Mᵀ M or M²")
    want = s21_reference(Kzz, Sigma, sa, nv)
    four = _matrix(answer(Kzz, Sigma, 2 * sa, nv), d)
    yield four is not None and np.allclose(four, 4 * got, rtol=1e-9), (
        "doubling sigma_a multiplies a covariance by 4 (variance, not standard deviation)")
    half = _matrix(answer(Kzz, Sigma, sa, 2 * nv), d)
    yield half is not None and np.allclose(half, got / 4, rtol=1e-9), (
        "m = σ⁻² K_ZZ Σ̃ Ã: the factor σ⁻² enters the covariance squared (doubling the "
        "noise variance σ² divides it by 4)")
    yield np.allclose(got, want, rtol=1e-8, atol=1e-14), (
        "it is Cov(m) from the noise on A alone: m is linear in Ã = A + E_a with "
        "E_a ~ N(0, σ_a² I); which matrix maps Ã to m?")
    ok = all(np.allclose(_matrix(answer(*c), c[0].shape[0]), s21_reference(*c), rtol=1e-8,
                         atol=1e-14) for c in s21_cases(6, 10))
    yield ok, "it matches H eq. (11) on random K_ZZ, Σ̃ (|Z| from 1 to 8)"
