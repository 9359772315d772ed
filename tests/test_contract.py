"""A.1: the contract's checked draw (``checked_sample``): every auditor draws through it."""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit import Dataset
from dpgp_audit.contract import ContractError, checked_sample
from dpgp_audit.norms import L2

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
    (lambda n, rng: (rng.standard_normal() for _ in range(n)),  # a generator expression
     "returned a generator object, not an array of rows"),
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


# --- A.1: the rows of one call are independent releases (independence probe) ---

@pytest.mark.parametrize(("same_own", "own", "same_other", "other"), [
    (31, 31, 0, 32), (0, 31, 0, 32), (31, 31, 32, 32), (5, 7, 1, 8), (3, 9, 4, 10),
    (12, 15, 2, 16), (0, 4, 5, 5), (2, 2, 0, 3),
])
def test_A1_within_group_repeats_p_is_the_hypergeometric_lower_tail(same_own, own,
                                                                     same_other, other):
    from scipy.stats import hypergeom

    from dpgp_audit.contract import within_group_repeats_p

    differ = (own - same_own) + (other - same_other)
    want = hypergeom(own + other, differ, own).cdf(own - same_own)
    assert within_group_repeats_p(same_own, own, same_other, other) == pytest.approx(want,
                                                                                    rel=1e-12)


def test_A1_within_group_repeats_p_is_valid_for_iid_rows_with_atoms():
    """Super-uniform under exchangeable rows: P(p <= t) <= t, on laws with heavy atoms."""
    from dpgp_audit.contract import within_group_repeats_p

    rng = np.random.default_rng(7)
    m, reps = 8, 4000
    for prob in (0.5, 0.8, 0.95):
        rows = rng.random((reps, 2 * m)) < prob  # one draw: a call of m rows, m single calls
        ps = np.array([within_group_repeats_p(int(np.sum(r[1:m] == r[0])), m - 1,
                                              int(np.sum(r[m:] == r[0])), m) for r in rows])
        for t in (0.05, 0.2):
            rate = float(np.mean(ps <= t))
            assert rate <= t + 3 * np.sqrt(t * (1 - t) / reps), (prob, t, rate)
    # and the power to fail: one call's rows a single draw repeated, the single calls iid
    m = 16
    first = rng.random(reps) < 0.5
    ones = rng.random((reps, m)) < 0.5
    ps = np.array([within_group_repeats_p(m - 1, m - 1, int(np.sum(o == f)), m)
                   for f, o in zip(first, ones, strict=True)])
    assert float(np.mean(ps <= 0.05)) > 0.9


class _Draws:
    def __init__(self, draw):
        self.draw = draw

    def sample(self, data, n, rng):
        return self.draw(n, rng)


def _tiled(n, rng):  # one noise draw broadcast over the rows
    return np.full((n, 3), 0.5) + rng.standard_normal(3)


def _centred(n, rng):  # noise centred on its own mean: one row carries none
    z = rng.standard_normal((n, 1))
    return 0.5 + (z - z.mean())


def _seeded_alike(n, rng):  # a generator of its own, seeded the same on every call
    return 0.5 + np.random.default_rng(3).standard_normal((n, 1))


@pytest.mark.parametrize(("draw", "needle"), [
    (_tiled, "_Draws.sample(data, 256, rng) repeated one release over its rows (256 of 256"),
    (_centred, "_Draws.sample(data, 1, rng) returned the same release on 32 of 32 calls"),
])
def test_A1_rows_that_are_not_independent_releases_raise_a_contract_error(draw, needle):
    from dpgp_audit.contract import independent_releases

    with pytest.raises(ContractError) as err:
        independent_releases(_Draws(draw), DATA, np.random.default_rng(0))
    assert needle in str(err.value)


