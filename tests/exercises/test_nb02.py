"""Notebook 02's code-writing exercises: plausible mistakes fail the public checks.

The answers' solutions pass them (``test_solutions_01_02.py``); the wrong answers here
are the mistakes students make.
References: the kit's FITC sparse GP without jitter (S21 eq. 9), a stable closed form
of S21 eq. (11), and for 02.3 a brute-force supremum over a grid of errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit.exercises import check


def _parts(kernel, X, Z, Xs):
    Kmm, Kmn = kernel(Z), kernel(Z, X)
    lam = kernel.diag(X) - np.sum(Kmn * np.linalg.solve(Kmm, Kmn), axis=0)
    return Kmm, Kmn, kernel(Xs, Z), lam


def _sor(kernel, X, Z, Xs, s2):                 # Λ dropped (SoR/DTC instead of FITC)
    Kmm, Kmn, Ksm, _ = _parts(kernel, X, Z, Xs)
    Q = Kmm + Kmn @ Kmn.T / s2
    return Ksm @ np.linalg.solve(Q, Kmn / s2)


def _kmm_inverse(kernel, X, Z, Xs, s2):         # K_MM⁻¹ where Q_MM⁻¹ belongs
    Kmm, Kmn, Ksm, lam = _parts(kernel, X, Z, Xs)
    return Ksm @ np.linalg.solve(Kmm, Kmn / (lam + s2))


def _no_noise(kernel, X, Z, Xs, s2):            # σ² forgotten beside Λ
    Kmm, Kmn, Ksm, lam = _parts(kernel, X, Z, Xs)
    Dinv = 1.0 / (lam + 1e-9)
    return Ksm @ np.linalg.solve(Kmm + (Kmn * Dinv) @ Kmn.T, Kmn * Dinv)


def _exact_gp(kernel, X, Z, Xs, s2):            # the full GP, no inducing inputs
    return kernel(Xs, X) @ np.linalg.inv(kernel(X) + s2 * np.eye(len(X)))


@pytest.mark.parametrize("wrong", [_sor, _kmm_inverse, _no_noise, _exact_gp],
                         ids=["sor", "kmm-inverse", "no-noise", "exact-gp"])
def test_fitc_mistakes_fail_the_public_check(wrong):
    assert not check("02.1", wrong).passed


def _pi(f):
    return 1.0 / (1.0 + np.exp(-f))


@pytest.mark.parametrize("wrong", [
    lambda K, f: np.linalg.inv(np.linalg.inv(K) + np.diag(_pi(f) * (1 - _pi(f)))),  # no ½
    lambda K, f: 0.5 * np.linalg.inv(np.linalg.inv(K) + np.diag(_pi(f))),            # W = π
    lambda K, f: 0.5 * np.linalg.inv(K + np.diag(_pi(f) * (1 - _pi(f)))),            # K + W
    lambda K, f: 0.5 * np.linalg.inv(np.linalg.inv(K) + 0.25 * np.eye(len(f))),      # W at 0
], ids=["no-half", "w-is-pi", "k-plus-w", "w-at-zero"])
def test_newton_mistakes_fail_the_public_check(wrong):
    assert not check("02.2", wrong).passed


@pytest.mark.parametrize("wrong", [
    lambda x, d: x * x,                                     # S21 eq. 13: δ² only
    lambda x, d: 8 * d * abs(x),                            # the Lipschitz bound
    lambda x, d: abs(x) * (8 * d - abs(x)),                 # no cap beyond the clip
    lambda x, d: 8 * d * abs(x) + x * x,                    # cross term and square added
    lambda x, d: 16 * d * d,                                # the cap everywhere
], ids=["paper", "lipschitz", "no-cap", "cross-plus-square", "constant"])
def test_clipped_square_mistakes_fail_the_public_check(wrong):
    assert not check("02.3", wrong).passed
