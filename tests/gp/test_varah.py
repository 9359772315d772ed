"""S18.5 Varah's bound: hypothesis test of ‖J⁻¹‖∞ ≤ max_i 1/Δ_i(J)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpgp_audit.gp.kernels import EQ
from dpgp_audit.gp.varah import is_strictly_diagonally_dominant, varah_bound
from dpgp_audit.methods.s18.standard import inverse_inf_norm


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 9), seed=st.integers(0, 2**31 - 1), margin=st.floats(1e-3, 3.0),
       sym=st.booleans())
def test_varah_inequality_random_sdd(n, seed, margin, sym):
    rng = np.random.default_rng(seed)
    J = rng.normal(size=(n, n))
    if sym:
        J = J + J.T
    off = np.abs(J).sum(axis=1) - np.abs(np.diag(J))
    signs = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    J[np.diag_indices(n)] = signs * (off + margin * rng.uniform(0.1, 1.0, n))
    assert is_strictly_diagonally_dominant(J)
    assert inverse_inf_norm(np.linalg.inv(J)) <= varah_bound(J) * (1 + 1e-10)


def test_tight_for_diagonal():
    J = np.diag([2.0, -4.0, 0.5])
    assert varah_bound(J) == pytest.approx(2.0)
    assert inverse_inf_norm(np.linalg.inv(J)) == pytest.approx(2.0)


def test_gp_covariance_with_noise(rng):
    X = rng.uniform(0, 20, (8, 1))
    K = EQ(lengthscale=0.5)(X) + 3.0 * np.eye(8)
    if is_strictly_diagonally_dominant(K):
        assert inverse_inf_norm(np.linalg.inv(K)) <= varah_bound(K)
    with pytest.raises(ValueError, match="diagonally dominant"):
        varah_bound(np.ones((3, 3)))
