"""Hidden checks for notebook 00b: edge cases beyond the public checks."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from dpgp_audit.exercises import CheckFn
from dpgp_audit.exercises.nb00b import primer_problem, reference_mean
from dpgp_audit.methods.s18.standard import rkhs_sensitivity


def _mean_hidden(answer) -> Iterator[tuple[bool, str]]:
    K, ks, y = primer_problem(30, 1, 2.0, 7)
    got = np.asarray(answer(K, ks, y, 1e-4), dtype=float).reshape(-1)
    ok = got.shape == (1,) and np.allclose(got, reference_mean(K, ks, y, 1e-4), rtol=1e-5,
                                           atol=1e-7)
    yield ok, "one test input, long lengthscale, small noise"
    got = np.asarray(answer(K, ks, y, 1e6), dtype=float).reshape(-1)
    yield np.allclose(got, reference_mean(K, ks, y, 1e6), rtol=1e-6, atol=1e-12), (
        "huge noise: the mean shrinks to the prior's 0")


def _rkhs_hidden(answer) -> Iterator[tuple[bool, str]]:
    K, _, y = primer_problem(40, 2, 0.3, 8)
    for noise in (1e-3, 10.0):
        want = rkhs_sensitivity(np.linalg.inv(K + noise * np.eye(len(y))), K, 1.0)
        yield math.isclose(float(answer(K, noise, 1.0)), want, rel_tol=1e-5), (
            f"noise variance {noise:g} (the largest target's change, not a typical one)")


HIDDEN: dict[str, tuple[str, CheckFn]] = {
    "00b.1": ("posterior_mean", _mean_hidden),
    "00b.2": ("rkhs_change", _rkhs_hidden),
}
