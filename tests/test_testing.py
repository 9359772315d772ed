"""§6: dpgp_audit.testing — privacy assertions for a user's own test suite (A.6, A.8)."""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit import ApproxDP, Dataset, PublicDomain, PureDP, outputs_only
from dpgp_audit.catalogue import get
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
from dpgp_audit.privacy.float_release import float_safe_release
from dpgp_audit.testing import (
    PrivacyViolation,
    assert_private,
    assert_private_for_all_datasets,
)


class NoisyMean:
    """The guide's user mechanism (docs/own-code.md): targets in [-2, 2], noise for 1/N, not 4/N."""

    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0),
                     domain=PublicDomain(y_bound=2.0))  # |y| > 2 is refused

    def __init__(self, sensitivity_numerator: float = 1.0) -> None:
        self.k = sensitivity_numerator

    def sample(self, data, n, rng):
        y = self.claim.domain.targets(data.y)  # ValueError outside the domain
        sigma = analytic_gaussian_sigma(1.0, 1e-5, self.k / data.n)
        return float_safe_release(y.mean(), sigma * rng.standard_normal((n, 1)), sigma)


class ClippedMeanQuery(NoisyMean):
    """Adds the SensitivityQuery interface, with the same wrong bound 1/N."""

    def query(self, data):
        return np.array([data.y.mean()])

    def norm(self, v):
        return float(np.linalg.norm(v))

    def sensitivity_bound(self):
        return 1.0 / 6  # BUG: built for N = 6 and a change of 1; a change of 4 moves it 4/N


DATA = Dataset(np.linspace(0, 1, 50), np.zeros(50))


def test_assert_private_fails_with_verdict_bound_witness_and_command():
    with pytest.raises(AssertionError) as info:
        assert_private(NoisyMean(), DATA, np.random.default_rng(0), time_guard_s=None,
                       max_n=100_000)
    err = info.value
    assert isinstance(err, PrivacyViolation)
    assert err.verdict == "VIOLATION"
    # the sequential audit rejected the claim: its bound reaches the claimed 1 (it may equal
    # it, the claim's own grid value rejected) and stays below the true eps (mu = 4 x 0.268)
    assert 1.0 <= err.bound["blackbox"] <= 4.75
    assert err.witness is not None and err.witness.d0.n == 50
    text = str(err)
    assert "blackbox" in text and "witness pair" in text and "reproduce:" in text
    # the printed seed replays the same failure
    seed = int(err.command.split("data, ")[1].split(",")[0])
    with pytest.raises(PrivacyViolation) as again:
        assert_private(NoisyMean(), DATA, seed, time_guard_s=None, max_n=100_000)
    assert again.value.bound == err.bound


def test_assert_private_passes_a_correct_mechanism():
    report = assert_private(NoisyMean(4.0), DATA, np.random.default_rng(1), time_guard_s=None,
                            max_n=20_000)
    assert not report.violation
    assert report.inputs["mode"] == "sequential"


class UndeclaredNoisyMean(NoisyMean):
    """Correctly calibrated (4/N), but no declared domain: any float target is legal (and the
    float release is the textbook one, as such a release would be written)."""

    claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0))

    def sample(self, data, n, rng):
        sigma = analytic_gaussian_sigma(1.0, 1e-5, 4.0 / data.n)
        return data.y.mean() + sigma * rng.standard_normal((n, 1))


def test_assert_private_runs_the_precision_auditor_of_the_default_path():
    # A.7 on the default path: with no declared domain, legal targets of 1e17 make the
    # float spacing of the mean exceed the noise sd, and the release can be told apart.
    with pytest.raises(PrivacyViolation) as info:
        assert_private(UndeclaredNoisyMean(), DATA, np.random.default_rng(5), time_guard_s=None,
                       max_n=20_000)
    assert "precision" in info.value.bound
    report = assert_private(NoisyMean(4.0), DATA, np.random.default_rng(5), time_guard_s=None,
                            max_n=20_000)  # the same noise with |y| <= 2 declared passes
    assert {r.auditor for r in report.results} >= {"blackbox", "precision"}


def test_assert_private_on_registered_twins_prints_a_cli_command():
    mech, data = get("P.1/gaussian-sum").make()
    assert_private(mech, data, np.random.default_rng(2), time_guard_s=None, max_n=20_000)
    bug, data = get("planted/std-as-variance").make()
    with pytest.raises(PrivacyViolation) as info:
        assert_private(bug, data, np.random.default_rng(3), time_guard_s=None, max_n=200_000,
                       mechanism_id="planted/std-as-variance")
    assert info.value.command.startswith(
        "python -m dpgp_audit audit --mechanism planted/std-as-variance --seed ")
    assert "whitebox" in info.value.bound  # the exact auditor fires as well


