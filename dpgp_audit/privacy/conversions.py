"""Conversions between zCDP, Rényi DP and (ε, δ)-DP (catalogue P.3).

* zCDP (Bun & Steinke 2016): ρ-zCDP implies (ρ + 2 sqrt(ρ ln(1/δ)), δ)-DP; H eq. (19)
  is the inverse, the largest ρ whose conversion stays within a given (ε, δ).
* Rényi DP of the Gaussian mechanism: ε_α = α Δ² / (2σ²) = α μ²/2; the standard
  conversion ε = ε_α − ln δ / (α − 1) (R App. A.6, eq. 38), optimised over α in
  closed form (R eqs. 39–40).
"""

from __future__ import annotations

import math

from dpgp_audit._validation import check_delta, check_epsilon

__all__ = [
    "gaussian_rdp",
    "rdp_gaussian_epsilon",
    "rdp_gaussian_sigma",
    "rdp_to_epsilon",
    "zcdp_from_epsilon_delta",
    "zcdp_to_epsilon",
]


def zcdp_to_epsilon(rho: float, delta: float) -> float:
    """Return ε with ρ-zCDP ⇒ (ε, δ)-DP: ε = ρ + 2 sqrt(ρ ln(1/δ)) (Bun & Steinke, Prop. 1.3)."""
    if not (rho > 0 and math.isfinite(rho)):
        raise ValueError(f"rho must be finite and > 0, got {rho!r}")
    delta = check_delta(delta)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def zcdp_from_epsilon_delta(epsilon: float, delta: float) -> float:
    """Return ρ = (sqrt(ε + ln(1/δ)) − sqrt(ln(1/δ)))² (H eq. 19).

    The inverse of :func:`zcdp_to_epsilon` in ε.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    log_inv = math.log(1.0 / delta)
    # Rationalised form: avoids cancellation when ε ≪ ln(1/δ).
    root_diff = epsilon / (math.sqrt(epsilon + log_inv) + math.sqrt(log_inv))
    return root_diff * root_diff


def gaussian_rdp(alpha: float, mu: float) -> float:
    """Rényi divergence of order α between N(0, 1) and N(μ, 1): α μ² / 2."""
    if not alpha > 1:
        raise ValueError(f"Renyi order alpha must be > 1, got {alpha!r}")
    return alpha * mu * mu / 2.0


def rdp_to_epsilon(alpha: float, rdp_epsilon: float, delta: float) -> float:
    """(α, ε_α)-RDP implies (ε_α − ln δ / (α − 1), δ)-DP (Mironov 2017, Prop. 3; R eq. 38)."""
    if not alpha > 1:
        raise ValueError(f"Renyi order alpha must be > 1, got {alpha!r}")
    delta = check_delta(delta)
    return rdp_epsilon - math.log(delta) / (alpha - 1.0)


def rdp_gaussian_epsilon(mu: float, delta: float) -> float:
    """ε from the RDP route for a Gaussian mechanism with μ = Δ/σ, at the best order.

    The order α* = sqrt(−2 ln δ)/μ + 1 minimises eq. (38) (R eq. 39), giving
    ε = μ²/2 + μ sqrt(−2 ln δ).
    """
    delta = check_delta(delta)
    if not (mu > 0 and math.isfinite(mu)):
        raise ValueError(f"mu must be finite and > 0, got {mu!r}")
    alpha = math.sqrt(-2.0 * math.log(delta)) / mu + 1.0
    return rdp_to_epsilon(alpha, gaussian_rdp(alpha, mu), delta)


def rdp_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ of the Gaussian mechanism calibrated through RDP (R App. A.6, eq. 40).

    Solves −ε σ² + 2 sqrt(−Δ² ln δ / 2) σ + Δ²/2 = 0 for its positive root.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if not (sensitivity > 0 and math.isfinite(sensitivity)):
        raise ValueError(f"sensitivity must be finite and > 0, got {sensitivity!r}")
    b = 2.0 * math.sqrt(-sensitivity**2 * math.log(delta) / 2.0)
    c = sensitivity**2 / 2.0
    return (b + math.sqrt(b * b + 4.0 * epsilon * c)) / (2.0 * epsilon)
