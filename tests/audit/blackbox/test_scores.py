"""Tests of the candidate-score helpers in :mod:`dpgp_audit.audit.blackbox.scores` (A.8)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpgp_audit.audit.blackbox.scores import normaltest_pvalues


@pytest.mark.parametrize("law", ["normal", "laplace", "exponential", "uniform", "rounded"])
@pytest.mark.parametrize("n", [20, 257, 20_000])
def test_normaltest_pvalues_equal_scipy(law, n):
    # issue 20 §2: the D'Agostino-Pearson p-values that decide the kde/classifier
    # candidates, computed without scipy's per-call overhead; expected values from the
    # independent implementation scipy.stats.normaltest, column by column.
    rng = np.random.default_rng(n)
    draw = {"normal": rng.normal, "laplace": rng.laplace, "exponential": rng.exponential,
            "uniform": rng.uniform}
    M = np.round(rng.normal(size=(n, 3)) * 4) / 4 if law == "rounded" else draw[law](size=(n, 3))
    want = stats.normaltest(M, axis=0).pvalue
    np.testing.assert_allclose(normaltest_pvalues(M), want, rtol=1e-9, atol=1e-300)
