"""Soundness of the runner's pair search + confirmation (AUDITING.md §5.6, catalogue A.1/A.3).

A correct mechanism audited at its *true* ε must be flagged at most an α fraction of
the time, also after the exploratory pair ranking (white-box μ, or pilot samples for
a mechanism that only samples) and the Bonferroni-corrected confirmation. δ = 0.1
makes near-tight events common, so the bound gets close to the truth and a bias in
the pipeline would show. Fixed mode (exactly 20 000 per side, the split auditor); the
sequential mode's coverage is tested in ``test_audit_sequential.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpgp_audit.audit.runner import audit_mechanism
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.methods.toolbox.primitives import GaussianSumMechanism


class _SamplesOnly:
    """The same mechanism seen only through sample(): exploration uses pilot samples."""

    def __init__(self, inner):
        self.inner = inner
        self.claim = inner.claim

    def sample(self, data, n, rng):
        return self.inner.sample(data, n, rng)


@pytest.mark.slow
@pytest.mark.parametrize("view", ["gaussian-release", "samples-only"])
def test_A1_pair_search_false_alarm_rate_at_most_alpha(view):
    mech = GaussianSumMechanism(d=1.0, epsilon=1.0, delta=0.1)
    if view == "samples-only":
        mech = _SamplesOnly(mech)
    data = default_dataset(8)
    alpha, runs = 0.05, 200
    root = np.random.SeedSequence(20261122)
    estimates, alarms = [], 0
    for child in root.spawn(runs):
        rep = audit_mechanism(mech, data, np.random.default_rng(child), auditors=("blackbox",),
                              n=20_000, mode="fixed", alpha=alpha, n_pairs=2)
        res = rep.result("blackbox")
        estimates.append(res.estimate)
        alarms += res.violation
    # one-sided binomial test of H0: rate <= alpha (reject only if clearly above)
    p = stats.binomtest(alarms, runs, alpha, alternative="greater").pvalue
    assert p > 0.01, f"{alarms}/{runs} false alarms"
    assert np.median(estimates) > 0.5  # the audit is not trivially loose
