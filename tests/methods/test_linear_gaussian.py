"""The shared linear-Gaussian release base (P.1, P.4, S18.1, S18.2): one mean/cov/sample.

Expected values are independent of the base class: the covariance is compared with
σ² times the noise shape each mechanism documents (computed here from its own
factor), and a draw with a fixed generator is compared with q(D) + s F z drawn
from a copy of that generator, up to the rounding to the release grid of issue 20 §4
(Λ = 2^(⌊log₂ s⌋ − 10) in the noise's own coordinates, so at most Λ/2 · Σ_j |F_kj| in
output k); for the sum, exactly with rational arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpgp_audit.catalogue import get
from dpgp_audit.methods.linear_gaussian import LinearGaussianRelease
from dpgp_audit.methods.s18.cloaking import CloakingMechanism
from dpgp_audit.methods.s18.standard import StandardDPGP
from dpgp_audit.methods.toolbox.primitives import (
    GaussianSumMechanism,
    MultivariateGaussianMechanism,
)

IDS = ["P.1/gaussian-sum", "P.4/multivariate-gaussian", "S18.1/standard",
       "S18.1/standard-rkhs", "S18.2/cloaking", "S18.2/cloaking-analytic"]


def test_the_four_mechanisms_share_the_base():
    for cls in (GaussianSumMechanism, MultivariateGaussianMechanism, StandardDPGP,
                CloakingMechanism):
        assert issubclass(cls, LinearGaussianRelease)
        for name in ("mean", "cov", "sample"):
            assert name not in vars(cls), f"{cls.__name__}.{name} duplicates the base"


@pytest.mark.parametrize("mid", IDS)
def test_moments_and_draws_match_the_closed_form(mid):
    entry = get(mid)
    mech, data = entry.make()
    if not isinstance(mech, LinearGaussianRelease):  # CloakingGP delegates to its mechanism
        mech = mech.mechanism
    F = np.asarray(mech.noise_factor)
    s = float(mech.noise_scale)
    q = np.asarray(mech.query(data))
    np.testing.assert_array_equal(mech.mean(data), q)
    np.testing.assert_allclose(mech.cov(data), s**2 * (F @ F.T), rtol=1e-9,
                               atol=1e-12 * s**2 * max(1.0, float(np.max(np.abs(F)))) ** 2)
    rng = np.random.default_rng(7)
    z = np.random.default_rng(7).standard_normal((5, F.shape[1]))
    grid = math.ldexp(1.0, math.frexp(s)[1] - 1 - 10)  # Λ = 2^(⌊log₂ s⌋ − 10)
    slack = grid / 2 * np.sum(np.abs(F), axis=1) + 1e-12 * (1 + np.max(np.abs(q)))
    diff = np.abs(mech.sample(data, 5, rng) - (q + s * (z @ F.T)))
    assert np.all(diff <= slack), (mid, float(np.max(diff / slack)))


def test_gaussian_sum_is_sum_plus_sigma_z_rounded_exactly_to_its_grid():
    mech = GaussianSumMechanism(d=1.0, epsilon=1.0, delta=1e-5)
    data = get("P.1/gaussian-sum").default_data()
    draw = mech.sample(data, 4, np.random.default_rng(3))
    sigma = mech.calibration.sigma
    grid = Fraction(math.ldexp(1.0, math.frexp(sigma)[1] - 1 - 10))
    noise = sigma * np.random.default_rng(3).standard_normal((4, 1))
    for k in range(4):  # Λ · round((Σ y + σ z) / Λ), the sum of the floats taken exactly
        exact = (sum(Fraction(v) for v in data.y) + Fraction(noise[k, 0])) / grid
        assert draw[k, 0] == float(round(exact) * grid)  # round(): ties to even
    np.testing.assert_array_equal(mech.cov(data), [[mech.calibration.sigma**2]])


def test_bad_arguments_are_refused():
    mech, data = get("P.1/gaussian-sum").make()
    with pytest.raises(ValueError, match="n must be a positive integer"):
        mech.sample(data, 0, np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        mech.sample(data, 3, 0)


def test_base_is_abstract():
    with pytest.raises(TypeError):
        LinearGaussianRelease()
