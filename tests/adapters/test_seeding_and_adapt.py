"""A.10 adapters: third-party samplers made reproducible from the audit's generator."""

from __future__ import annotations

import random
import secrets

import numpy as np
import pytest

from dpgp_audit import Dataset, PublicDomain, PureDP, outputs_only
from dpgp_audit.adapters import STYLES, Seeding, adapt
from dpgp_audit.adapters.seeding import SEED_WORDS, derive_seed
from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.norms import L1

DATA = Dataset(np.linspace(0, 1, 10), np.linspace(-1, 1, 10))
CLAIM = PureDP(epsilon=1.0, relation=outputs_only(2.0), domain=PublicDomain(y_bound=1.0))


# "Libraries" written the way third-party code draws its noise (none takes a Generator).
def laplace_global(data, scale=2.0):
    return float(np.sum(data.y)) + np.random.laplace(0.0, scale)  # noqa: NPY002


def laplace_global_batch(data, n, scale=2.0):
    return float(np.sum(data.y)) + np.random.laplace(0.0, scale, size=n)  # noqa: NPY002


def laplace_random_state(data, random_state):
    return float(np.sum(data.y)) + random_state.laplace(0.0, 2.0)


def laplace_python(data):
    return float(np.sum(data.y)) + random.expovariate(0.5) - random.expovariate(0.5)


def laplace_generator(data, rng):
    return float(np.sum(data.y)) + rng.laplace(0.0, 2.0)


def laplace_secrets(data):
    u = (secrets.randbits(53) + 0.5) / 2**53  # the library's own entropy
    return float(np.sum(data.y)) - 2.0 * np.sign(u - 0.5) * np.log1p(-2 * abs(u - 0.5))


CASES = [("numpy_global", laplace_global, False), ("numpy_global", laplace_global_batch, True),
         ("random_state", laplace_random_state, False), ("python_random", laplace_python, False),
         ("generator", laplace_generator, False)]


def test_derive_seed_takes_128_bits_from_the_generator():
    words = derive_seed(np.random.default_rng(0))
    assert words.shape == (SEED_WORDS,) and words.dtype == np.uint32
    with pytest.raises(TypeError, match="Generator"):
        derive_seed(0)  # type: ignore[arg-type]


@pytest.mark.parametrize(("style", "release", "vectorised"), CASES)
def test_A10_adapter_is_reproducible_from_the_audit_rng(style, release, vectorised):
    mech = adapt(release, CLAIM, seeding=style, vectorised=vectorised)
    a = mech.sample(DATA, 50, np.random.default_rng(7))
    b = mech.sample(DATA, 50, np.random.default_rng(7))
    c = mech.sample(DATA, 50, np.random.default_rng(8))
    assert a.shape == (50, 1)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert len(np.unique(a)) == 50  # independent draws within a batch, not one repeated
    assert mech.reproducible and mech.cost_per_draw_s is not None


@pytest.mark.parametrize(("style", "release", "vectorised"), CASES)
def test_A10_adapter_draws_the_library_distribution(style, release, vectorised):
    # Laplace(0, 2) noise around sum(y) = 0: the variance is 2 b^2 = 8. With 20 000 draws
    # the sample variance has sd about 8 * sqrt(5 / 20 000) = 0.13 (kurtosis 6): a band of
    # +-0.8 (6 sd) fails a wrong scale (b = 1.8 gives 6.5), never the right one in practice.
    mech = adapt(release, CLAIM, seeding=style, vectorised=vectorised)
    out = mech.sample(DATA, 20_000, np.random.default_rng(3)).ravel()
    assert abs(out.mean()) < 0.15 and abs(out.var() - 8.0) < 0.8


def test_A10_global_states_are_restored_and_not_consumed():
    random.seed(11)
    np.random.seed(11)  # noqa: NPY002 — the test sets a global state to see it kept
    before_np, before_py = np.random.random(), random.random()  # noqa: NPY002
    random.seed(11)
    np.random.seed(11)  # noqa: NPY002
    adapt(laplace_global, CLAIM, seeding="numpy_global").sample(DATA, 5,
                                                                np.random.default_rng(1))
    adapt(laplace_python, CLAIM, seeding="python_random").sample(DATA, 5,
                                                                  np.random.default_rng(1))
    assert np.random.random() == before_np and random.random() == before_py  # noqa: NPY002


