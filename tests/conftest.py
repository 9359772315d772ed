"""Shared fixtures and hypothesis profiles.

Hypothesis auto-loads its built-in ``ci`` profile when ``CI`` is set
(derandomised, no deadline); ``dev`` runs more examples locally.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from dpgp_audit.datasets.kung import DATA_DIR_ENV, KUNG_FILENAME, kung_local_path, running_in_ci

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


@pytest.fixture(scope="session")
def kung_file() -> Path:
    """The verified local ``howell1.csv``, resolved exactly as the package resolves it.

    :func:`dpgp_audit.datasets.kung.kung_local_path`: ``$DPGP_AUDIT_DATA_DIR`` first, then the
    pooch cache; no download. Missing data skips the test locally, but FAILS it under CI
    (``CI=true``), where the mirror is provided and a silent skip would hide a broken setup.
    """
    path = kung_local_path()
    if path is None:
        msg = (f"no local !Kung data: set {DATA_DIR_ENV} to a directory holding "
               f"{KUNG_FILENAME} (or fill the pooch cache by one online load_kung())")
        if running_in_ci():
            pytest.fail(f"CI=true but {msg}")
        pytest.skip(msg)
    return path


@pytest.fixture
def kung_mirror(kung_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh mirror directory holding the verified file, with ``DPGP_AUDIT_DATA_DIR`` on it."""
    mirror = tmp_path / "kung-mirror"
    mirror.mkdir()
    shutil.copyfile(kung_file, mirror / KUNG_FILENAME)
    monkeypatch.setenv(DATA_DIR_ENV, str(mirror))
    return mirror
