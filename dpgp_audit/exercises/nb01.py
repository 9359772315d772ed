"""Checks for notebook 01 (Smith et al. 2018: the standard DP-GP and cloaking).

``01.1`` — the cloaking sensitivity Δ = sqrt(max_i c_iᵀ M⁻¹ c_i) of S18 eqs. (6) and (9)
(per unit d; S18-supp Alg. 1's CALCDELTA returns the square), catalogue S18.2.

``01.2`` — the paper's bound b(K⁻¹) on the standard DP-GP's change (S18 §2): for a kernel
with values in [0, 1], one target moving by d changes the posterior mean by at most
d·b(K⁻¹) anywhere, where b(K⁻¹) is the largest, over the columns of K⁻¹, of the sum of a
column's positive entries or of its negative entries (magnitude); catalogue S18.1.

``01.3`` — a neighbouring pair on which the paper's SSE sensitivity for private
hyperparameter selection (S18-supp, "9d² + Σ d² max_j ‖c_jk‖²") is exceeded;
catalogue S18.4. The check rebuilds the selection from the student's inputs.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from dpgp_audit.exercises import check_rng, exercise

D_SSE = 1.0
"""The outputs-only bound d of exercise 01.3 (targets of a neighbour differ by at most d)."""


def _finite_number(value: object) -> bool:
    try:
        return math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _cloaking_case(seed: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A public C (k × n, full row rank) and an invertible M = Σ λ_i c_i c_iᵀ."""
    g = check_rng(seed)
    C = g.normal(size=(k, n))
    lam = g.uniform(0.2, 2.0, n)
    return C, (C * lam) @ C.T


def reference_cloaking_delta(C: np.ndarray, M: np.ndarray) -> float:
    """Δ per unit d, from the kit's vetted range-checked implementation."""
    from dpgp_audit.gp.cloaking import mahalanobis_delta

    return mahalanobis_delta(np.asarray(C, dtype=float), np.asarray(M, dtype=float))


@exercise("01.1", "the cloaking sensitivity cloaking_delta(C, M)")
def _cloaking_delta(answer: object) -> Iterator[tuple[bool, str]]:
    yield callable(answer), "it is a function cloaking_delta(C, M)"
    C, M = np.eye(2), np.diag([4.0, 16.0])
    value = answer(C, M)
    yield _finite_number(value), "it returns one finite number"
    yield math.isclose(float(value), reference_cloaking_delta(C, M), rel_tol=1e-9), (
        "with C = I and M = diag(4, 16) it gives the Mahalanobis length of the worst column "
        "(a length, not its square; the largest column, not a sum or an average)")
    C, M = _cloaking_case(1, 3, 5)
    yield math.isclose(float(answer(C, M)), reference_cloaking_delta(C, M), rel_tol=1e-8), (
        "it works for a 3 × 5 C: the columns c_i are the changes of the 3 predictions, one "
        "per training target (use M's inverse, not M)")
    yield math.isclose(float(answer(C, 4.0 * M)), reference_cloaking_delta(C, M) / 2,
                       rel_tol=1e-8), "four times the noise covariance halves Δ"
    ok = all(math.isclose(float(answer(*case)), reference_cloaking_delta(*case), rel_tol=1e-8)
             for case in (_cloaking_case(2, 4, 4), _cloaking_case(3, 2, 7)))
    yield ok, "it matches on other shapes of C too"


def _kinv_case(seed: int, n: int) -> np.ndarray:
    """K⁻¹ of an EQ kernel with little noise: entries of both signs, as on the !Kung data."""
    from dpgp_audit.gp.kernels import EQ

    g = check_rng(seed)
    X = np.sort(g.uniform(0.0, 10.0, n))[:, None]
    K = EQ(lengthscale=float(g.uniform(0.8, 2.5)))(X) + float(g.uniform(0.05, 0.3)) * np.eye(n)
    return np.linalg.inv(K)