def test_A10_global_state_restored_when_the_library_raises():
    np.random.seed(5)  # noqa: NPY002
    expected = np.random.random()  # noqa: NPY002
    np.random.seed(5)  # noqa: NPY002

    def broken(data):
        np.random.random()  # noqa: NPY002
        raise ValueError("library refuses")

    with pytest.raises(ValueError, match="library refuses"):
        adapt(broken, CLAIM, seeding="numpy_global").sample(DATA, 3, np.random.default_rng(0))
    assert np.random.random() == expected  # noqa: NPY002


def test_A10_unseedable_sampler_is_marked_and_reported():
    mech = adapt(laplace_secrets, CLAIM, seeding="unseedable")
    a = mech.sample(DATA, 20, np.random.default_rng(7))
    b = mech.sample(DATA, 20, np.random.default_rng(7))
    assert not np.array_equal(a, b)  # own entropy: the seed does not repeat it
    assert not mech.reproducible and "not seedable" in mech.reproducibility
    report = audit_mechanism(mech, DATA, np.random.default_rng(0), n=4_000)
    assert report.inputs["reproducible"] is False
    assert "NOT REPRODUCIBLE" in report.table()
    assert "NOT REPRODUCIBLE" in report._repr_html_()  # the notebook's view says it too


def test_A10_cost_per_draw_is_measured_by_a_pilot():
    mech = adapt(laplace_global, CLAIM, seeding="numpy_global")
    assert mech.cost_per_draw_s is None
    cost = mech.pilot(DATA, np.random.default_rng(0), draws=32)
    assert cost > 0 and mech.cost_per_draw_s == cost
    batch = adapt(laplace_global_batch, CLAIM, seeding="numpy_global", vectorised=True)
    batch.pilot(DATA, np.random.default_rng(0), draws=32)
    assert batch.cost_per_draw_s > 0


def test_A10_adapter_refuses_what_it_cannot_use():
    with pytest.raises(ValueError, match="seeding style"):
        Seeding("os")
    with pytest.raises(ValueError, match="keyword applies only"):
        Seeding("numpy_global", "rng")
    with pytest.raises(TypeError, match="never states one"):
        adapt(laplace_global, {"epsilon": 1}, seeding="numpy_global")
    with pytest.raises(ValueError, match="go together"):
        adapt(laplace_global, CLAIM, seeding="numpy_global", query=lambda d: d.y.sum())
    with pytest.raises(RuntimeError, match="expected"):
        adapt(lambda d, n: np.zeros(n + 1), CLAIM, seeding="unseedable",
              vectorised=True).sample(DATA, 3, np.random.default_rng(0))
    assert set(STYLES) == {"generator", "random_state", "numpy_global", "python_random",
                           "unseedable"}


def test_A10_default_path_catches_a_library_bug_through_the_adapter():
    # A "library" whose Laplace scale is calibrated to sensitivity 1 while one change of a
    # target in [-1, 1] moves the sum by 2: the true epsilon is 2 against a claim of 1.
    def buggy(data, n):
        return float(np.sum(data.y)) + np.random.laplace(0.0, 1.0, size=n)  # noqa: NPY002

    mech = adapt(buggy, CLAIM, seeding="numpy_global", vectorised=True,
                 query=lambda d: np.array([np.sum(d.y)]), norm=L1(), sensitivity_bound=2.0)
    report = audit_mechanism(mech, DATA, np.random.default_rng(1), time_guard_s=None, n=100_000)
    assert report.violation
    bb = report.result("blackbox")
    assert bb.violation and 1.0 < bb.estimate <= 2.0  # a certified bound below the true 2
    again = audit_mechanism(mech, DATA, np.random.default_rng(1), time_guard_s=None, n=100_000)
    assert again.result("blackbox").estimate == bb.estimate  # reproducible through the adapter


