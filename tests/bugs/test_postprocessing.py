"""The planted clip to the data's range and its twin (catalogue A.5; bugs/postprocessing.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.bugs import zoo
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma


def _built(bug_id: str):
    entry = zoo.get(bug_id) if bug_id.startswith("planted/") else \
        next(c for c in zoo.controls() if c.id == bug_id)
    data = entry.default_data()
    return entry.build(data, **entry.defaults), data


def _independent_bin_means(x: np.ndarray, y: np.ndarray, k: int = 5) -> np.ndarray:
    cell = np.minimum(((x - x.min()) / (x.max() - x.min()) * k).astype(int), k - 1)
    return np.array([y[cell == j].mean() for j in range(k)])


def test_A5_clip_to_data_range_puts_a_point_mass_only_one_side_can_release():
    """Lowering the largest target lowers the upper clip: on D the value max y is released
    with probability mean_j P(N(m_j, s²) >= max y), on D′ never, so the event
    {output = max y} separates them (true ε = ∞). σ: the analytic Gaussian for 2b over
    the smallest bin (Balle & Wang 2018), the bin means computed here independently."""
    mech, data = _built("planted/clip-to-data-range")
    x = np.asarray(data.X)[:, 0]
    top = int(np.argmax(data.y))
    lowered = data.with_target(top, float(data.y[top]) - 1.0)
    assert lowered.y.max() < data.y.max()  # the premise: another target is below the top
    counts = np.histogram(x, bins=5, range=(x.min(), x.max()))[0]
    sd = analytic_gaussian_sigma(1.0, 1e-5, 2.0 / counts.min())
    assert mech.sigma == pytest.approx(sd, rel=1e-9)
    expected = np.mean(stats.norm.sf((data.y.max() - _independent_bin_means(x, data.y)) / sd))
    a = mech.sample(data, 20_000, np.random.default_rng(1))
    b = mech.sample(lowered, 20_000, np.random.default_rng(1))
    assert expected > 0.05  # the premise: the clip carries mass
    assert np.mean(a == data.y.max()) == pytest.approx(
        expected, abs=5 * math.sqrt(expected / a.size) + 1e-3)  # grid rounding: under 1e-3
    assert not np.any(b == data.y.max())
    assert zoo.get("planted/clip-to-data-range").true_epsilon == math.inf


def test_A5_the_public_clip_twin_is_the_same_query_clipped_at_the_bound():
    twin, data = _built("A.5/clip-to-public-bound")
    bug, _ = _built("planted/clip-to-data-range")
    assert twin.sigma == bug.sigma and twin.sensitivity_bound() == bug.sensitivity_bound()
    np.testing.assert_allclose(twin.query(data), _independent_bin_means(
        np.asarray(data.X)[:, 0], data.y), rtol=1e-12)
    out = twin.sample(data, 5_000, np.random.default_rng(2))
    assert np.all(np.abs(out) <= 1.0) and np.mean(np.abs(out) == 1.0) > 0.05


def test_A5_the_clip_release_refuses_inputs_it_was_not_built_for():
    mech, data = _built("planted/clip-to-data-range")
    with pytest.raises(ValueError, match="public inputs must fill the bins"):
        mech.sample(default_dataset(25), 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="clip must be"):
        type(mech)(mech.edges, mech.counts, 1.0, 1e-5, clip="true range")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_A5_the_default_path_flags_the_clip_and_names_the_point_mass(seed):
    mech, data = _built("planted/clip-to-data-range")
    rep = audit_mechanism(mech, data, np.random.default_rng(seed))
    assert rep.violation
    prec = rep.result("precision")
    assert prec.violation and prec.details["witness_test"] == "float support"
    assert prec.details["support_reading"]["reading"] == "atoms"  # not "low bits"
    twin, _ = _built("A.5/clip-to-public-bound")
    assert not audit_mechanism(twin, data, np.random.default_rng(seed)).violation
