"""Every catalogued mechanism refuses malformed input by name and never releases (issue 10 §2).

Hypothesis draws the malformed argument; the contract (``dpgp_audit.contract``) fixes the
expected outcome: ``sample(data, n, rng)`` raises ``ValueError`` or ``TypeError`` whose
message names the offending parameter (``data``, ``n``, ``rng`` or ``y``), and returns
nothing. Malformed datasets themselves cannot be built (``tests/test_dataset.py``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpgp_audit.catalogue import entries
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.claims import Neighbour

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    BUILT = {e.id: e.make() for e in entries()}
IDS = sorted(BUILT)

NOT_A_DATASET = st.one_of(
    st.none(), st.integers(), st.floats(), st.text(max_size=5),
    st.just(np.zeros((3, 2))), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
BAD_N = st.one_of(st.integers(max_value=0), st.floats(allow_nan=True), st.booleans(),
                  st.text(max_size=3), st.none())
NOT_A_RNG = st.one_of(st.none(), st.integers(), st.floats(), st.text(max_size=3),
                      st.just(np.random.RandomState))

SETTINGS = settings(max_examples=8, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _refused(call, *names: str) -> None:
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    msg = str(info.value)
    assert any(n in msg for n in names), f"{msg!r} names none of {names}"


@pytest.mark.parametrize("mech_id", IDS)
@SETTINGS
@given(bad=NOT_A_DATASET)
def test_data_that_is_not_a_dataset_is_refused(mech_id, bad):
    mech, _ = BUILT[mech_id]
    _refused(lambda: mech.sample(bad, 2, np.random.default_rng(0)), "data")


@pytest.mark.parametrize("mech_id", IDS)
@SETTINGS
@given(bad=BAD_N)
def test_a_bad_sample_count_is_refused(mech_id, bad):
    mech, data = BUILT[mech_id]
    _refused(lambda: mech.sample(data, bad, np.random.default_rng(0)), "n")


@pytest.mark.parametrize("mech_id", IDS)
@SETTINGS
@given(bad=NOT_A_RNG)
def test_a_missing_generator_is_refused(mech_id, bad):
    mech, data = BUILT[mech_id]
    _refused(lambda: mech.sample(data, 2, bad), "rng")


def _declared_bound(mech) -> float | None:
    claim = mech.claim
    domain = getattr(claim, "domain", None)
    if domain is not None and not domain.clip:
        return domain.y_bound
    return None


BOUNDED = [i for i in IDS if _declared_bound(BUILT[i][0]) is not None]


def test_every_continuous_outputs_only_release_declares_a_domain():
    # the ones without a refusing domain either clip by contract (the clip is in the claim's
    # note or the whole-row bound) or release an index chosen from counts
    for mech_id in IDS:
        mech, data = BUILT[mech_id]
        claim = mech.claim
        if _declared_bound(mech) is not None:
            continue
        out = np.asarray(mech.sample(data, 2, np.random.default_rng(0)))
        discrete = out.dtype.kind in "biu" or bool(np.all(out == np.round(out)))
        clipped = "clip" in claim.note.lower() or (
            claim.domain is not None and claim.domain.clip)
        rows = claim.relation.kind is Neighbour.ROWS
        assert discrete or clipped or rows, mech_id


@pytest.mark.parametrize("mech_id", BOUNDED)
@SETTINGS
@given(factor=st.floats(1.0001, 1e12), row=st.integers(0, 10_000), sign=st.sampled_from([-1, 1]))
def test_targets_outside_the_declared_domain_are_refused(mech_id, factor, row, sign):
    mech, data = BUILT[mech_id]
    bound = _declared_bound(mech)
    y = np.array(data.y)
    y[row % data.n] = sign * bound * factor
    bad = Dataset(data.X, y)
    _refused(lambda: mech.sample(bad, 2, np.random.default_rng(0)), "y")


# --------------------------------------------------------------------------- a user's data
_TWO_INPUTS = Dataset(np.random.default_rng(0).random((30, 2)),
                      0.9 * np.sin(np.linspace(-3.0, 3.0, 30)))


@pytest.mark.parametrize("entry", [e for e in entries(include_planted=True)
                                   if e.inputs == 1], ids=lambda e: e.id)
def test_A10_a_one_input_factory_refuses_other_data_in_one_sentence(entry):
    # once a kernel's shape error ("X has D = 1 columns but Y has D = 2") or numpy's matmul
    with pytest.raises(ValueError, match=r"places its public test or inducing inputs on a "
                                         r"1-D grid, so it takes data with 1 input column; "
                                         r"the data has 2\. Choose the column with --x COL"):
        entry.make(_TWO_INPUTS)


def test_A10_planted_bugs_take_the_inputs_of_the_twin_they_break():
    table = {e.id: e for e in entries(include_planted=True)}
    bugs = [e for e in table.values() if e.planted and e.twin in table]
    assert bugs and all(b.inputs == table[b.twin].inputs for b in bugs)
    assert table["planted/s18-supnorm"].inputs == 1  # twin S18.1/standard


def test_A10_the_default_data_of_every_entry_passes_its_own_input_check():
    for e in entries(include_planted=True):
        e.check_inputs(e.default_data())


@pytest.mark.parametrize(("mechanism", "data", "needle"), [
    ("H.4/hyperparameter-search", Dataset(np.array([[0.1], [0.4]]), np.array([0.2, -0.1])),
     "it needs more than 5 rows, the data has 2"),
    ("S18.3/binning-laplace", Dataset(np.full((6, 1), 0.5), np.linspace(-0.5, 0.5, 6)),
     "every x in column 0 equals 0.5: give inputs that vary"),
    ("S18.3/binning-gaussian", Dataset(np.array([[0.1]]), np.array([0.2])),
     "every x in column 0 equals 0.1"),
])
def test_A10_too_few_rows_or_constant_inputs_are_named_not_a_negative_count(mechanism, data,
                                                                              needle):
    from dpgp_audit.catalogue import get

    with pytest.raises(ValueError, match=needle):
        get(mechanism).make(data)
