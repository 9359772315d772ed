"""Planted textbook float samplers (issue 20 §4; A.5, A.7): caught by the float-support test,
on the default path.

The leak is exact, not statistical: for the sum q = 1, ``fl(1 + Y)`` is exact whenever it
lands in (−½, ½) (Sterbenz), so it is a multiple of 2⁻⁵³ there; for q = 0 the output is Y
itself. The first tests check that consequence on every draw; the audit tests then run the
precision auditor's float-support test, whose power here is far above what is asserted
(ε ≥ 3 certified on seeds 0–9 in development against a claim of 1, ceiling ≈ 6).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit.audit.result import Verdict
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.bugs import zoo
from dpgp_audit.bugs.float_support import SAMPLERS, TextbookNoiseSum
from dpgp_audit.catalogue import get
from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.default import default_dataset

BUGS = [f"planted/{name}" for name in SAMPLERS]


def _zero_pair() -> tuple[Dataset, Dataset]:
    data = default_dataset()
    zeros = Dataset(data.X, np.zeros(data.n))
    return zeros, zeros.with_target(0, 1.0)


def _off_grid_below_half(x: np.ndarray, bits: int = 53) -> np.ndarray:
    """Outputs in (−½, ½) off the grid of 2^-bits (the spacing of [1, 2) at that precision)."""
    x = np.ravel(np.asarray(x, dtype=float))
    scaled = np.ldexp(x, bits)
    return (np.abs(x) < 0.5) & (scaled != np.round(scaled))


@pytest.mark.parametrize("sampler", sorted(SAMPLERS))
def test_A5_textbook_outputs_off_the_grid_are_impossible_from_q_1(sampler, rng):
    mech = TextbookNoiseSum(d=1.0, epsilon=1.0, sampler=sampler)
    bits = 24 if sampler.endswith("float32") else 53  # Sterbenz in the release's own format
    d0, d1 = _zero_pair()
    from_0 = _off_grid_below_half(mech.sample(d0, 20_000, rng), bits)
    from_1 = _off_grid_below_half(mech.sample(d1, 20_000, rng), bits)
    assert not from_1.any()  # Sterbenz: impossible, on every draw
    assert from_0.mean() > 0.02  # about 0.05 (Gaussian, sigma 3.7) to 0.2 (Laplace, b 1)


@pytest.mark.parametrize("twin", sorted(set(SAMPLERS.values())))
def test_A5_secure_twins_release_on_one_fixed_grid(twin, rng):
    mech, data = get(twin).make()
    for d in _zero_pair():
        x = np.ravel(mech.sample(d, 2_000, rng))
        assert not _off_grid_below_half(x).any()


def test_A5_the_float32_sampler_releases_float32_and_hides_below_the_float64_grid(rng):
    # what made it invisible before the test read outputs at their own precision: every
    # output, widened to float64, lies on the 2^-53 grid below one half, from q = 0 and 1
    mech = TextbookNoiseSum(d=1.0, epsilon=1.0, sampler="laplace-float32")
    for d in _zero_pair():
        x = mech.sample(d, 5_000, rng)
        assert x.dtype == np.float32
        assert not _off_grid_below_half(x).any()


def test_A5_textbook_rows_in_the_zoo():
    rows = {b.id: b for b in zoo.planted()}
    for bug_id in BUGS:
        b = rows[bug_id]
        assert b.true_epsilon == np.inf and b.caught_by == "precision"
        assert b.twin == SAMPLERS[bug_id.split("/")[1]]
        assert b.audit_kwargs == {}  # the float-support test is on the default path


@pytest.mark.parametrize("mech_id", BUGS + sorted(set(SAMPLERS.values())))
@pytest.mark.parametrize("seed", [1, 2])
def test_A7_float_support_flags_textbook_samplers_and_not_the_secure_twins(mech_id, seed):
    mech, data = get(mech_id).make()
    report = audit_mechanism(mech, data, np.random.default_rng(seed), auditors=("precision",),
                             n=zoo.FLOAT_SUPPORT_N, mode="fixed")
    res = report.result("precision")
    if mech_id.startswith("planted/"):
        assert res.verdict is Verdict.VIOLATION, res.details.get("support_certified")
        assert res.estimate > 2.0 and report.witness is not None
    else:
        assert res.verdict is not Verdict.VIOLATION, res.details.get("support_certified")


@pytest.mark.parametrize("mech_id", BUGS)
def test_A7_without_the_support_test_no_auditor_sees_them(mech_id):
    """What the default path was before issue 20 §4: every other auditor is blind to it."""
    mech, data = get(mech_id).make()
    report = audit_mechanism(mech, data, np.random.default_rng(0), n=5_000, mode="fixed",
                             precision_support=False)
    assert report.verdict is not Verdict.VIOLATION, report.table()


@pytest.mark.parametrize("mech_id", BUGS + sorted(set(SAMPLERS.values())))
def test_A7_the_default_path_flags_textbook_samplers_and_not_the_secure_twins(mech_id):
    """``audit_mechanism(mech, data, rng)`` with nothing chosen by hand (issue 20 §4).

    The float-support test draws up to 20 000 per side on each of its two pairs; on the
    textbook samplers it certified ε between 4.5 and 6.6 (claim 1) on seeds 0–4.
    """
    mech, data = get(mech_id).make()
    report = audit_mechanism(mech, data, np.random.default_rng(3))
    if mech_id.startswith("planted/"):
        assert report.verdict is Verdict.VIOLATION, report.table()
        assert report.result("precision").verdict is Verdict.VIOLATION
    else:
        assert report.verdict is not Verdict.VIOLATION, report.table()
