"""S21.2 at scale: the factored cloaking map and the column-generation solver (gp/cloaking.py).

The references are the dense path of the same solver (unchanged for small n) and a naive
dense pseudo-inverse check of every constraint ``c_iᵀ M⁺ c_i ≤ 1``; the D-optimal duality gap
certifies the optimum independently of the path taken.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit.gp.cloaking import cloaking_bounds, range_basis, solve_cloaking
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.gp.linalg import FactoredMatrix, cho_solve_lower
from dpgp_audit.gp.sparse import SparseGP


def fitc_factors(rng, n, *, m=20, k=30, ell=1.0):
    """The S21 eq. (9) map of a FITC GP as its two factors (k × m and m × n)."""
    X = rng.uniform(0, 10, (n, 1))
    Z = np.linspace(0, 10, m)[:, None]
    Xs = np.linspace(-0.5, 10.5, k)[:, None]
    fit = SparseGP(EQ(ell), 0.1, Z).fit(X, np.zeros(n))
    F = cho_solve_lower(fit.factor.L_B, fit._W(Xs)[1]).T
    return FactoredMatrix(F, fit.V / fit.factor.d), fit.mean_weights(Xs)


def _naive_max_leverage(C: np.ndarray, M: np.ndarray) -> float:
    Mp = np.linalg.pinv(M, hermitian=True, rcond=1e-10)
    return float(np.max(np.einsum("ij,ij->j", C, Mp @ C)))


def test_factored_matrix_products_and_validation(rng):
    F, G = rng.normal(size=(5, 3)), rng.normal(size=(3, 40))
    C = FactoredMatrix(F, G)
    dense = F @ G
    assert C.shape == (5, 40)
    y, B = rng.normal(size=40), rng.normal(size=(2, 5))
    np.testing.assert_allclose(C @ y, dense @ y, rtol=1e-12)
    np.testing.assert_allclose(B @ C, B @ dense, rtol=1e-12)  # ndarray @ C defers to C
    np.testing.assert_allclose(np.asarray(C), dense)
    np.testing.assert_allclose(C.column_norms(), np.linalg.norm(dense, axis=0), rtol=1e-10)
    with pytest.raises(ValueError, match="inner dimensions"):
        FactoredMatrix(F, G.T)
    with pytest.raises(ValueError, match="non-finite"):
        FactoredMatrix(np.full((2, 2), np.nan), np.eye(2))
    with pytest.raises(ValueError, match="identically zero"):
        solve_cloaking(FactoredMatrix(np.zeros((2, 2)), np.eye(2)))


def test_factored_range_basis_matches_dense_svd(rng):
    C, dense = fitc_factors(rng, 300)
    np.testing.assert_allclose(C.dense(), dense, atol=1e-13 * np.abs(dense).max())
    Q1, s1, V1 = range_basis(dense)
    Q2, s2, V2 = range_basis(C)
    assert s1.size == s2.size
    np.testing.assert_allclose(s2, s1, rtol=1e-9, atol=1e-12 * s1[0])
    # same subspaces (signs of singular vectors are arbitrary)
    np.testing.assert_allclose(Q2 @ Q2.T, Q1 @ Q1.T, atol=1e-8)
    np.testing.assert_allclose((Q2 * s2) @ V2, dense, atol=1e-10 * s1[0])


@pytest.mark.parametrize("n", [50, 400])
def test_factored_solve_agrees_with_dense_solve(rng, n):
    C, dense = fitc_factors(rng, n)
    a, b = solve_cloaking(dense), solve_cloaking(C)
    assert a.converged and b.converged
    scale = np.abs(a.M).max()
    np.testing.assert_allclose(b.M, a.M, atol=1e-6 * scale)
    assert b.logdet == pytest.approx(a.logdet, abs=1e-6)
    assert _naive_max_leverage(dense, b.M) <= 1 + 1e-7


@pytest.mark.parametrize(("n", "ell"), [(3000, 1.0), (3000, 0.4)])
def test_column_generation_matches_direct_solve_and_is_certified(rng, n, ell):
    C, dense = fitc_factors(rng, n, m=40, k=50, ell=ell)
    direct = solve_cloaking(C)  # n <= max_working: the direct path
    cg = solve_cloaking(C, max_working=200, subset_size=120)
    assert direct.converged and cg.converged and cg.history["rounds"]
    assert cg.gap <= 1e-9
    # both are certified within 1e-9 nats of the same optimum
    assert cg.logdet == pytest.approx(direct.logdet, abs=1e-6)
    np.testing.assert_allclose(cg.M, direct.M, atol=1e-4 * np.abs(direct.M).max())
    # feasible on every column, checked naively; and the certificate from its weights
    assert _naive_max_leverage(dense, cg.M) <= 1 + 1e-7
    lb, ub = cloaking_bounds(cg.lam, dense)
    assert lb <= cg.logdet + 1e-6 and cg.logdet <= ub + 1e-6