@pytest.mark.parametrize("draw", [
    lambda n, rng: rng.standard_normal((n, 2)),  # continuous
    lambda n, rng: np.zeros((n, 1)),  # deterministic: every row alike in both groups
    lambda n, rng: (rng.random((n, 1)) < 0.97).astype(float),  # a heavy atom
    lambda n, rng: rng.poisson(0.3, size=(n, 4)).astype(float),
    lambda n, rng: rng.integers(0, 2, size=n),
])
def test_A1_independent_releases_pass_the_probe_on_every_seed(draw):
    from dpgp_audit.contract import independent_releases

    for seed in range(60):
        independent_releases(_Draws(draw), DATA, np.random.default_rng(seed))


def test_A1_draws_that_ignore_the_generator_are_left_to_the_auditors():
    # one release per call is deterministic here too, but every call repeats the same rows:
    # a deterministic release, which the auditors certify (ε = ∞), not a contract error
    from dpgp_audit.contract import independent_releases

    assert independent_releases(_Draws(_seeded_alike), DATA, np.random.default_rng(0)) is None


def test_A1_the_probe_leaves_a_refused_dataset_to_the_auditors():
    from dpgp_audit.contract import independent_releases

    def refuse(n, rng):
        raise ValueError("needs 1000 rows")

    assert independent_releases(_Draws(refuse), DATA, np.random.default_rng(0)) is None


@pytest.mark.parametrize(("g", "h"), [(2, 3), (3, 4), (4, 4), (2, 6), (5, 3)])
def test_A1_inside_span_p_is_the_exact_law_of_ranks(g, h):
    """Against brute force over every placement of the group's ranks (small sizes)."""
    import itertools
    import math

    from dpgp_audit.contract import inside_span_p

    n_all = g + h
    counts = [0] * (h + 1)
    for ranks in itertools.combinations(range(n_all), g):
        counts[ranks[-1] - ranks[0] + 1 - g] += 1
    total = math.comb(n_all, g)
    for j in range(h + 1):
        assert inside_span_p(j, g, h) == pytest.approx(sum(counts[:j + 1]) / total, rel=1e-12)


def _scale_by(power):
    def draw(n, rng):  # a row's sd ~ n ** power: n read as the records, or as releases
        return 0.5 + (n ** power) * rng.standard_normal((n, 1))
    return draw


@pytest.mark.parametrize(("power", "needle"), [
    (-1.0, "spread far less than 32 single releases"),  # sensitivity 2 / n
    (0.5, "spread far more than 32 single releases"),  # sigma * sqrt(n)
    (-0.5, "spread far less than 32 single releases"),
])
def test_A1_a_row_law_that_depends_on_n_raises_a_contract_error(power, needle):
    from dpgp_audit.contract import independent_releases

    for seed in range(5):
        with pytest.raises(ContractError) as err:
            independent_releases(_Draws(_scale_by(power)), DATA, np.random.default_rng(seed))
        assert needle in str(err.value)


def test_A1_two_output_coordinates_are_tested_on_the_one_that_varies():
    from dpgp_audit.contract import independent_releases

    def draw(n, rng):  # a constant first coordinate, a second that shrinks with n
        return np.column_stack([np.zeros(n), rng.standard_normal(n) / n])

    with pytest.raises(ContractError, match=r"\(output coordinate 1\)"):
        independent_releases(_Draws(draw), DATA, np.random.default_rng(0))


def test_A1_the_spread_tests_hold_on_releases_rounded_to_a_grid():
    """Ties from the kit's float-safe grid are broken at random: valid, and still powerful."""
    from dpgp_audit.contract import independent_releases
    from dpgp_audit.privacy.float_release import float_safe_release

    def rounded(power):
        def draw(n, rng):
            sd = 0.3 * n ** power
            return float_safe_release(0.5, sd * rng.standard_normal((n, 1)), sd)
        return draw

    for seed in range(40):  # a correct rounded release, whatever the seed
        independent_releases(_Draws(rounded(0.0)), DATA, np.random.default_rng(seed))
    for power in (-1.0, 0.5):  # its grid follows the sd, so rows of one call tie
        with pytest.raises(ContractError, match="spread far"):
            independent_releases(_Draws(rounded(power)), DATA, np.random.default_rng(0))


