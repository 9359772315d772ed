"""S18.5 — Varah's bound on ‖J⁻¹‖∞ for strictly diagonally dominant J (S18-supp,
"Privacy on the training inputs"; Varah 1975).

If Δ_i(J) = |J_ii| − Σ_{j≠i} |J_ij| > 0 for every row i, then
‖J⁻¹‖∞ ≤ max_i 1/Δ_i(J). S18-supp uses it to bound the change of α = K⁻¹y without
knowing the (private) inputs: any covariance matrix that is strictly diagonally dominant
(inputs far enough apart, or enough observation noise) obeys the same bound.
"""

from __future__ import annotations

import numpy as np

from dpgp_audit._validation import as_finite_array

__all__ = ["diagonal_dominance", "is_strictly_diagonally_dominant", "varah_bound"]


def diagonal_dominance(J: np.ndarray) -> np.ndarray:
    """Δ_i(J) = |J_ii| − Σ_{j≠i} |J_ij| for every row."""
    J = as_finite_array("J", J, ndim=2)
    if J.shape[0] != J.shape[1]:
        raise ValueError(f"J must be square, got shape {J.shape}")
    A = np.abs(J)
    diag = np.diag(A)
    return diag - (A.sum(axis=1) - diag)


def is_strictly_diagonally_dominant(J: np.ndarray) -> bool:
    """True when Δ_i(J) > 0 for every row."""
    return bool(np.all(diagonal_dominance(J) > 0))


def varah_bound(J: np.ndarray) -> float:
    """Varah's bound max_i 1/Δ_i(J) ≥ ‖J⁻¹‖∞ (Varah 1975).

    Raises ``ValueError`` unless J is strictly diagonally dominant (the bound does not
    apply otherwise).
    """
    dom = diagonal_dominance(J)
    if not np.all(dom > 0):
        i = int(np.argmin(dom))
        raise ValueError(f"J is not strictly diagonally dominant (row {i}: "
                         f"|J_ii| - sum_j |J_ij| = {dom[i]:.3g} <= 0); Varah's bound needs "
                         "more observation noise or inputs further apart")
    return float(np.max(1.0 / dom))
