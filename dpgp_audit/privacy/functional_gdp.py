"""R Fig. 4: the functional mechanism's noise under three analyses (catalogue R.1).

The functional mechanism (Hall et al. 2013; R Def. 3.3) releases ``f_D + c·g``
with ``g`` a path of a zero-mean GP whose covariance ``k`` is the reproducing
kernel of the RKHS that bounds the sensitivity
``Δ = sup ||f_D − f_D'||_H``. Any finite set of evaluations of the release is a
Gaussian mechanism with noise ``c² K`` and Mahalanobis sensitivity at most ``Δ``
(R Lemma A.3), so every calibration of the Gaussian mechanism carries over:

==============  =========================================================  ================
curve           multiplier c                                               valid for
==============  =========================================================  ================
``classical``   Δ sqrt(2 ln(2/δ)) / ε  (Hall et al., R Thm 3.3)             0 < ε ≤ 1 only
``rdp``         positive root of R eq. (40) (Jiang et al. 2023, Cor. 2)     every ε > 0
``gdp``         Δ / μ(ε, δ)  (R Thm 4.1, μ solved from R eq. 5)             every ε > 0
==============  =========================================================  ================

The GDP multiplier is exact for the Gaussian mechanism, so it is never larger
than either of the other two; at Δ² = 10, δ = 1e-3, ε = 1 it is about 34 % below
the classical one (R §4.1, Fig. 4). The multipliers themselves come from
:func:`dpgp_audit.privacy.functional.functional_mechanism_scale` (GDP and Hall)
and :func:`dpgp_audit.privacy.conversions.rdp_gaussian_sigma` (RDP).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import as_finite_array, check_delta
from dpgp_audit.privacy.calibrate import check_sensitivity
from dpgp_audit.privacy.conversions import rdp_gaussian_sigma
from dpgp_audit.privacy.functional import functional_mechanism_scale

__all__ = [
    "FunctionalNoiseCurves",
    "functional_noise_comparison",
]


@dataclass(frozen=True)
class FunctionalNoiseCurves:
    """The three noise multipliers of R Fig. 4 on a grid of ε.

    Attributes
    ----------
    epsilon
        The ε grid, shape (m,).
    classical
        Hall et al.'s multiplier; ``NaN`` where ε > 1 (outside its proof).
    rdp
        The RDP-based multiplier of Jiang et al. (R eqs. 38–40).
    gdp
        The GDP multiplier of R Thm 4.1.
    delta
        The δ of every curve.
    sensitivity_sq
        Δ², the squared RKHS sensitivity.
    """

    epsilon: np.ndarray
    classical: np.ndarray
    rdp: np.ndarray
    gdp: np.ndarray
    delta: float
    sensitivity_sq: float

    def reduction(self, versus: str = "classical") -> np.ndarray:
        """Relative noise saving of GDP, ``1 − c_gdp / c_versus`` (NaN where undefined)."""
        if versus not in ("classical", "rdp"):
            raise ValueError(f"versus must be 'classical' or 'rdp', got {versus!r}")
        return 1.0 - self.gdp / getattr(self, versus)


def functional_noise_comparison(epsilons: np.ndarray | list[float], *, delta: float = 1e-3,
                                sensitivity_sq: float = 10.0) -> FunctionalNoiseCurves:
    """R Fig. 4: the functional-mechanism noise multiplier under three analyses.

    Parameters
    ----------
    epsilons
        ε values (each > 0).
    delta
        δ of the (ε, δ) target, in (0, 1). R Fig. 4 uses 1e-3.
    sensitivity_sq
        Squared RKHS sensitivity Δ². R Fig. 4 uses 10.

    Returns
    -------
    FunctionalNoiseCurves
        The classical curve is ``NaN`` above ε = 1, where Hall et al.'s bound
        is not proven (R Fig. 4 cuts it there).
    """
    eps = as_finite_array("epsilons", epsilons, ndim=1)
    if eps.size == 0 or np.any(eps <= 0):
        raise ValueError("epsilons must be a non-empty 1-D array of values > 0")
    delta = check_delta(delta)
    sens = math.sqrt(check_sensitivity(sensitivity_sq))
    classical = np.array([functional_mechanism_scale(e, delta, sens, "hall") if e <= 1.0
                          else np.nan for e in eps])
    rdp = np.array([rdp_gaussian_sigma(e, delta, sens) for e in eps])
    gdp = np.array([functional_mechanism_scale(e, delta, sens, "gdp") for e in eps])
    return FunctionalNoiseCurves(epsilon=eps, classical=classical, rdp=rdp, gdp=gdp,
                                 delta=delta, sensitivity_sq=float(sensitivity_sq))
