"""A.2's model check (``audit/model_check.py``): the range test against ill-conditioned models.

A Gram matrix of a kernel on a fine grid keeps eigenvalues below the factor's cut-off
(10⁻¹⁰ of the largest) that are positive: the model's covariance says there is noise
there, and a sampler that keeps them draws it. The range test allows that noise (a
Gaussian concentration bound) and still rejects a release that leaves the model.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit import Dataset
from dpgp_audit.audit.model_check import check_model, dropped_noise_allowance
from dpgp_audit.audit.result import Verdict
from dpgp_audit.audit.whitebox import factor_covariance
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.privacy.functional import gram_factor

GRID = np.linspace(0.0, 1.0, 12)[:, None]  # lengthscale 1 over [0, 1]: eigenvalues to 1e-16
K = EQ(lengthscale=1.0)(GRID, GRID)


class _GramNoise:
    """mean m, noise F z with F Fᵀ = K (every positive eigenvalue kept), optional extra."""

    def __init__(self, shift: np.ndarray | None = None):
        self.shift = np.zeros(12) if shift is None else shift
        self.F = gram_factor(K)

    def mean(self, data):
        return np.zeros(12)

    def cov(self, data):
        return K

    def sample(self, data, n, rng):
        return self.shift + rng.standard_normal((n, self.F.shape[1])) @ self.F.T


DATA = Dataset(np.zeros((3, 1)), np.zeros(3))


def test_A2_the_gram_matrix_has_dropped_directions_with_noise():
    f = factor_covariance(K)
    assert f.rank < 12 and np.sum(np.linalg.eigvalsh(K) > 0) > f.rank  # the premise


def test_A2_noise_in_the_dropped_directions_is_not_a_contradiction():
    res = check_model(_GramNoise(), DATA, np.random.default_rng(0), n=4000)
    assert res.verdict is Verdict.NO_EVIDENCE, res.details["rejected"]


def test_A2_the_allowance_bounds_simulated_maxima_of_the_dropped_noise():
    f = factor_covariance(K)
    w, U = np.linalg.eigh(K)
    drop = (w > 0) & (w <= f.cutoff)
    rng = np.random.default_rng(1)
    g = (rng.standard_normal((20_000, int(drop.sum()))) * np.sqrt(w[drop])) @ U[:, drop].T
    top = float(np.max(np.linalg.norm(g, axis=1)))
    allowed = dropped_noise_allowance(f, 20_000)
    assert top < allowed < 20 * top  # valid, and not so loose that it hides a real leak


def test_A2_a_release_outside_the_range_is_still_rejected():
    # a shift along the least-variance direction, 50 times the allowance: the model says
    # that coordinate is the mean exactly (to within noise 1e-5 of the largest sd)
    f = factor_covariance(K)
    u = np.linalg.eigh(K)[1][:, 0]
    shift = 50 * dropped_noise_allowance(f, 4000) * u
    res = check_model(_GramNoise(shift), DATA, np.random.default_rng(0), n=4000)
    assert res.verdict is Verdict.VIOLATION
    assert any("outside range" in r for r in res.details["rejected"])


@pytest.mark.parametrize("mechanism", ["P.5/functional"])
def test_A2_the_functional_mechanism_on_inputs_in_the_unit_interval_matches_its_model(
        mechanism):
    # a user's 1-D inputs in [0, 1] with the factory's lengthscale 1: `make audit` once
    # reported VIOLATION here (the range test read the kept noise as a contradiction)
    from dpgp_audit.catalogue import get

    x = np.sort(np.random.default_rng(1).random(30))
    mech, data = get(mechanism).make(Dataset(x[:, None], 0.9 * np.sin(6 * x)))
    res = check_model(mech, data, np.random.default_rng(0), n=4000)
    assert res.verdict is Verdict.NO_EVIDENCE, res.details["rejected"]
