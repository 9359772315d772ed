"""A.1: the contract's checked draw (``checked_sample``): every auditor draws through it."""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit import Dataset
from dpgp_audit.contract import ContractError, checked_sample

DATA = Dataset(np.linspace(0, 1, 5)[:, None], np.zeros(5))


class Returns:
    def __init__(self, make):
        self.make = make

    def sample(self, data, n, rng):
        return self.make(n, rng)


@pytest.mark.parametrize("make", [
    lambda n, rng: rng.standard_normal((n, 3)),
    lambda n, rng: rng.integers(0, 4, size=n),
    lambda n, rng: rng.random(n) < 0.5,
    lambda n, rng: [[float(v)] for v in rng.random(n)],  # a list of rows
    lambda n, rng: np.array([1.5] * n, dtype=object),  # objects that are numbers
])
def test_A1_conforming_releases_come_back_as_sample_made_them(make):
    out = checked_sample(Returns(make), DATA, 4, np.random.default_rng(0))
    assert np.array_equal(out, np.asarray(make(4, np.random.default_rng(0))))


def test_A1_the_array_is_not_copied():
    made = np.zeros((3, 2))
    assert checked_sample(Returns(lambda n, rng: made), DATA, 3, np.random.default_rng(0)) \
        is made


@pytest.mark.parametrize(("make", "needle"), [
    (lambda n, rng: rng.standard_normal((n + 1, 1)), "returned shape (5, 1); the contract asks "
                                                     "for 4 rows, one release each"),
    (lambda n, rng: rng.standard_normal(), "returned a scalar"),
    (lambda n, rng: np.array(["a"] * n), "values of dtype <U1"),
    (lambda n, rng: np.ones(n) + 1j, "values of dtype complex128"),
    (lambda n, rng: np.array([object()] * n), "values of dtype object"),
])
def test_A1_broken_releases_raise_one_clear_contract_error(make, needle):
    with pytest.raises(ContractError, match="Returns.sample\\(data, 4, rng\\)") as err:
        checked_sample(Returns(make), DATA, 4, np.random.default_rng(0))
    assert needle in str(err.value)
    assert isinstance(err.value, ValueError)  # the command line's one-line, exit-2 path


def test_A1_one_row_is_singular():
    with pytest.raises(ContractError, match="asks for 1 row, one release"):
        checked_sample(Returns(lambda n, rng: np.zeros((2, 1))), DATA, 1,
                       np.random.default_rng(0))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_A1_non_finite_releases_raise_naming_the_count_and_the_targets(bad):
    data = Dataset(np.linspace(0, 1, 5)[:, None], np.array([-2.0, 0.0, 0.5, 1.0, 3.0]))

    def make(n, rng):
        out = rng.standard_normal((n, 2))
        out[1, 0] = out[3, 1] = bad
        return out
    with pytest.raises(ContractError, match="Returns.sample\\(data, 4, rng\\)") as err:
        checked_sample(Returns(make), data, 4, np.random.default_rng(0))
    msg = str(err.value)
    assert "returned 2 non-finite value(s) (NaN or inf) of 8" in msg
    assert "on targets in [-2, 3]" in msg  # where the overflow came from


def test_A1_non_finite_objects_are_refused_and_integers_pass():
    with pytest.raises(ContractError, match="1 non-finite value"):
        checked_sample(Returns(lambda n, rng: np.array([1.0] * (n - 1) + [float("nan")],
                                                       dtype=object)), DATA, 4,
                       np.random.default_rng(0))
    big = np.full(4, np.iinfo(np.int64).max)  # integers are always finite
    assert checked_sample(Returns(lambda n, rng: big), DATA, 4, np.random.default_rng(0)) is big


class _WritesIntoItsData:
    """Clips the targets in place (a hurried user's ``sample``); the dataset is read-only."""

    def __init__(self, write):
        self.write = write

    def sample(self, data, n, rng):
        self.write(data)
        return rng.standard_normal((n, 1))


@pytest.mark.parametrize("write", [
    lambda d: np.clip(d.y, -1.0, 1.0, out=d.y),  # "output array is read-only"
    lambda d: d.y.__setitem__(0, 0.0),  # "assignment destination is read-only"
    lambda d: d.X.sort(axis=0),  # "sort array is read-only"
])
def test_A1_a_write_into_the_dataset_is_a_contract_error_not_a_refusal(write):
    # numpy raises a ValueError, which the auditors would read as "this dataset is refused"
    with pytest.raises(ContractError, match=r"_WritesIntoItsData\.sample\(data, 4, rng\) "
                                            r"tried to write into a read-only array") as err:
        checked_sample(_WritesIntoItsData(write), DATA, 4, np.random.default_rng(0))
    assert "y = np.array(data.y)" in str(err.value)
    assert isinstance(err.value.__cause__, ValueError)


def test_A1_a_refusal_stays_a_plain_value_error():
    def refuse(data):
        raise ValueError("targets outside [-1, 1]")
    with pytest.raises(ValueError, match="targets outside") as err:
        checked_sample(_WritesIntoItsData(refuse), DATA, 4, np.random.default_rng(0))
    assert not isinstance(err.value, ContractError)


def test_A1_releases_of_one_shape_pass_the_shape_check():
    from dpgp_audit.contract import same_release_shape

    same_release_shape(Returns(None), (np.zeros((3, 2)), np.ones((5, 2))))
    same_release_shape(Returns(None), (np.zeros(3), np.ones(4)), neighbours=False)


@pytest.mark.parametrize(("neighbours", "needle"), [
    (True, "shape (2,) on a dataset D and (3,) on a neighbour D'"),
    (False, "shape (2,) and (3,) on the same dataset"),
])
def test_A1_releases_of_two_shapes_raise_one_contract_error(neighbours, needle):
    from dpgp_audit.contract import same_release_shape

    with pytest.raises(ContractError, match=r"Returns\.sample returned releases") as err:
        same_release_shape(Returns(None), (np.zeros((3, 2)), np.zeros((3, 2)),
                                           np.zeros((3, 3))), neighbours=neighbours)
    assert needle in str(err.value)


def test_A1_a_query_or_mean_is_compared_whole_and_named():
    from dpgp_audit.contract import same_release_shape

    same_release_shape(Returns(None), (np.zeros(3), np.ones(3)), method="query")
    with pytest.raises(ContractError, match=r"Returns\.mean returned values of shape \(3,\) "
                                            r"on a dataset D and \(2,\) on a neighbour D'"):
        same_release_shape(Returns(None), (np.zeros(3), np.ones(2)), method="mean")
