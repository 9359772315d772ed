"""Invariants over every registered mechanism (catalogue A.1–A.6, every paper).

Each mechanism in the registry — including the planted bugs — must honour the
contract: a valid claim with its neighbour relation, vectorised and reproducible
sampling driven only by the given generator, a clear error for a missing
generator, white-box moments that match the samples, and (for correct
mechanisms) a sensitivity bound that holds on generated neighbours.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit import catalogue
from dpgp_audit.contract import GaussianRelease, Mechanism, SensitivityQuery
from dpgp_audit.privacy.claims import ZCDP, ApproxDP, GaussianDP, Neighbour

ALL = catalogue.entries(include_planted=True)
CORRECT = [e for e in ALL if not e.planted]
IDS = [e.id for e in ALL]


def test_registry_is_populated():
    assert CORRECT, "no mechanism registered"
    ids = [e.id for e in ALL]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("entry", ALL, ids=IDS)
def test_claim_and_contract(entry):
    mech, data = entry.make()
    assert isinstance(mech, Mechanism)
    claim = mech.claim
    assert isinstance(claim, ApproxDP | GaussianDP | ZCDP)
    assert claim.relation.kind in (Neighbour.OUTPUTS, Neighbour.ROWS, Neighbour.ANSWERS)
    assert claim.describe()
    if entry.planted:
        assert entry.twin is not None and entry.true_epsilon is not None


@pytest.mark.parametrize("entry", ALL, ids=IDS)
def test_sampling_is_vectorised_and_generator_driven(entry):
    mech, data = entry.make()
    a = mech.sample(data, 5, np.random.default_rng(123))
    b = mech.sample(data, 5, np.random.default_rng(123))
    assert a.shape[0] == 5
    np.testing.assert_array_equal(a, b)
    for bad in (None, 123):
        with pytest.raises(TypeError):
            mech.sample(data, 5, bad)


@pytest.mark.parametrize("entry", [e for e in ALL if "fixed-seed" not in e.id
                                   and "no-noise" not in e.id], ids=lambda e: e.id)
def test_different_generators_give_different_releases(entry):
    mech, data = entry.make()
    a = mech.sample(data, 50, np.random.default_rng(1))
    b = mech.sample(data, 50, np.random.default_rng(2))
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("entry", [e for e in ALL if isinstance(e.make()[0], GaussianRelease)
                                   and "fixed-seed" not in e.id],  # its sampler is the bug
                         ids=lambda e: e.id)
def test_whitebox_moments_match_samples(entry):
    mech, data = entry.make()
    mean = np.ravel(mech.mean(data))
    cov = np.atleast_2d(mech.cov(data))
    assert cov.shape == (mean.size, mean.size)
    np.testing.assert_allclose(cov, cov.T, atol=1e-10 * max(1.0, np.abs(cov).max()))
    n = 4000
    x = mech.sample(data, n, np.random.default_rng(7)).reshape(n, -1)
    sd = np.sqrt(np.clip(np.diag(cov), 0, None))
    # Each coordinate's sample mean within 6 standard errors (deterministic seed).
    np.testing.assert_array_less(np.abs(x.mean(axis=0) - mean), 6 * sd / np.sqrt(n) + 1e-9)


@pytest.mark.parametrize("entry", [e for e in CORRECT if isinstance(e.make()[0], SensitivityQuery)],
                         ids=lambda e: e.id)
def test_sensitivity_bound_holds_on_simple_neighbours(entry):
    mech, data = entry.make()
    relation = mech.claim.relation
    bound = mech.sensitivity_bound()
    base = mech.query(data)
    rng = np.random.default_rng(11)
    worst = 0.0
    for i in range(data.n):
        if relation.kind is Neighbour.OUTPUTS:
            for step in (-relation.d, relation.d):
                y_new = float(np.clip(data.y[i] + step, -1e12, 1e12))
                try:
                    other = data.with_target(i, y_new)
                    worst = max(worst, mech.norm(mech.query(other) - base))
                except ValueError:
                    continue  # the neighbour leaves the declared domain
        else:
            for y_new in (-relation.d, relation.d):
                x_new = data.X[rng.integers(data.n)] + rng.normal(size=data.dim)
                try:
                    other = data.with_row(i, x_new, y_new)
                    worst = max(worst, mech.norm(mech.query(other) - base))
                except ValueError:
                    continue
    assert worst <= bound * (1 + 1e-9) + 1e-12
