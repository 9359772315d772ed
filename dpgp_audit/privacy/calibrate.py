"""Noise calibrations for the Gaussian mechanism (catalogue P.1, P.3).

Four ways to turn (ε, δ) and an L2 sensitivity Δ into a noise standard deviation σ:

=============  =======================================  ==========================
method         σ                                        proven for
=============  =======================================  ==========================
``classical``  Δ sqrt(2 ln(1.25/δ)) / ε                 0 < ε ≤ 1 (Dwork & Roth, Thm A.1)
``hall``       Δ c(δ) / ε, c(δ) = sqrt(2 ln(2/δ))       0 < ε ≤ 1 (Hall et al. 2013; S18 eq. 2)
``analytic``   smallest σ, Balle & Wang (2018) Alg. 1   every ε > 0
``gdp``        Δ / μ(ε, δ) (R Thm 4.1)                  every ε > 0
=============  =======================================  ==========================

``analytic`` and ``gdp`` give the same σ — the Gaussian mechanism is exactly
μ-GDP with μ = Δ/σ — but are computed by two independent routes (Balle & Wang's
B± parametrisation versus the GDP profile) and tested against each other.

The two classical formulas are refused above ε = 1 unless the caller opts in with
``allow_unproven=True``; the opt-in warns and the returned
:class:`GaussianCalibration` has ``proven=False`` so that claims built on it are
marked unproven.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import optimize

from dpgp_audit._validation import check_delta, check_epsilon, check_positive_float
from dpgp_audit.privacy.gdp import gdp_mu, log_phi_minus_scaled_phi

__all__ = [
    "CALIBRATION_METHODS",
    "CalibrationRangeError",
    "GaussianCalibration",
    "UnprovenCalibrationWarning",
    "analytic_gaussian_sigma",
    "calibrate_gaussian",
    "check_sensitivity",
    "classical_c",
    "classical_sigma",
    "gdp_sigma",
    "hall_c",
    "hall_sigma",
]

Method = Literal["analytic", "classical", "hall", "gdp"]
CALIBRATION_METHODS: tuple[str, ...] = ("analytic", "classical", "hall", "gdp")
_EPS_PROVEN_MAX = 1.0


class CalibrationRangeError(ValueError):
    """A calibration was asked for outside the range its proof covers."""


class UnprovenCalibrationWarning(UserWarning):
    """A calibration is used outside its proven range on explicit request."""


def check_sensitivity(sensitivity: float) -> float:
    """Return ``sensitivity`` as a float, raising ``ValueError`` unless finite and > 0."""
    return check_positive_float("sensitivity", sensitivity)


def _check_proven_range(method: str, epsilon: float, allow_unproven: bool) -> bool:
    if epsilon <= _EPS_PROVEN_MAX:
        return True
    if not allow_unproven:
        raise CalibrationRangeError(
            f"the {method} Gaussian calibration is proven only for epsilon <= 1 "
            f"(got epsilon={epsilon:g}); use method='analytic' or method='gdp', which are "
            "exact for every epsilon, or pass allow_unproven=True to reproduce a paper's "
            "out-of-range setting (the claim is then marked unproven)"
        )
    warnings.warn(
        f"{method} calibration used at epsilon={epsilon:g} > 1, outside its proof; "
        "the resulting claim is marked unproven",
        UnprovenCalibrationWarning,
        stacklevel=3,
    )
    return False


def classical_c(delta: float) -> float:
    """Return c = sqrt(2 ln(1.25/δ)), the classical Gaussian-mechanism constant."""
    return math.sqrt(2.0 * math.log(1.25 / check_delta(delta)))


def hall_c(delta: float) -> float:
    """c(δ) = sqrt(2 ln(2/δ)) of Hall et al. (2013), S18 eq. (2)."""
    return math.sqrt(2.0 * math.log(2.0 / check_delta(delta)))


def classical_sigma(epsilon: float, delta: float, sensitivity: float = 1.0, *,
                    allow_unproven: bool = False) -> float:
    """σ = Δ sqrt(2 ln(1.25/δ)) / ε (Dwork & Roth 2014, Thm A.1; proven for ε ≤ 1)."""
    return calibrate_gaussian(epsilon, delta, sensitivity, "classical",
                              allow_unproven=allow_unproven).sigma


def hall_sigma(epsilon: float, delta: float, sensitivity: float = 1.0, *,
               allow_unproven: bool = False) -> float:
    """σ = Δ c(δ) / ε with c(δ) = sqrt(2 ln(2/δ)) (S18 eq. 2; proven for ε ≤ 1)."""
    return calibrate_gaussian(epsilon, delta, sensitivity, "hall",
                              allow_unproven=allow_unproven).sigma


@functools.lru_cache(maxsize=256)
def _balle_wang_alpha(epsilon: float, delta: float) -> float:
    """The factor α of Balle & Wang (2018), Alg. 1, with σ = α Δ / sqrt(2ε).

    Kept by value (a pure function of two checked floats; issue 20 §2): a mechanism that
    calibrates σ inside every ``sample`` call pays one root search per (ε, δ), not per call.

    δ₀ = Φ(0) − e^ε Φ(−sqrt(2ε)) splits two cases. With
    B⁺(v) = Φ(sqrt(εv)) − e^ε Φ(−sqrt(ε(v + 2))) (increasing from δ₀) and
    B⁻(u) = Φ(−sqrt(εu)) − e^ε Φ(−sqrt(ε(u + 2))) (decreasing from δ₀):
    if δ ≥ δ₀, solve B⁺(v*) = δ and α = sqrt(1 + v*/2) − sqrt(v*/2);
    else solve B⁻(u*) = δ and α = sqrt(1 + u*/2) + sqrt(u*/2).
    Both B's are evaluated in the log domain.
    """

    def log_b(sign: float, w: float) -> float:
        # B±(w) = Φ(±sqrt(εw)) − e^ε Φ(−sqrt(ε(w + 2))), and (εw) + 2ε = ε(w + 2).
        return log_phi_minus_scaled_phi(sign * math.sqrt(epsilon * w), epsilon)

    log_delta = math.log(delta)
    log_delta0 = log_b(1.0, 0.0)
    sign = 1.0 if log_delta >= log_delta0 else -1.0
    if log_delta == log_delta0:
        return 1.0
    # Solve in log w: both B's are monotone in w on (0, inf).
    f = lambda lw: sign * (log_b(sign, math.exp(lw)) - log_delta)  # noqa: E731
    lo, hi = -60.0, 0.0
    while f(hi) < 0:
        hi += 2.0
    w = math.exp(optimize.brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps,
                                 maxiter=500))
    # B⁺ branch (sign = +1): α = sqrt(1 + v/2) − sqrt(v/2);
    # B⁻ branch (sign = −1): α = sqrt(1 + u/2) + sqrt(u/2).
    return math.sqrt(1.0 + w / 2.0) - sign * math.sqrt(w / 2.0)


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The analytic Gaussian mechanism: the smallest σ giving (ε, δ)-DP (Balle & Wang 2018, Alg. 1).

    Valid for every ε > 0 (H §2.1). Accurate to about 1e-12 relative for
    ε up to 50 and δ down to 1e-12 (tested against dp-accounting and mpmath).
    """
    return calibrate_gaussian(epsilon, delta, sensitivity, "analytic").sigma


