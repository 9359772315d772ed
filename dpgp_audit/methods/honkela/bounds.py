"""Sensitivity maths of DP sparse variational GP inference (catalogue H.1).

Honkela's DP-GP (paper H) releases the two sufficient statistics of the
Titsias q(u) (H eq. 3)

    A = K_ZX y = Σ_i y_i k_i,        B = K_ZX K_XZ = Σ_i k_i k_iᵀ,

with k_i = k(Z, x_i), through one Gaussian mechanism on the stacked vector
[A; b̂], where b̂ = t_b(B) holds the upper triangle of B with the off-diagonal
entries scaled by √2 (H eq. 23) so that ‖b̂‖₂ = ‖B‖_F.

Everything in this module is pure maths (no privacy step, no GP model):

* :func:`upper_vec` / :func:`upper_unvec` — the √2-scaled half-vectorisation t_b;
* :func:`dpsvgp_sensitivity` — the L2 sensitivity of the rescaled query
  [A; (σ_a/σ_b) b̂] under whole-row substitution, both the **exact** worst case
  and **H eq. (6)** as printed;
* :func:`rk_trivial`, :func:`rk_grid1d_paper`, :func:`rk_spacing_1d`,
  :func:`rk_min_distance` — bounds R_k ≥ ‖k(Z, x)‖₂ for every x (H eqs. 4, 7, 8).

Findings about the paper's formulas (each verified by brute force in
``tests/methods/honkela/test_bounds.py``):

1. H eq. (6) is attained only when (σ_a/σ_b)² ≥ R_y²/(2 R_k²). In the proof (H
   eq. 29) the maximiser t = −y y′/(2c) of the quadratic in t = ⟨k, k′⟩ must
   satisfy |t| ≤ R_k²; otherwise the maximum sits on the boundary t = ∓R_k²
   (k′ = −k), where the B-part cancels and Δ = 2 R_y R_k. Eq. (6) is then a
   valid but loose upper bound (by AM–GM it is always ≥ 2 R_y R_k).
2. H eq. (7), as printed, sums |Z| + 2 terms including 2·k_r(0)² = 2, so it can
   exceed even the trivial bound (4). It is still a valid bound;
   :func:`rk_spacing_1d` gives the tighter valid bound Σ_m k_r(m d_z/2)².
3. H §3.1 gives d₂ = C(d+2, 2) for the length of b̂; the half-vectorisation
   of a d × d symmetric matrix has d(d+1)/2 = C(d+1, 2) entries.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Literal

import numpy as np

from dpgp_audit._validation import as_finite_array, check_positive_int

__all__ = [
    "RK_METHODS",
    "SensitivityFormula",
    "dpsvgp_sensitivity",
    "min_pairwise_distance",
    "paper_sensitivity_is_tight",
    "rk_bound",
    "rk_grid1d_paper",
    "rk_min_distance",
    "rk_spacing_1d",
    "rk_trivial",
    "upper_dim",
    "upper_unvec",
    "upper_vec",
]

SensitivityFormula = Literal["exact", "paper"]
RK_METHODS: tuple[str, ...] = ("trivial", "grid1d-paper", "spacing-1d", "min-distance")


def upper_dim(d: int) -> int:
    """Length d(d+1)/2 of the half-vectorisation of a d × d symmetric matrix."""
    d = check_positive_int("d", d)
    return d * (d + 1) // 2


@functools.lru_cache(maxsize=64)
def _triu(d: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(d, 1)


def upper_vec(B: np.ndarray) -> np.ndarray:
    """t_b applied to symmetric matrices (H eq. 23): [diag(B); √2 · strict upper triangle].

    Accepts a batch of shape (..., d, d); returns (..., d(d+1)/2). For B = k kᵀ
    this is [k_1², …, k_d², √2 k_1 k_2, …, √2 k_{d−1} k_d], and in general
    ‖upper_vec(B)‖₂ = ‖B‖_F for symmetric B.
    """
    B = np.asarray(B, dtype=float)
    d = B.shape[-1]
    iu = _triu(d)
    diag = np.diagonal(B, axis1=-2, axis2=-1)
    return np.concatenate([diag, math.sqrt(2.0) * B[..., iu[0], iu[1]]], axis=-1)


def upper_unvec(b: np.ndarray, d: int) -> np.ndarray:
    """Inverse of :func:`upper_vec`: the symmetric (..., d, d) matrix with half-vector ``b``.

    A noisy release b̂ + e maps to B + E with E symmetric, Var(E_ii) = σ_b² and
    Var(E_ij) = σ_b²/2 for i ≠ j (H §3.3, "the smaller variance of off-diagonal terms").
    """
    b = np.asarray(b, dtype=float)
    if b.shape[-1] != upper_dim(d):
        raise ValueError(f"b has length {b.shape[-1]}, expected d(d+1)/2 = {upper_dim(d)}")
    iu = _triu(d)
    out = np.zeros((*b.shape[:-1], d, d))
    idx = np.arange(d)
    out[..., idx, idx] = b[..., :d]
    off = b[..., d:] / math.sqrt(2.0)
    out[..., iu[0], iu[1]] = off
    out[..., iu[1], iu[0]] = off
    return out


def _check_pos(name: str, value: float) -> float:
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return value


def paper_sensitivity_is_tight(y_bound: float, rk: float, ratio: float) -> bool:
    """True when H eq. (6) is the exact worst case: (σ_a/σ_b)² ≥ R_y²/(2 R_k²)."""
    return ratio * ratio >= y_bound * y_bound / (2.0 * rk * rk)


def dpsvgp_sensitivity(y_bound: float, rk: float, ratio: float = 1.0,
                       formula: SensitivityFormula = "exact") -> float:
    """L2 sensitivity of [A; (σ_a/σ_b) b̂] under one whole-row substitution (H Lemma 5).

    One row contributes y k to A and t_b(k) to b̂; replacing (x, y) by (x′, y′)
    with ‖k‖, ‖k′‖ ≤ R_k and |y|, |y′| ≤ R_y changes the rescaled query by
    Δ² = ‖y k − y′ k′‖² + c (‖k‖⁴ + ‖k′‖⁴ − 2 t²), c = (σ_a/σ_b)², t = ⟨k, k′⟩
    (H eqs. 25–28).

    Parameters
    ----------
    y_bound
        R_y, the bound |y| ≤ R_y.
    rk
        R_k, a bound on ‖k(Z, x)‖₂ for every admissible x.
    ratio
        σ_a/σ_b (the constant c of H Alg. 1; the paper uses 1).
    formula
        ``"exact"`` (default): the true supremum —
        eq. (6) when c ≥ R_y²/(2 R_k²), else 2 R_y R_k (boundary maximum,
        k′ = −k). ``"paper"``: H eq. (6) as printed, always ≥ the exact value.

    Returns
    -------
    float
        Δ such that the Gaussian mechanism with noise σ_a on A and σ_b = σ_a/ratio
        on b̂ is the Δ-sensitivity Gaussian mechanism with noise σ_a (H eq. 27).
    """
    ry = _check_pos("y_bound", y_bound)
    rk = _check_pos("rk", rk)
    ratio = _check_pos("ratio", ratio)
    c = ratio * ratio
    paper_sq = ry**4 / (2.0 * c) + 2.0 * ry * ry * rk * rk + 2.0 * c * rk**4  # H eq. (6)
    if formula == "paper":
        return math.sqrt(paper_sq)
    if formula != "exact":
        raise ValueError(f"formula must be 'exact' or 'paper', got {formula!r}")
    if paper_sensitivity_is_tight(ry, rk, ratio):
        return math.sqrt(paper_sq)
    return 2.0 * ry * rk


# --------------------------------------------------------------------------- R_k bounds


def min_pairwise_distance(Z: np.ndarray) -> float:
    """Smallest Euclidean distance d_z between two distinct rows of ``Z``."""
    Z = as_finite_array("Z", Z, ndim=(1, 2))
    if Z.ndim == 1:
        Z = Z[:, None]
    if Z.shape[0] < 2:
        return math.inf
    diff = Z[:, None, :] - Z[None, :, :]
    dist = np.sqrt(np.sum(diff * diff, axis=-1))
    dist[np.diag_indices_from(dist)] = np.inf
    return float(dist.min())


def rk_trivial(n_inducing: int, kernel_bound: float) -> float:
    """H eq. (4): ‖k‖₂ ≤ sqrt(|Z|) σ_f² for a kernel with |k| ≤ σ_f² (``kernel_bound``)."""
    return math.sqrt(check_positive_int("n_inducing", n_inducing)) * _check_pos(
        "kernel_bound", kernel_bound)


def _profile_values(k_r: Callable[[np.ndarray], np.ndarray], r: np.ndarray) -> np.ndarray:
    vals = np.asarray(k_r(np.asarray(r, dtype=float)), dtype=float)
    if vals.shape != np.shape(r) or not np.all(np.isfinite(vals)):
        raise ValueError("k_r must map an array of distances to finite values of the same shape")
    if np.any(vals < -1e-12) or np.any(vals > 1 + 1e-12):
        raise ValueError("k_r must take values in [0, 1] (normalised, decreasing profile)")
    if np.any(np.diff(vals) > 1e-12):
        raise ValueError("k_r must be non-increasing in the distance (H §3.2)")
    return vals


def rk_grid1d_paper(n_inducing: int, d_z: float, k_r: Callable[[np.ndarray], np.ndarray],
                    kernel_bound: float) -> float:
    """H eq. (7) **as printed** (1-D inputs, inducing points at least ``d_z`` apart).

    ‖k‖²/σ_f⁴ ≤ Σ_{j=0}^{⌊|Z|/2⌋} 2 k_r(j d_z)² + (⌈|Z|/2⌉ − ⌊|Z|/2⌋) k_r(⌈|Z|/2⌉ d_z)².

    Valid (every term is ≥ 0 and the sum dominates :func:`rk_spacing_1d`) but it
    has |Z| + 2 terms, two of them k_r(0)² = 1, so it can exceed eq. (4).
    """
    m = check_positive_int("n_inducing", n_inducing)
    d_z = _check_pos("d_z", d_z)
    sf2 = _check_pos("kernel_bound", kernel_bound)
    lo, hi = m // 2, (m + 1) // 2
    vals = _profile_values(k_r, d_z * np.arange(lo + 1))
    total = 2.0 * float(np.sum(vals**2))
    if hi != lo:
        total += float(_profile_values(k_r, np.array([hi * d_z]))[0] ** 2)
    return sf2 * math.sqrt(total)


def rk_spacing_1d(n_inducing: int, d_z: float, k_r: Callable[[np.ndarray], np.ndarray],
                  kernel_bound: float) -> float:
    """A tighter valid 1-D bound: ‖k‖²/σ_f⁴ ≤ Σ_{m=0}^{|Z|−1} k_r(m d_z / 2)².

    Proof: an open interval of length 2r holds at most ⌈2r/d_z⌉ points that are
    d_z apart, so the m-th nearest inducing point (0-based) is at distance
    ≥ m d_z/2 from any x; k_r is non-increasing.
    """
    m = check_positive_int("n_inducing", n_inducing)
    d_z = _check_pos("d_z", d_z)
    sf2 = _check_pos("kernel_bound", kernel_bound)
    vals = _profile_values(k_r, 0.5 * d_z * np.arange(m))
    return sf2 * math.sqrt(float(np.sum(vals**2)))


def rk_min_distance(n_inducing: int, d_z: float, k_r: Callable[[np.ndarray], np.ndarray],
                    kernel_bound: float) -> float:
    """H eq. (8), any input dimension: ‖k‖²/σ_f⁴ ≤ 1 + (|Z| − 1) k_r(d_z/2)².

    At most one inducing point can lie closer than d_z/2 to x.
    """
    m = check_positive_int("n_inducing", n_inducing)
    d_z = _check_pos("d_z", d_z)
    sf2 = _check_pos("kernel_bound", kernel_bound)
    kr = float(_profile_values(k_r, np.array([0.0, d_z / 2.0]))[1])
    return sf2 * math.sqrt(1.0 + (m - 1) * kr * kr)


def rk_bound(method: str, Z: np.ndarray, kernel_bound: float,
             k_r: Callable[[np.ndarray], np.ndarray] | None = None) -> float:
    """R_k by name (H Alg. 1, line 1), from the public inducing inputs ``Z``.

    ``"trivial"`` (eq. 4) needs only the kernel bound; ``"grid1d-paper"`` (eq. 7)
    and ``"spacing-1d"`` need 1-D ``Z`` and the normalised radial profile
    ``k_r``; ``"min-distance"`` (eq. 8) needs ``k_r``. Every bound is capped by
    the trivial one, which is always valid.
    """
    Z = as_finite_array("Z", Z, ndim=(1, 2))
    if Z.ndim == 1:
        Z = Z[:, None]
    m = Z.shape[0]
    trivial = rk_trivial(m, kernel_bound)
    if method == "trivial":
        return trivial
    if method not in RK_METHODS:
        raise ValueError(f"method must be one of {RK_METHODS}, got {method!r}")
    if k_r is None:
        raise ValueError(f"R_k method {method!r} needs the radial profile k_r")
    if m == 1:
        return trivial
    d_z = min_pairwise_distance(Z)
    if d_z <= 0:
        raise ValueError("inducing inputs Z contain duplicate points (d_z = 0)")
    if method in ("grid1d-paper", "spacing-1d"):
        if Z.shape[1] != 1:
            raise ValueError(f"R_k method {method!r} (H eq. 7) is for 1-D inputs only; "
                             "use 'min-distance' (eq. 8) in higher dimensions")
        fn = rk_grid1d_paper if method == "grid1d-paper" else rk_spacing_1d
        return min(trivial, fn(m, d_z, k_r, kernel_bound))
    return min(trivial, rk_min_distance(m, d_z, k_r, kernel_bound))
