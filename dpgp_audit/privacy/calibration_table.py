"""Tables of the Gaussian calibrations over a grid of ε (catalogue P.1, P.3), for teaching plots.

No new formulas: every value comes from :mod:`dpgp_audit.privacy.calibrate` and
:mod:`dpgp_audit.privacy.gdp`. What this adds is the bookkeeping a comparison
needs: refused calibrations become NaN (so a plot shows a gap, not a number the
proof does not cover), and the *true* ε of a given σ is the exact privacy of the
Gaussian mechanism, read off its GDP profile (R eq. 5) at μ = Δ/σ.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence

import numpy as np

from dpgp_audit._validation import check_delta
from dpgp_audit.privacy.calibrate import (
    CALIBRATION_METHODS,
    CalibrationRangeError,
    UnprovenCalibrationWarning,
    calibrate_gaussian,
    check_sensitivity,
)
from dpgp_audit.privacy.gdp import gdp_delta, gdp_epsilon

__all__ = ["calibration_sigmas", "privacy_profile", "true_epsilon", "true_epsilons"]


def calibration_sigmas(epsilons: Iterable[float], delta: float, sensitivity: float = 1.0,
                       methods: Sequence[str] = CALIBRATION_METHODS, *,
                       allow_unproven: bool = False,
                       progress: bool = False) -> dict[str, np.ndarray]:
    """σ of each calibration method at each ε.

    Parameters
    ----------
    epsilons
        Grid of ε > 0.
    delta, sensitivity
        δ in (0, 1) and the L2 sensitivity Δ.
    methods
        Names accepted by :func:`~dpgp_audit.privacy.calibrate.calibrate_gaussian`.
    allow_unproven
        ``False`` (default): a refused calibration (classical/Hall above ε = 1)
        gives NaN. ``True``: compute it anyway, silencing the
        ``UnprovenCalibrationWarning`` — for showing what the out-of-range
        formula would really deliver (see :func:`true_epsilons`).
    progress
        Show a tqdm progress bar over the grid.

    Returns
    -------
    dict
        ``method -> array of σ`` with the shape of ``epsilons``.
    """
    from tqdm.auto import tqdm

    eps = np.asarray(list(epsilons), dtype=float)
    check_delta(delta)
    check_sensitivity(sensitivity)
    out = {m: np.full(eps.shape, np.nan) for m in methods}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnprovenCalibrationWarning)
        for i, e in enumerate(tqdm(eps, disable=not progress, desc="calibrating")):
            for m in methods:
                try:
                    out[m][i] = calibrate_gaussian(e, delta, sensitivity, m,
                                                   allow_unproven=allow_unproven).sigma
                except CalibrationRangeError:
                    pass
    return out


def true_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """The exact ε at ``delta`` of a Gaussian mechanism with noise σ and L2 sensitivity Δ.

    The mechanism is exactly μ-GDP with μ = Δ/σ, so ε = ε(δ; μ) of the GDP
    profile (R eq. 5). NaN in gives NaN out (a refused calibration).
    """
    if math.isnan(sigma):
        return math.nan
    if not (sigma > 0 and math.isfinite(sigma)):
        raise ValueError(f"sigma must be finite and > 0, got {sigma!r}")
    return gdp_epsilon(delta, check_sensitivity(sensitivity) / sigma)


def true_epsilons(sigmas: Iterable[float], delta: float,
                  sensitivity: float = 1.0) -> np.ndarray:
    """:func:`true_epsilon` for each σ (NaN stays NaN)."""
    return np.array([true_epsilon(float(s), delta, sensitivity) for s in sigmas])


def privacy_profile(epsilons: Iterable[float], mu: float) -> np.ndarray:
    """δ(ε; μ) of μ-GDP (R eq. 5) at each ε ≥ 0 of the grid."""
    return np.array([gdp_delta(float(e), mu) for e in epsilons])