def test_assert_private_input_errors():
    with pytest.raises(TypeError, match="rng"):
        assert_private(NoisyMean(), DATA, "seed")
    with pytest.raises(ValueError, match="rng"):
        assert_private(NoisyMean(), DATA, -1)
    with pytest.raises(ValueError, match="budget_s"):
        assert_private(NoisyMean(), DATA, np.random.default_rng(0), budget_s=-1.0)
    with pytest.raises(ValueError, match="time_guard_s"):
        assert_private(NoisyMean(), DATA, np.random.default_rng(0), time_guard_s=-1.0)


def test_hypothesis_search_shrinks_a_sensitivity_counterexample():
    with pytest.raises(PrivacyViolation) as info:
        assert_private_for_all_datasets(ClippedMeanQuery(), seed=4, n=(1, 6), max_examples=10,
                                        y_bound=2.0, max_n=2_000)
    pair = info.value.witness
    assert pair is not None
    # shrinking leaves a small dataset whose query moved by more than the bound
    change = abs(pair.d1.y.mean() - pair.d0.y.mean())
    assert change > 1 / 6 and pair.d0.n <= 6


def test_hypothesis_search_finds_a_sample_only_bug_and_passes_the_twin():
    with pytest.raises(PrivacyViolation):
        assert_private_for_all_datasets(NoisyMean(), seed=5, n=(1, 4), max_examples=25, y_bound=2.0,
                                        max_n=50_000, time_guard_s=None)
    assert_private_for_all_datasets(NoisyMean(4.0), seed=6, n=(1, 4), max_examples=3, y_bound=2.0,
                                    max_n=5_000, time_guard_s=None)



class _DeclaredMean:
    """|y| <= 1 declared and enforced; Laplace noise for sensitivity 1/N (the true one: 2/N)."""

    claim = PureDP(epsilon=1.0, relation=outputs_only(2.0), domain=PublicDomain(y_bound=1.0))

    def sample(self, data, n, rng):
        y = self.claim.domain.targets(data.y)
        b = 1.0 / data.n
        return float_safe_release(y.mean(), b * rng.laplace(size=(n, 1)), b)


def test_the_search_stays_in_the_declared_domain_and_tries_the_full_move_first():
    # before: targets drawn in |y| <= 2d = 4 were refused by the domain, every example
    # returned early and the search passed, having checked nothing
    with pytest.raises(PrivacyViolation) as info:
        assert_private_for_all_datasets(_DeclaredMean(), seed=1, max_examples=3, max_n=20_000)
    pair = info.value.witness
    moved = np.flatnonzero(pair.d0.y != pair.d1.y)
    assert moved.size == 1 and abs(pair.d1.y[moved[0]] - pair.d0.y[moved[0]]) == 2.0


class _SuppressedLabelCount:
    """Positive labels counted with two-sided geometric noise, 0 when the true count is
    below 3 (true eps = inf between 2 and 3 positives); labels {0, 1} declared, and every
    other target refused."""

    claim = PureDP(epsilon=1.0, relation=outputs_only(1.0),
                   domain=PublicDomain(1.0, labels=(0.0, 1.0)))

    def sample(self, data, n, rng):
        c = float(self.claim.domain.targets(data.y).sum())
        p = 1.0 - np.exp(-1.0)
        noisy = c + (rng.geometric(p, (n, 1)) - rng.geometric(p, (n, 1))).astype(float)
        return np.zeros((n, 1)) if c < 3 else noisy


def test_the_search_keeps_declared_labels_and_moves_counts_across_a_threshold():
    # before: targets drawn between the labels were refused, so the search audited only the
    # few datasets that happened to be labels and passed
    with pytest.raises(PrivacyViolation) as info:
        assert_private_for_all_datasets(_SuppressedLabelCount(), seed=1, n=(3, 8),
                                        max_examples=10, max_n=20_000)
    pair = info.value.witness
    assert set(np.unique(np.r_[pair.d0.y, pair.d1.y])) <= {0.0, 1.0}
    assert sorted((pair.d0.y.sum(), pair.d1.y.sum())) == [2.0, 3.0]


class _RefusesEverything:
    claim = PureDP(epsilon=1.0, relation=outputs_only(2.0))

    def sample(self, data, n, rng):
        raise ValueError("this mechanism takes datasets of exactly 1000 rows")


def test_a_search_the_mechanism_refuses_entirely_is_an_error_not_a_pass():
    with pytest.raises(ValueError, match="refused every pair the search generated .* nothing "
                                         "was checked"):
        assert_private_for_all_datasets(_RefusesEverything(), seed=1, max_examples=3)


def test_assert_private_refuses_to_pass_when_no_auditor_compared_anything():
    from tests.audit.test_precision import _OnlyItsOwnData  # refuses every neighbour

    with pytest.raises(ValueError, match="no auditor compared anything, so there is nothing "
                                         "to assert .*blackbox: no generated pair is accepted"):
        assert_private(_OnlyItsOwnData(DATA), DATA, np.random.default_rng(0))
