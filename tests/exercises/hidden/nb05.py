"""Instructors' hidden checks for notebook 05 (more cases than the public ones).

``HIDDEN[id] = (name the student defines, check)``; each check yields ``(passed, message)``.
"""

from __future__ import annotations

import numpy as np

from dpgp_audit.audit.stats import epsilon_lower_bound
from dpgp_audit.dataset import Dataset
from dpgp_audit.exercises.nb05 import check_pair


def _datasets():
    rng = np.random.default_rng(21)
    yield Dataset(np.linspace(0, 1, 5)[:, None], np.zeros(5))                 # all targets 0
    yield Dataset(rng.uniform(-3, 3, (40, 2)), rng.uniform(-1, 1, 40))      # 2-D inputs
    yield Dataset(np.arange(3.0)[:, None], np.array([1.0, 1.0, 1.0]))       # targets at +bound
    yield Dataset(np.arange(3.0)[:, None], np.array([-1.0, 0.5, -1.0]))     # at -bound


def _exposing_pair(answer):
    for data in _datasets():
        yield from check_pair(answer, data)


def _lower_bound(answer):
    rng = np.random.default_rng(22)
    for _ in range(200):
        n1, n0 = (int(v) for v in rng.integers(10, 100_000, 2))
        k1, k0 = int(rng.integers(0, n1 + 1)), int(rng.integers(0, n0 + 1))
        delta = float(rng.choice([0.0, 1e-6, 1e-3, 0.05]))
        alpha = float(rng.choice([0.001, 0.01, 0.05, 0.2]))
        got = float(answer(k1, n1, k0, n0, delta, alpha))
        want = float(epsilon_lower_bound(k1, n1, k0, n0, delta, alpha))
        yield abs(got - want) <= 1e-6 * max(1.0, want), f"{(k1, n1, k0, n0, delta, alpha)}"
    yield float(answer(0, 100, 0, 100, 0.0, 0.05)) == 0.0, "no hits at all"
    yield float(answer(100, 100, 100, 100, 0.0, 0.05)) == 0.0, "every draw hits on both sides"


HIDDEN = {"05.1": ("exposing_pair", _exposing_pair), "05.2": ("eps_lower_bound", _lower_bound)}
