"""A.6 / §1: the README's "audit your own mechanism" example, run verbatim."""

from __future__ import annotations


def test_readme_audit_your_own_mechanism(capsys):
    # --- README snippet starts ---
    import numpy as np

    from dpgp_audit import ApproxDP, Dataset, PublicDomain, outputs_only
    from dpgp_audit.audit.runner import audit_mechanism
    from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma

    class NoisyMean:                     # targets in [-2, 2]: one change moves y_i by up to 4
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0),
                         domain=PublicDomain(y_bound=2.0))  # |y| > 2 is refused

        def sample(self, data, n, rng):  # BUG: the sensitivity of the mean is 4/N, not 1/N
            y = self.claim.domain.targets(data.y)  # ValueError outside the domain
            sigma = analytic_gaussian_sigma(1.0, 1e-5, 1 / data.n)
            return y.mean() + sigma * rng.standard_normal((n, 1))

    data = Dataset(np.linspace(0, 1, 50), np.zeros(50))
    report = audit_mechanism(NoisyMean(), data, np.random.default_rng(0))
    print(report.table())                # black-box VIOLATION: a certified lower bound on epsilon
    # --- README snippet ends ---

    out = capsys.readouterr().out
    assert report.verdict.value == "VIOLATION"
    assert "blackbox" in out and "SKIPPED" in out   # white-box/sensitivity need more interface
    bb = report.result("blackbox")
    assert 1.0 < bb.estimate <= 4.75                 # true epsilon (mu = 4 x 0.268) is 4.746


def test_readme_privacy_tests_in_your_own_suite():
    # The README's "in your own test suite" snippet: both assertions fail on NoisyMean,
    # with the witness pair and a reproduce line in the message.
    import numpy as np
    import pytest

    from dpgp_audit import ApproxDP, Dataset, PublicDomain, outputs_only
    from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma
    from dpgp_audit.testing import assert_private, assert_private_for_all_datasets

    class NoisyMean:
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0),
                         domain=PublicDomain(y_bound=2.0))  # |y| > 2 is refused

        def sample(self, data, n, rng):
            y = self.claim.domain.targets(data.y)  # ValueError outside the domain
            sigma = analytic_gaussian_sigma(1.0, 1e-5, 1 / data.n)
            return y.mean() + sigma * rng.standard_normal((n, 1))

    data = Dataset(np.linspace(0, 1, 50), np.zeros(50))

    # --- README snippet starts ---
    def test_noisy_mean_is_private():  # fails: "NoisyMean violates its claim ... witness pair"
        assert_private(NoisyMean(), data, np.random.default_rng(2026), budget_s=10)

    def test_noisy_mean_on_any_small_dataset():
        assert_private_for_all_datasets(NoisyMean(), seed=1, n=(1, 4), y_bound=2.0,
                                        max_examples=25, budget_s=None, max_n=50_000)
    # --- README snippet ends ---

    with pytest.raises(AssertionError, match="witness pair") as info:
        test_noisy_mean_is_private()
    assert "reproduce: " in str(info.value)
    with pytest.raises(AssertionError):
        test_noisy_mean_on_any_small_dataset()
