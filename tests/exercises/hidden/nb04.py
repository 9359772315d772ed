"""Instructors' hidden checks for notebook 04 (more cases than the public ones).

``HIDDEN[id] = (name the student defines, check)``; each check yields ``(passed, message)``.
"""

from __future__ import annotations

import math

import numpy as np

from dpgp_audit.exercises.nb04 import applied_map, axis_covariances, kron, multiplier_reference
from dpgp_audit.privacy.functional_gdp import functional_noise_comparison


def _multiplier(answer):
    for eps in (0.05, 0.5, 1.0, 3.0, 8.0):
        for delta in (1e-2, 1e-3, 1e-6, 1e-9):
            got = float(answer(eps, delta, 2.5))
            yield math.isclose(got, multiplier_reference(eps, delta, 2.5), rel_tol=1e-6), (
                f"eps = {eps}, delta = {delta}")
    # R Fig. 4's GDP curve (the kit's functional_noise_comparison), sensitivity^2 = 10
    curve = functional_noise_comparison([0.5, 1.0, 2.0], delta=1e-3, sensitivity_sq=10.0)
    got = [float(answer(e, 1e-3, math.sqrt(10.0))) for e in (0.5, 1.0, 2.0)]
    yield np.allclose(got, curve.gdp, rtol=1e-6), "R Fig. 4's GDP curve"


def _kron_noise(answer):
    for sizes, seed in (((1,), 11), ((7,), 12), ((1, 5), 13), ((4, 1), 14), ((2, 2, 2, 2), 15),
                        ((6, 3), 16)):
        covs = axis_covariances(sizes, seed)
        A = applied_map(answer, covs)
        yield A is not None and np.allclose(A @ A.T, kron(covs), atol=1e-9), f"grid {sizes}"
    # a larger grid, where the Kronecker product itself would be large: compare moments of
    # the map on a few directions only (the answer must not need the full product)
    covs = axis_covariances((40, 30), 17)
    z = np.random.default_rng(18).standard_normal((40, 30))
    f = np.asarray(answer(list(covs), z), dtype=float)
    L0, L1 = (np.linalg.cholesky(c) for c in covs)
    g = np.linalg.solve(L0, f)            # undo axis 0 with the Cholesky factor, then axis 1
    g = np.linalg.solve(L1, g.T).T
    ok = f.shape == (40, 30) and np.allclose((g * g).mean(), (z * z).mean(), rtol=0.5)
    yield ok, "a 40 x 30 grid: the right shape and scale"


HIDDEN = {"04.1": ("functional_multiplier", _multiplier), "04.2": ("kron_noise", _kron_noise)}
