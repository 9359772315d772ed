"""A.6 / §1: the README's "audit your own mechanism" example, run verbatim."""

from __future__ import annotations


def test_readme_audit_your_own_mechanism(capsys):
    # --- README snippet starts ---
    import numpy as np

    from dpgp_audit import ApproxDP, Dataset, outputs_only
    from dpgp_audit.audit.runner import audit_mechanism
    from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma

    class NoisyMean:                     # targets in [-2, 2]: one change moves y_i by up to 4
        claim = ApproxDP(epsilon=1.0, delta=1e-5, relation=outputs_only(4.0))

        def sample(self, data, n, rng):  # BUG: the sensitivity of the mean is 4/N, not 1/N
            sigma = analytic_gaussian_sigma(1.0, 1e-5, 1 / data.n)
            return data.y.mean() + sigma * rng.standard_normal((n, 1))

    data = Dataset(np.linspace(0, 1, 50), np.zeros(50))
    report = audit_mechanism(NoisyMean(), data, np.random.default_rng(0), n=20_000)
    print(report.table())                # black-box VIOLATION: a certified lower bound on epsilon
    # --- README snippet ends ---

    out = capsys.readouterr().out
    assert report.verdict.value == "VIOLATION"
    assert "blackbox" in out and "SKIPPED" in out   # white-box/sensitivity need more interface
    bb = report.result("blackbox")
    assert 1.0 < bb.estimate <= 4.75                 # true epsilon (mu = 4 x 0.268) is 4.746
