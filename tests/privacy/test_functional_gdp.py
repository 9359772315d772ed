"""R.1: the GDP functional mechanism (R Thm 4.1) and the noise comparison of R Fig. 4.

References are computed independently of the package: Hall's multiplier by its
closed form, the GDP multiplier by bisection on R eq. (5) written with
``scipy.stats.norm`` (not the package's log-domain profile), and the RDP
multiplier by numerically minimising R eq. (38) over the order α (not the closed
form of R eqs. 39–40).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from dpgp_audit.privacy.functional_gdp import functional_noise_comparison

DELTA = 1e-3
SENS_SQ = 10.0


def _gdp_delta_plain(eps: float, mu: float) -> float:
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


def _gdp_sigma_reference(eps: float, delta: float, sens: float) -> float:
    mu = optimize.brentq(lambda m: _gdp_delta_plain(eps, m) - delta, 1e-3, 50.0, xtol=1e-14)
    return sens / mu


def _rdp_sigma_reference(eps: float, delta: float, sens: float) -> float:
    def eps_of_sigma(sigma: float) -> float:
        obj = lambda a: a * sens**2 / (2 * sigma**2) - math.log(delta) / (a - 1)  # noqa: E731
        res = optimize.minimize_scalar(obj, bounds=(1.0 + 1e-9, 1e6), method="bounded",
                                       options={"xatol": 1e-12})
        return res.fun

    return optimize.brentq(lambda s: eps_of_sigma(s) - eps, 1e-2, 1e4, xtol=1e-12)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 4.0])
def test_r1_curves_match_independent_references(eps):
    curves = functional_noise_comparison([eps], delta=DELTA, sensitivity_sq=SENS_SQ)
    sens = math.sqrt(SENS_SQ)
    assert curves.gdp[0] == pytest.approx(_gdp_sigma_reference(eps, DELTA, sens), rel=1e-8)
    assert curves.rdp[0] == pytest.approx(_rdp_sigma_reference(eps, DELTA, sens), rel=1e-6)
    if eps <= 1:
        hall = sens * math.sqrt(2 * math.log(2 / DELTA)) / eps
        assert curves.classical[0] == pytest.approx(hall, rel=1e-12)
    else:
        assert math.isnan(curves.classical[0])


def test_r1_independent_check_34_percent_at_eps_1():
    """R §4.1 / Fig. 4: at ε = 1 (Δ² = 10, δ = 1e-3) GDP noise is ≈ 34 % below Hall's."""
    curves = functional_noise_comparison([1.0])
    sens = math.sqrt(SENS_SQ)
    hall = sens * math.sqrt(2 * math.log(2 / DELTA))  # closed form at eps = 1
    ref_hall = 1 - _gdp_sigma_reference(1.0, DELTA, sens) / hall
    assert round(ref_hall, 2) == 0.34  # the documented figure, from the references
    assert curves.reduction("classical")[0] == pytest.approx(ref_hall, rel=1e-6)
    # and about a third below the RDP route (the independent references, not a snapshot)
    sens = math.sqrt(SENS_SQ)
    ref = 1 - _gdp_sigma_reference(1.0, DELTA, sens) / _rdp_sigma_reference(1.0, DELTA, sens)
    assert 0.3 < ref < 0.36
    assert curves.reduction("rdp")[0] == pytest.approx(ref, rel=1e-6)


def test_r1_gdp_never_worse_and_classical_cut_at_one():
    eps = np.linspace(0.05, 8.0, 60)
    curves = functional_noise_comparison(eps)
    assert np.all(curves.gdp < curves.rdp)
    below = eps <= 1
    assert np.all(curves.gdp[below] < curves.classical[below])
    assert np.all(np.isnan(curves.classical[~below]))
    assert np.all(np.diff(curves.gdp) < 0)  # more budget, less noise


def test_r1_paper_claim_25_percent_holds_only_for_small_eps():
    """R §1 claims ≥ 25 % lower std 'in the settings of Fig. 4'. Versus RDP it holds for
    ε up to ≈ 2.5 only; at ε = 4 the saving is ≈ 21.5 % (reported, not a privacy bug).

    The savings are those of the independent references above (GDP by bisection on R eq. 5
    with scipy, RDP by numerical minimisation of R eq. 38 over α), not the kit's own numbers.
    """
    sens = math.sqrt(SENS_SQ)
    ref = {e: 1 - _gdp_sigma_reference(e, DELTA, sens) / _rdp_sigma_reference(e, DELTA, sens)
           for e in (2.0, 4.0)}
    assert ref[2.0] > 0.25 and ref[4.0] < 0.25  # where the paper's claim holds, and fails
    red = functional_noise_comparison([2.0, 4.0]).reduction("rdp")
    assert red[0] == pytest.approx(ref[2.0], rel=1e-6)
    assert red[1] == pytest.approx(ref[4.0], rel=1e-6)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_r1_bad_inputs_raise(bad):
    with pytest.raises(ValueError, match="sensitivity"):
        functional_noise_comparison([1.0], sensitivity_sq=bad)
    with pytest.raises(ValueError):
        functional_noise_comparison([bad])
    with pytest.raises(ValueError, match="delta"):
        functional_noise_comparison([1.0], delta=bad if bad != 0.0 else 1.0)