def reference_b_bound(Kinv: np.ndarray) -> float:
    """b(K⁻¹) of S18 §2, from the kit."""
    from dpgp_audit.methods.s18.standard import b_bound

    return b_bound(np.asarray(Kinv, dtype=float))


@exercise("01.2", "the paper's bound b_bound(Kinv) = b(K⁻¹)")
def _b_bound(answer: object) -> Iterator[tuple[bool, str]]:
    yield callable(answer), "it is a function b_bound(Kinv)"
    A = np.array([[2.0, -1.0], [-1.0, 2.0]])
    value = answer(A)
    yield _finite_number(value), "it returns one finite number"
    yield math.isclose(float(value), reference_b_bound(A), rel_tol=1e-12), (
        "on [[2, −1], [−1, 2]] it is the larger of a column's positive mass and its "
        "negative mass, kept apart (not the absolute sum)")
    B = np.array([[1.0, -3.0, 0.5], [-3.0, 1.0, -0.5], [0.5, -0.5, 1.0]])
    yield math.isclose(float(answer(B)), reference_b_bound(B), rel_tol=1e-12), (
        "it also counts negative mass (the target may move down as well as up)")
    Kinv = _kinv_case(1, 8)
    yield math.isclose(float(answer(Kinv)), reference_b_bound(Kinv), rel_tol=1e-9), (
        "it matches on the K⁻¹ of a GP: the worst column, each column summed over all its "
        "entries of one sign")
    yield math.isclose(float(answer(-Kinv)), float(answer(Kinv)), rel_tol=1e-12), (
        "b(−K⁻¹) = b(K⁻¹): the sign of the change is unknown")


def paper_selection(X: np.ndarray):
    """The selection of exercise 01.3 on inputs X with the paper's SSE sensitivity."""
    from dpgp_audit.methods.s18.hyperparameter_selection import (
        HyperparameterSelection,
        default_configs,
        s18_sse_sensitivity,
    )

    return HyperparameterSelection(X, default_configs(), D_SSE, 1.0, n_folds=4,
                                   sensitivity=s18_sse_sensitivity)


def utility_change(pair: tuple) -> tuple[float, float]:
    """(largest change of any configuration's utility, the paper's claimed Δu) on a pair."""
    D, D2 = pair
    sel = paper_selection(D.X)
    return float(np.max(np.abs(sel.query(D) - sel.query(D2)))), sel.sensitivity_bound()


@exercise("01.3", "a neighbour pair that breaks the paper's SSE sensitivity")
def _sse_pair(answer: object) -> Iterator[tuple[bool, str]]:
    from dpgp_audit.dataset import Dataset

    pair = answer() if callable(answer) else answer
    yield (isinstance(pair, tuple) and len(pair) == 2
           and all(isinstance(p, Dataset) for p in pair)), (
        "it is a pair (D, D2) of Datasets (or a function returning one)")
    D, D2 = pair
    yield (D.X.shape == D2.X.shape and D.X.shape[1] == 1 and np.array_equal(D.X, D2.X)), (
        "both datasets have the same one-dimensional inputs X (the inputs are public)")
    yield 8 <= D.n <= 200, "they hold between 8 and 200 points (the check refits the GPs)"
    diff = np.abs(np.asarray(D.y, dtype=float) - np.asarray(D2.y, dtype=float))
    yield int(np.sum(diff > 0)) == 1, "they differ in exactly one target (neighbours)"
    yield float(diff.max()) <= D_SSE * (1 + 1e-12), (
        f"that target moves by at most d = {D_SSE:g} (the outputs-only relation)")
    change, bound = utility_change((D, D2))
    yield change > bound * (1 + 1e-9), (
        "some configuration's utility −SSE changes by more than the paper's Δu on this "
        "pair (make the residuals of the fitted folds large, and move the target so that "
        "the predictions move with the errors, not against them)")