class _Shell:
    """A mechanism's optional members, set per test (``sample`` is never called here)."""

    claim = None

    def __init__(self, **members):
        for k, v in members.items():
            setattr(self, k, v)

    def sample(self, data, n, rng):
        raise AssertionError("not called")


def _fn(value):
    return lambda *_: value


@pytest.mark.parametrize("members, needle", [
    ({"mean": 0.0, "cov": _fn(1.0)}, "_Shell.mean is a float, not callable"),
    ({"mean": _fn(0.0), "cov": np.eye(1)}, "make cov a method cov(data)"),
    ({"log_probabilities": [0.0]}, "interface DiscreteRelease"),
    ({"query": 1.0, "norm": L2(), "sensitivity_bound": _fn(1.0)}, "make query a method"),
    ({"query": _fn(0.0), "norm": None, "sensitivity_bound": _fn(1.0)},
     "make norm a Norm from dpgp_audit.norms"),
    ({"query": _fn(0.0), "norm": L2(), "sensitivity_bound": 1.0},
     "sensitivity_bound() returning the bound, not a property"),
])
def test_A1_a_declared_interface_whose_member_is_not_callable_is_named(members, needle):
    """Protocols check names only: a field named like a member must not reach the auditors."""
    from dpgp_audit.contract import interface_problem

    problem = interface_problem(_Shell(**members))
    assert problem is not None and needle in problem, problem


@pytest.mark.parametrize("members", [
    {}, {"mean": 0.0},  # one name alone declares no interface
    {"mean": _fn(0.0), "cov": _fn(1.0)},
    {"query": _fn(0.0), "norm": L2(), "sensitivity_bound": _fn(1.0)},
])
def test_A1_interfaces_that_are_absent_or_callable_pass(members):
    from dpgp_audit.contract import interface_problem

    assert interface_problem(_Shell(**members)) is None


@pytest.mark.parametrize("mean, cov, ok", [
    (np.zeros(3), np.eye(3), True), (np.zeros((1, 3)), np.eye(3), True),
    (0.0, 1.0, True), (np.zeros(1), np.eye(1), True),
    (np.zeros(3), np.eye(2), False), (np.zeros(2), np.ones(2), False),
    (np.zeros(1), np.eye(2), False), (np.zeros(1), np.ones(1), False),
])
def test_A1_a_gaussian_release_states_cov_of_the_means_size(mean, cov, ok):
    from dpgp_audit.contract import gaussian_release_problem

    data = Dataset(np.zeros((4, 1)), np.zeros(4))
    problem = gaussian_release_problem(_Shell(mean=_fn(mean), cov=_fn(cov)), data)
    assert (problem is None) is ok, problem
    if not ok:
        assert f"mean(data) has {np.size(mean)} value(s) but cov(data) has shape" in problem


# --------------------------------------------------------------------------- state (A.1)
OTHER = Dataset(np.linspace(0, 1, 5)[:, None], np.array([1.0, -1.0, 0.5, 0.0, 1.0]))


class _FirstScale:
    """A noise scale read off the first dataset seen, then kept (a lazy calibration)."""

    def __init__(self):
        self.scale = None

    def sample(self, data, n, rng):
        if self.scale is None:
            self.scale = 1.0 + float(np.abs(data.y).max())
        return self.scale * rng.standard_normal((n, 1))


class _Cursor:
    """Noise read in turn from a table fixed at construction: the rng is ignored."""

    def __init__(self):
        self.table = np.random.default_rng(7).standard_normal(64)
        self.at = 0

    def sample(self, data, n, rng):
        idx = (self.at + np.arange(n)) % self.table.size
        self.at += n
        return float(np.sum(data.y)) + self.table[idx][:, None]


class _KeyedCache:
    """A cache keyed by the data's values: state that never changes a release."""

    def __init__(self):
        self.cache = {}

    def sample(self, data, n, rng):
        key = data.y.tobytes()
        if key not in self.cache:
            self.cache[key] = float(np.sum(data.y))
        return self.cache[key] + rng.standard_normal((n, 1))