def test_A10_default_path_finds_only_the_float_leak_of_the_correctly_calibrated_library():
    # calibrated right, but a textbook float Laplace release: its low bits carry the sum
    # (issue 20 §4), which the float-support test certifies and nothing else sees. The
    # default cap (A.7's support test then draws 20 000 per side; at n=4 000 its 400 draws
    # do not certify it)
    mech = adapt(laplace_global_batch, CLAIM, seeding="numpy_global", vectorised=True)
    report = audit_mechanism(mech, DATA, np.random.default_rng(2))
    assert [r.auditor for r in report.results if r.violation] == ["precision"]
    assert report.result("precision").details["witness_test"] == "float support"


# --------------------------------------------------------------------------- seed_globals
from scipy import optimize, stats  # noqa: E402

from dpgp_audit import ApproxDP  # noqa: E402
from dpgp_audit.adapters import seed_globals  # noqa: E402
from dpgp_audit.adapters.mechanism import GLOBALS_NOTE, reproducible_form  # noqa: E402
from dpgp_audit.audit.result import Verdict  # noqa: E402
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma  # noqa: E402

GAUSS_CLAIM = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(2.0),
                       domain=PublicDomain(y_bound=1.0))
SLIP_SIGMA = analytic_gaussian_sigma(1.0, 1e-5, 1.0)  # BUG: a sum moves by 2, not 1


class GlobalSum:  # a hurried user's code: the noise from np.random, not from rng
    claim = GAUSS_CLAIM

    def sample(self, data, n, rng):
        y = self.claim.domain.targets(data.y)
        return float(np.sum(y)) + SLIP_SIGMA * np.random.standard_normal((n, 1))  # noqa: NPY002


class PythonRandomSum(GlobalSum):  # the same, from the random module
    def sample(self, data, n, rng):
        y = self.claim.domain.targets(data.y)
        return float(np.sum(y)) + np.array([[random.gauss(0.0, SLIP_SIGMA)] for _ in range(n)])


class OwnEntropySum(GlobalSum):  # a fresh generator of its own: nothing can seed it
    def sample(self, data, n, rng):
        return float(np.sum(data.y)) + np.random.default_rng().standard_normal((n, 1))


class SeededSum(GlobalSum):  # draws from the generator it is handed
    def sample(self, data, n, rng):
        return float(np.sum(data.y)) + SLIP_SIGMA * rng.standard_normal((n, 1))


_BOUND_EARLY = np.random.standard_normal  # noqa: NPY002 — bound before any call, as an import does


class EarlyBoundSum(GlobalSum):  # `from numpy.random import standard_normal` at the top
    def sample(self, data, n, rng):
        return float(np.sum(data.y)) + _BOUND_EARLY((n, 1))


def _gaussian_epsilon(mu, delta):
    """ε of a μ-GDP release at δ (Dong, Roth & Su 2022, Cor. 2.13), solved by root finding."""
    def excess(eps):
        return (stats.norm.cdf(-eps / mu + mu / 2)
                - np.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2) - delta)
    return optimize.brentq(excess, 0.0, 50.0, xtol=1e-12)


def test_A10_seed_globals_answers_np_random_and_random_from_the_handed_generator():
    # the routed draws are the handed generator's own: equal to numpy's, drawn directly
    got = seed_globals(GlobalSum()).sample(DATA, 6, np.random.default_rng(4))
    want = float(np.sum(DATA.y)) + SLIP_SIGMA * np.random.default_rng(4).standard_normal((6, 1))
    np.testing.assert_array_equal(got, want)
    got = seed_globals(PythonRandomSum()).sample(DATA, 3, np.random.default_rng(4))
    ref = np.random.default_rng(4)
    want = [[float(np.sum(DATA.y)) + float(ref.normal(0.0, SLIP_SIGMA))] for _ in range(3)]
    np.testing.assert_array_equal(got, want)