def gdp_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Return σ = Δ/μ(ε, δ): the Gaussian mechanism calibrated through GDP (R Thm 4.1)."""
    return calibrate_gaussian(epsilon, delta, sensitivity, "gdp").sigma


@dataclass(frozen=True)
class GaussianCalibration:
    """The outcome of a Gaussian calibration: σ and what it rests on."""

    method: str
    epsilon: float
    delta: float
    sensitivity: float
    sigma: float
    proven: bool

    @property
    def multiplier(self) -> float:
        """σ / Δ: the noise per unit of sensitivity."""
        return self.sigma / self.sensitivity

    @property
    def mu(self) -> float:
        """Δ/σ: the exact GDP parameter of the resulting Gaussian mechanism."""
        return self.sensitivity / self.sigma

    def as_dict(self) -> dict:
        """JSON-ready record of the inputs and the result."""
        return {"method": self.method, "epsilon": self.epsilon, "delta": self.delta,
                "sensitivity": self.sensitivity, "sigma": self.sigma, "proven": self.proven}


def calibrate_gaussian(epsilon: float, delta: float, sensitivity: float = 1.0,
                       method: Method = "analytic", *,
                       allow_unproven: bool = False) -> GaussianCalibration:
    """Calibrate a Gaussian mechanism (catalogue P.1).

    Parameters
    ----------
    epsilon, delta
        Target (ε, δ); ε > 0, δ in (0, 1).
    sensitivity
        L2 sensitivity Δ of the released query (for the functional mechanism, the
        RKHS sensitivity).
    method
        ``"analytic"`` (default), ``"gdp"``, ``"classical"`` or ``"hall"``.
    allow_unproven
        Permit ``classical``/``hall`` at ε > 1 (warns; ``proven=False``).

    Returns
    -------
    GaussianCalibration

    Raises
    ------
    ValueError
        Invalid ε, δ, Δ or method.
    CalibrationRangeError
        ``classical``/``hall`` at ε > 1 without ``allow_unproven``.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_sensitivity(sensitivity)
    proven = True
    if method == "classical":
        proven = _check_proven_range(method, epsilon, allow_unproven)
        multiplier = classical_c(delta) / epsilon
    elif method == "hall":
        proven = _check_proven_range(method, epsilon, allow_unproven)
        multiplier = hall_c(delta) / epsilon
    elif method == "analytic":
        multiplier = _balle_wang_alpha(epsilon, delta) / math.sqrt(2.0 * epsilon)
    elif method == "gdp":
        multiplier = 1.0 / gdp_mu(epsilon, delta)
    else:
        raise ValueError(f"method must be one of {CALIBRATION_METHODS}, got {method!r}")
    return GaussianCalibration(method, epsilon, delta, sensitivity, multiplier * sensitivity,
                               proven)
