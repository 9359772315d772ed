"""Shared fixtures and hypothesis profiles.

Hypothesis auto-loads its built-in ``ci`` profile when ``CI`` is set
(derandomised, no deadline); ``dev`` runs more examples locally.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=200, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fast", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
if not os.environ.get("CI"):
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A generator seeded from the test's node id: reproducible, distinct per test."""
    seed = np.frombuffer(request.node.nodeid.encode(), dtype=np.uint8).astype(np.uint64)
    return np.random.default_rng(np.random.SeedSequence(seed.tolist()))