def test_A10_seed_globals_restores_the_modules_and_their_states():
    original = (np.random.standard_normal, np.random.laplace, random.gauss)  # noqa: NPY002
    random.seed(3)
    np.random.seed(3)  # noqa: NPY002 — the test sets a global state to see it kept
    before = (np.random.random(), random.random())  # noqa: NPY002
    random.seed(3)
    np.random.seed(3)  # noqa: NPY002
    for mech in (GlobalSum(), PythonRandomSum(), EarlyBoundSum()):
        seed_globals(mech).sample(DATA, 4, np.random.default_rng(0))
    assert (np.random.random(), random.random()) == before  # noqa: NPY002
    assert (np.random.standard_normal, np.random.laplace, random.gauss) == original  # noqa: NPY002


def test_A10_seed_globals_keeps_the_users_class_and_pickles():
    import pickle

    wrapped = seed_globals(GlobalSum())
    assert type(wrapped).__name__ == "GlobalSum" and wrapped.claim is GAUSS_CLAIM
    assert seed_globals(wrapped) is wrapped and wrapped.reproducible is True
    again = pickle.loads(pickle.dumps(wrapped))
    np.testing.assert_array_equal(again.sample(DATA, 4, np.random.default_rng(9)),
                                  wrapped.sample(DATA, 4, np.random.default_rng(9)))
    with pytest.raises(TypeError, match="instance"):
        seed_globals(GlobalSum)


def test_A10_a_function_bound_before_the_call_draws_from_a_seeded_state_never_twice():
    # not routed (bound at import), so seeded from the generator's state: one seed repeats,
    # and one generator handed to two calls is moved on, never seeding the same state twice
    mech = seed_globals(EarlyBoundSum())
    a = mech.sample(DATA, 3, np.random.default_rng(5))
    np.testing.assert_array_equal(a, mech.sample(DATA, 3, np.random.default_rng(5)))
    g = np.random.default_rng(5)
    assert not np.array_equal(mech.sample(DATA, 3, g), mech.sample(DATA, 3, g))


@pytest.mark.parametrize("mech,wrapped", [(GlobalSum(), True), (PythonRandomSum(), True),
                                          (EarlyBoundSum(), True), (SeededSum(), False),
                                          (OwnEntropySum(), False)])
def test_A10_reproducible_form_wraps_exactly_the_code_that_draws_from_the_globals(mech, wrapped):
    form, note = reproducible_form(mech, DATA, np.random.SeedSequence(1))
    assert (form is not mech) is wrapped and (note == GLOBALS_NOTE) is wrapped
    adapted = adapt(laplace_global, CLAIM, seeding="numpy_global")
    assert reproducible_form(adapted, DATA, np.random.SeedSequence(1)) == (adapted, None)


def test_A10_reproducible_form_leaves_a_failing_sample_to_the_audit():
    class Refuses(GlobalSum):
        def sample(self, data, n, rng):
            raise ValueError("no")

    mech = Refuses()
    assert reproducible_form(mech, DATA, np.random.SeedSequence(1)) == (mech, None)


def test_A10_seeded_globals_give_the_grey_box_its_exact_bound():
    # unwrapped, the grey-box auditor cannot couple np.random's draws: no bound; wrapped, it
    # reads the noise off the handed generator and finds the slip's exact epsilon
    data = Dataset(np.linspace(0, 1, 8), np.linspace(-0.5, 0.5, 8))
    plain = audit_mechanism(GlobalSum(), data, np.random.default_rng(2), auditors=("greybox",))
    assert plain.result("greybox").verdict is Verdict.INCONCLUSIVE
    assert plain.inputs["reproducible"] is False
    rep = audit_mechanism(seed_globals(GlobalSum()), data, np.random.default_rng(2),
                          auditors=("greybox",))
    res = rep.result("greybox")
    assert res.verdict is Verdict.VIOLATION and "reproducible" not in rep.inputs
    exact = _gaussian_epsilon(2.0 / SLIP_SIGMA, 1e-5)  # the sum moves by 2: mu = 2 / sigma
    assert res.estimate == pytest.approx(exact, rel=1e-6)
