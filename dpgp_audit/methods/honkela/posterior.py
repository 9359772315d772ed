"""Noise-aware DP posterior q(u) from privatised statistics (catalogue H.2).

Given the released Ã = A + E_a and B̃ = B + E_b (E_b symmetric, Var(E_b,ii) = σ_b²,
Var(E_b,ij) = σ_b²/2), H eq. (9) forms

    Σ̃ = (K_ZZ + σ⁻² B̃ + λ I)⁻¹,   m = σ⁻² K_ZZ Σ̃ Ã,   S = K_ZZ Σ̃ K_ZZ + S_{2,1} + S_{2,2},

with the regulariser λ of H eq. (10) and the covariance corrections of H eqs.
(11)–(14). With M = K_ZZ Σ̃ and v = Σ̃ Ã the corrections collapse to O(|Z|³)
matrix products (no loop over the |Z|² unit matrices E_ij):

* S_{2,1} = σ_a² σ⁻⁴ M Mᵀ                                          (H eq. 11)
* S_{2,2} (H eq. 14 as printed) = σ_b² σ⁻⁸ M diag(½ (v² + ‖v‖²)) Mᵀ
  (the i-th diagonal term gives v_i² M_i M_iᵀ; the pair i < j gives
  ½ (v_j² M_i M_iᵀ + v_i² M_j M_jᵀ); summing, column i of M carries
  v_i² + ½ Σ_{j≠i} v_j²);
* S_{2,2} ("symmetric", the exact first-order covariance when E_b is
  symmetric, so one noise entry moves B̃_ij and B̃_ji together and
  ∂m/∂e_ij = −σ⁻⁴ (v_j M_i + v_i M_j)) = ½ σ_b² σ⁻⁸ (‖v‖² M Mᵀ + (M v)(M v)ᵀ).

H eq. (14) drops the cross terms v_i v_j (M_i M_jᵀ + M_j M_iᵀ) because it treats
the (i, j) and (j, i) perturbations as independent. Both variants are offered;
``tests/methods/honkela/test_posterior.py`` checks each against a loop over E_ij and the
symmetric one against Monte Carlo.

The regulariser makes the matrix positive definite only with high probability.
:func:`pd_failure_rate` measures how often it fails in the worst case
K_ZZ + σ⁻² B → 0; :func:`noise_aware_qu` raises :class:`RegularisationError`
on failure, or (``on_not_pd="inflate"``) doubles λ until the matrix is PD. The
inflation depends only on released quantities, so it is post-processing and
costs no privacy; it is recorded in the result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import linalg

from dpgp_audit._validation import as_finite_array, check_positive_int, check_rng

__all__ = [
    "DPQU",
    "Correction",
    "RegularisationError",
    "noise_aware_qu",
    "pd_failure_rate",
    "regulariser_lambda",
    "s21",
    "s22_paper",
    "s22_symmetric",
    "symmetric_noise",
]

Correction = Literal["paper", "symmetric", "none"]


class RegularisationError(ValueError):
    """K_ZZ + σ⁻² B̃ + λ I is not positive definite: the regulariser of H eq. (10) failed."""


def regulariser_lambda(sigma_b: float, noise_var: float, n_inducing: int,
                       rho: float = 0.01) -> float:
    """λ = σ_b σ⁻² sqrt(|Z| log(2|Z|²/ρ)) (|Z| + 1)/(2|Z|) (H eq. 10).

    For the heteroscedastic variant (H eq. 41) pass ``noise_var=1``.
    """
    d = check_positive_int("n_inducing", n_inducing)
    if not (0 < rho < 1):
        raise ValueError(f"rho must lie in (0, 1), got {rho!r}")
    if not (sigma_b >= 0 and math.isfinite(sigma_b)):
        raise ValueError(f"sigma_b must be finite and >= 0, got {sigma_b!r}")
    if not (noise_var > 0 and math.isfinite(noise_var)):
        raise ValueError(f"noise_var must be finite and > 0, got {noise_var!r}")
    return (sigma_b / noise_var * math.sqrt(d * math.log(2.0 * d * d / rho))
            * (d + 1) / (2.0 * d))


def symmetric_noise(sigma_b: float, d: int, shape: tuple[int, ...],
                    rng: np.random.Generator) -> np.ndarray:
    """Draws of E_b, shape (*shape, d, d): symmetric, N(0, σ_b²) diagonal, N(0, σ_b²/2) off it.

    This is the law of upper_unvec(e) for e ~ N(0, σ_b² I) (H §3.3).
    """
    rng = check_rng(rng)
    G = rng.standard_normal((*shape, d, d)) * sigma_b
    # (G + Gᵀ)/2 has off-diagonal variance σ_b²/2 and diagonal variance σ_b²
    return 0.5 * (G + np.swapaxes(G, -1, -2))


def s21(M: np.ndarray, sigma_a: float, noise_var: float) -> np.ndarray:
    """S_{2,1} = σ_a² σ⁻⁴ K_ZZ Σ̃² K_ZZ = σ_a² σ⁻⁴ M Mᵀ with M = K_ZZ Σ̃ (H eq. 11)."""
    return (sigma_a**2 / noise_var**2) * (M @ M.T)


def s22_paper(M: np.ndarray, v: np.ndarray, sigma_b: float, noise_var: float) -> np.ndarray:
    """S_{2,2} of H eq. (14) as printed, collapsed: σ_b² σ⁻⁸ M diag(½(v² + ‖v‖²)) Mᵀ."""
    w = 0.5 * (v * v + float(v @ v))
    return (sigma_b**2 / noise_var**4) * ((M * w) @ M.T)


def s22_symmetric(M: np.ndarray, v: np.ndarray, sigma_b: float, noise_var: float) -> np.ndarray:
    """Exact linearised covariance of m for symmetric E_b: ½ σ_b² σ⁻⁸ (‖v‖² M Mᵀ + (Mv)(Mv)ᵀ)."""
    Mv = M @ v
    return (0.5 * sigma_b**2 / noise_var**4) * (float(v @ v) * (M @ M.T) + np.outer(Mv, Mv))


@dataclass(frozen=True)
class DPQU:
    """The noise-aware q(u) = N(m, S) and how it was formed (H eq. 9).

    Attributes
    ----------
    m, S
        Mean and covariance (S = K Σ̃ K + S_{2,1} + S_{2,2}).
    lam
        The regulariser actually used (eq. 10, times 2^inflations).
    inflations
        How many times λ was doubled to reach positive definiteness (0 normally).
    S21, S22
        The two correction terms (zeros for ``correction="none"``).
    correction
        ``"paper"`` (eq. 14), ``"symmetric"`` or ``"none"`` (the naive variant).
    """

    m: np.ndarray
    S: np.ndarray
    lam: float
    inflations: int
    S21: np.ndarray
    S22: np.ndarray
    correction: str


def noise_aware_qu(Kzz: np.ndarray, A_noisy: np.ndarray, B_noisy: np.ndarray, noise_var: float,
                   sigma_a: float, sigma_b: float, *, rho: float = 0.01,
                   correction: Correction = "paper", lam: float | None = None,
                   on_not_pd: Literal["raise", "inflate"] = "raise",
                   max_inflations: int = 60) -> DPQU:
    """The DP posterior q(u) of H eq. (9) with the corrections of eqs. (11)–(15).

    Parameters
    ----------
    Kzz
        Prior covariance of the inducing inputs (public).
    A_noisy, B_noisy
        Released Ã (m,) and symmetric B̃ (m, m).
    noise_var
        Observation noise variance σ² (1 for the heteroscedastic form, H eq. 38).
    sigma_a, sigma_b
        Noise standard deviations of the release (σ_b on the √2-scaled b̂).
    rho
        Failure probability target of eq. (10).
    correction
        ``"paper"`` (H eq. 14), ``"symmetric"`` (exact linearisation) or
        ``"none"`` (the naive variant of H Fig. 2: λ kept, S₂ dropped).
    lam
        Override λ (default: eq. 10).
    on_not_pd
        ``"raise"`` (default): :class:`RegularisationError`. ``"inflate"``: double
        λ until the Cholesky succeeds (post-processing; recorded in ``inflations``).
    """
    Kzz = as_finite_array("Kzz", Kzz, ndim=2)
    A_noisy = as_finite_array("A_noisy", A_noisy, ndim=1)
    B_noisy = as_finite_array("B_noisy", B_noisy, ndim=2)
    d = Kzz.shape[0]
    if A_noisy.shape != (d,) or B_noisy.shape != (d, d):
        raise ValueError(f"shapes do not match |Z| = {d}: A {A_noisy.shape}, B {B_noisy.shape}")
    if correction not in ("paper", "symmetric", "none"):
        raise ValueError(f"correction must be 'paper', 'symmetric' or 'none', got {correction!r}")
    if on_not_pd not in ("raise", "inflate"):
        raise ValueError(f"on_not_pd must be 'raise' or 'inflate', got {on_not_pd!r}")
    lam0 = regulariser_lambda(sigma_b, noise_var, d, rho) if lam is None else float(lam)
    base = Kzz + 0.5 * (B_noisy + B_noisy.T) / noise_var
    inflations = 0
    lam_used = lam0
    while True:
        try:
            L = linalg.cholesky(base + lam_used * np.eye(d), lower=True)
            break
        except linalg.LinAlgError:
            if on_not_pd == "raise":
                w = float(np.linalg.eigvalsh(base)[0])
                raise RegularisationError(
                    "K_ZZ + B/sigma^2 + lambda I is not positive definite "
                    f"(lambda = {lam_used:.4g}, min eigenvalue of K_ZZ + B/sigma^2 = {w:.4g}) "
                    "- the regulariser of "
                    "H eq. (10) fails with probability about rho. Pass on_not_pd='inflate' to "
                    "double lambda until it is (post-processing, no privacy cost)") from None
            inflations += 1
            if inflations > max_inflations:
                raise RegularisationError("lambda inflation did not reach positive "
                                          "definiteness") from None
            lam_used = 2.0 * lam_used if lam_used > 0 else 1e-12 * max(1.0, np.abs(base).max())
    Sigma = linalg.cho_solve((L, True), np.eye(d))
    Sigma = 0.5 * (Sigma + Sigma.T)
    M = Kzz @ Sigma
    v = Sigma @ A_noisy
    m = M @ A_noisy / noise_var
    S_main = M @ Kzz
    zeros = np.zeros((d, d))
    if correction == "none":
        S1, S2 = zeros, zeros
    else:
        S1 = s21(M, sigma_a, noise_var)
        S2 = (s22_paper if correction == "paper" else s22_symmetric)(M, v, sigma_b, noise_var)
    S = S_main + S1 + S2
    return DPQU(m, 0.5 * (S + S.T), lam_used, inflations, S1, S2, correction)


def pd_failure_rate(n_inducing: int, n_trials: int, rng: np.random.Generator, *,
                    rho: float = 0.01, base: np.ndarray | None = None,
                    sigma_b: float = 1.0, noise_var: float = 1.0) -> float:
    """Monte Carlo frequency with which K_ZZ + σ⁻² (B + E_b) + λ I is not PD (H eq. 10).

    ``base`` is K_ZZ + σ⁻² B (default 0: the limiting worst case of tiny kernel
    eigenvalues, where failure means λ_min(E_b) < −λ σ²). Returns the fraction
    of ``n_trials`` draws that fail.
    """
    d = check_positive_int("n_inducing", n_inducing)
    n_trials = check_positive_int("n_trials", n_trials)
    lam = regulariser_lambda(sigma_b, noise_var, d, rho)
    base = np.zeros((d, d)) if base is None else np.asarray(base, dtype=float)
    fails = 0
    for start in range(0, n_trials, 20000):
        k = min(20000, n_trials - start)
        E = symmetric_noise(sigma_b, d, (k,), rng)
        w = np.linalg.eigvalsh(base + E / noise_var + lam * np.eye(d))[..., 0]
        fails += int(np.count_nonzero(w <= 0))
    return fails / n_trials
