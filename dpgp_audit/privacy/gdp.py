"""Gaussian differential privacy: profiles, inverses and composition (catalogue P.3).

For μ-GDP the privacy profile is (R eq. 5; Dong, Roth & Su 2022, Cor. 2.13)

    δ(ε; μ) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).

It is exact for the Gaussian mechanism with L2 sensitivity Δ and noise σ at
μ = Δ/σ, which is why the analytic Gaussian mechanism of Balle & Wang (2018) is
"solve δ(ε; μ) = δ for μ". Everything here is computed in the log domain with
``scipy.special.log_ndtr`` so that δ down to 1e-300 and ε up to several hundred
keep full relative precision.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from scipy import optimize, special

from dpgp_audit._validation import check_delta, check_epsilon, check_positive_float

__all__ = [
    "gdp_compose",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_log_delta",
    "gdp_mu",
    "gdp_tradeoff",
]

_MU_MAX = 1e4  # beyond this, δ(ε) = 1 − (something below 1e-300): the claim says nothing


def _log_sub_exp(a: float, b: float) -> float:
    """log(e^a − e^b) for a ≥ b, accurate when the two are close."""
    if b == -math.inf:
        return a
    x = b - a
    if x > 0:
        raise ValueError("log_sub_exp needs a >= b")
    if x == 0:
        return -math.inf
    # log(1 - e^x): log1p(-e^x) is accurate for x < -ln 2, log(-expm1(x)) above.
    return a + (math.log1p(-math.exp(x)) if x < -math.log(2) else math.log(-math.expm1(x)))


def log_phi_minus_scaled_phi(a: float, epsilon: float) -> float:
    """log(Φ(a) − e^ε Φ(b)) with b = −sqrt(a² + 2ε) ≤ a.

    Both the GDP profile (a = −ε/μ + μ/2, b = a − μ) and the B± functions of
    Balle & Wang's Alg. 1 have this form. Because b² = a² + 2ε, the Gaussian
    densities satisfy e^ε φ(b) = φ(a); with the scaled complementary error
    function Φ(x) = ½ erfcx(−x/√2) e^{−x²/2} this gives, for a < 0,

        Φ(a) − e^ε Φ(b) = ½ e^{−a²/2} [erfcx(−a/√2) − erfcx(−b/√2)],

    which has no catastrophic cancellation even when both terms underflow.
    For a ≥ 0, Φ(a) ≥ ½ and the log-domain difference is accurate.
    """
    b = -math.sqrt(a * a + 2.0 * epsilon)
    if a < 0:
        diff = float(special.erfcx(-a / math.sqrt(2.0)) - special.erfcx(-b / math.sqrt(2.0)))
        if diff <= 0.0:  # below floating-point resolution: δ is 0 to working precision
            return -math.inf
        return math.log(0.5) - a * a / 2.0 + math.log(diff)
    return _log_sub_exp(float(special.log_ndtr(a)), epsilon + float(special.log_ndtr(b)))


def gdp_log_delta(epsilon: float, mu: float) -> float:
    """Return log δ(ε; μ), the log privacy profile of μ-GDP (R eq. 5), for ε ≥ 0."""
    epsilon = float(epsilon)
    mu = check_positive_float("mu", mu)
    if epsilon < 0 or not math.isfinite(epsilon):
        raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}")
    # R eq. (5) with a = −ε/μ + μ/2 and b = a − μ = −sqrt(a² + 2ε).
    return log_phi_minus_scaled_phi(-epsilon / mu + mu / 2.0, epsilon)


def gdp_delta(epsilon: float, mu: float) -> float:
    """δ(ε; μ) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (R eq. 5).

    Parameters
    ----------
    epsilon
        ε ≥ 0.
    mu
        The GDP parameter μ > 0.

    Returns
    -------
    float
        The smallest δ such that a μ-GDP mechanism is (ε, δ)-DP.
    """
    return math.exp(gdp_log_delta(epsilon, mu))


def gdp_epsilon(delta: float, mu: float) -> float:
    """ε(δ; μ): the smallest ε ≥ 0 with δ(ε; μ) ≤ δ (inverse of :func:`gdp_delta` in ε)."""
    delta = check_delta(delta)
    mu = float(mu)
    log_target = math.log(delta)
    if gdp_log_delta(0.0, mu) <= log_target:
        return 0.0
    # δ(ε) is decreasing in ε; bracket by doubling (ε ≤ μ²/2 + μ·sqrt(2 ln(1/δ)) + 1).
    hi = mu * mu / 2.0 + mu * math.sqrt(2.0 * math.log(1.0 / delta)) + 1.0
    while gdp_log_delta(hi, mu) > log_target:
        hi *= 2.0
    return optimize.brentq(lambda e: gdp_log_delta(e, mu) - log_target, 0.0, hi,
                           xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500)


def gdp_mu(epsilon: float, delta: float) -> float:
    """μ(ε, δ): the largest μ such that μ-GDP implies (ε, δ)-DP.

    This is the analytic Gaussian calibration of Balle & Wang (2018, Thm 8) in GDP
    form: a Gaussian mechanism with L2 sensitivity Δ is (ε, δ)-DP exactly when
    σ ≥ Δ / μ(ε, δ).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    log_target = math.log(delta)
    # log δ(ε; μ) is increasing in μ. Solve in log μ for uniform relative accuracy.
    f = lambda log_mu: gdp_log_delta(epsilon, math.exp(log_mu)) - log_target  # noqa: E731
    lo, hi = math.log(1e-3), math.log(1.0)
    while f(lo) > 0:
        lo -= 2.0
    while f(hi) < 0:
        hi += 1.0
        if hi > math.log(_MU_MAX):
            raise ValueError(f"no mu <= {_MU_MAX:g} reaches delta={delta!r} at epsilon={epsilon!r}")
    log_mu = optimize.brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    return math.exp(log_mu)


def gdp_compose(mus: Iterable[float]) -> float:
    """Composition of GDP mechanisms: μ = sqrt(Σ μ_i²) (Dong, Roth & Su, Cor. 3.3)."""
    values = np.asarray(list(mus), dtype=float)
    if values.size == 0:
        raise ValueError("gdp_compose needs at least one mu")
    if not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(f"every mu must be finite and > 0, got {values.tolist()}")
    return float(np.sqrt(np.sum(values**2)))


def gdp_tradeoff(alpha: np.ndarray | float, mu: float) -> np.ndarray:
    """Trade-off curve G_μ(α) = Φ(Φ⁻¹(1 − α) − μ): the smallest type-II error at type-I α."""
    alpha = np.asarray(alpha, dtype=float)
    return special.ndtr(special.ndtri(1.0 - alpha) - mu)