@pytest.mark.parametrize("make", [_FirstScale, _Cursor])
def test_A1_a_release_that_depends_on_earlier_calls_is_a_contract_error(make):
    from dpgp_audit.contract import stateless_releases

    mech = make()
    before = dict(vars(mech))
    with pytest.raises(ContractError, match=rf"{make.__name__}\.sample keeps state between "
                                            r"calls: .* called first on 1 other dataset"):
        stateless_releases(mech, DATA, [OTHER], np.random.default_rng(0))
    # the probe works on copies: the user's object is as it was handed
    assert vars(mech).keys() == before.keys()
    assert all(np.array_equal(vars(mech)[k], v) for k, v in before.items())


def test_A1_a_scale_kept_from_the_users_data_is_the_auditors_to_judge():
    # warmed on the data before the audit (as the command line's seeding check does), the
    # lazy scale no longer moves: the release is then one mechanism, audited as published
    from dpgp_audit.contract import stateless_releases

    mech = _FirstScale()
    mech.sample(DATA, 1, np.random.default_rng(1))
    probe = stateless_releases(mech, DATA, [OTHER], np.random.default_rng(0))
    assert probe.skipped is None and probe.release.shape == (1, 1)


@pytest.mark.parametrize("draw", [
    lambda n, rng: rng.standard_normal((n, 2)),
    lambda n, rng: np.zeros((n, 1)),  # deterministic
])
def test_A1_releases_that_are_functions_of_their_arguments_pass_the_state_probe(draw):
    from dpgp_audit.contract import stateless_releases, unchanged_by_audit

    for mech in (_Draws(draw), _KeyedCache()):
        for seed in range(5):
            probe = stateless_releases(mech, DATA, [OTHER], np.random.default_rng(seed))
            assert probe.skipped is None
            for _ in range(3):  # the audit's calls
                mech.sample(OTHER, 10, np.random.default_rng(seed + 100))
            unchanged_by_audit(mech, DATA, probe)


def test_A1_a_release_changed_by_the_audits_calls_is_a_contract_error():
    from dpgp_audit.contract import stateless_releases, unchanged_by_audit

    class Budget:  # the noise shrinks once 20 releases are spent: passes the first probe
        spent = 0

        def sample(self, data, n, rng):
            self.spent += n
            scale = 2.0 if self.spent <= 20 else 0.5
            return float(np.sum(data.y)) + scale * rng.standard_normal((n, 1))

    mech = Budget()
    probe = stateless_releases(mech, DATA, [OTHER], np.random.default_rng(0))
    unchanged_by_audit(mech, DATA, probe)  # no audit call yet: as before
    mech.sample(DATA, 30, np.random.default_rng(1))
    with pytest.raises(ContractError, match=r"Budget\.sample changed during the audit"):
        unchanged_by_audit(mech, DATA, probe)


def test_A1_the_state_probe_says_why_it_did_not_run():
    import threading

    from dpgp_audit.contract import stateless_releases, unchanged_by_audit

    class Locked(_KeyedCache):  # a lock cannot be copied
        def __init__(self):
            super().__init__()
            self.lock = threading.Lock()

    class Unseeded:  # entropy the audit cannot seed
        def sample(self, data, n, rng):
            return np.random.default_rng().standard_normal((n, 1))

    class Refuses:
        def sample(self, data, n, rng):
            raise ValueError("needs 1000 rows")

    for mech, why in [(Locked(), "cannot be copied (TypeError)"),
                      (Unseeded(), "two copies on one generator state release different"),
                      (Refuses(), "refuses the data")]:
        probe = stateless_releases(mech, DATA, [OTHER], np.random.default_rng(0))
        assert probe.release is None and why in probe.skipped
        unchanged_by_audit(mech, DATA, probe)  # nothing to compare: no error


def test_A1_the_state_probe_lets_an_error_of_sample_travel_on():
    from dpgp_audit.contract import stateless_releases

    class Broken:
        def sample(self, data, n, rng):
            raise RuntimeError("a bug of its own")

    with pytest.raises(RuntimeError, match="a bug of its own"):
        stateless_releases(Broken(), DATA, [OTHER], np.random.default_rng(0))
