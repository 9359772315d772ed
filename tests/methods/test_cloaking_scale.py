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


# ----------------------------------------------------------------------------- S21.2 release


@pytest.mark.parametrize("n", [40, 700, 2500])  # 2500: column generation
def test_sparse_cloaking_release_equals_the_dense_mechanism(rng, n):
    """The factored S21.2 release is the one the dense map gives (same M, Δ, σ, mean)."""
    from dpgp_audit.dataset import Dataset
    from dpgp_audit.methods.s18.cloaking import CloakingMechanism
    from dpgp_audit.methods.s21.mechanisms import sparse_cloaking

    X = np.sort(rng.uniform(0, 10, n))
    Xs = np.linspace(0, 10, 25)
    Z = np.linspace(0, 10, 12)[:, None]
    rel = sparse_cloaking(X, Xs, EQ(1.5), 0.1, n_inducing=12, rng=rng, d=1.0, epsilon=1.0,
                          delta=0.01, placement=lambda X, m, g: Z)
    assert isinstance(rel.mechanism.C, FactoredMatrix)
    dense_C = SparseGP(EQ(1.5), 0.1, Z).fit(X[:, None], np.zeros(n)).mean_weights(Xs)
    ref = CloakingMechanism(dense_C, 1.0, 1.0, 0.01)
    scale = np.abs(ref.M).max()
    np.testing.assert_allclose(rel.mechanism.M, ref.M, atol=1e-6 * scale)
    assert rel.mechanism.delta_m == pytest.approx(ref.delta_m, rel=1e-6)
    assert rel.mechanism.sigma == pytest.approx(ref.sigma, rel=1e-6)
    data = Dataset(X, np.sin(X))
    np.testing.assert_allclose(rel.query(data), ref.query(data), atol=1e-9)
    # the released Δ is checked naively on every column of the dense map
    Mp = np.linalg.pinv(rel.mechanism.M, hermitian=True, rcond=1e-12)
    lev = np.einsum("ij,ij->j", dense_C, Mp @ dense_C)
    assert np.sqrt(lev.max()) <= rel.mechanism.delta_m * (1 + 1e-6)


def test_sparse_cloaking_takes_the_declared_domain(rng):
    """S21.2 passes y_bound/clip to the mechanism: at large n the default domain can fail the
    float-safety check (bench_sparse_scale.py at n = 1e6), so a user must be able to declare a
    smaller one; an unsafe declared bound is refused naming y_bound."""
    from dpgp_audit.methods.s21.mechanisms import sparse_cloaking

    X = np.sort(rng.uniform(0, 10, 200))
    Xs = np.linspace(0, 10, 10)
    Z = np.linspace(0, 10, 8)[:, None]

    def build(**kw):
        return sparse_cloaking(X, Xs, EQ(1.5), 0.1, n_inducing=8, rng=rng, d=1.0, epsilon=1.0,
                               delta=0.01, placement=lambda X_, m, g: Z, **kw)

    rel = build(y_bound=5.0, clip=True)
    assert rel.mechanism.domain.y_bound == 5.0
    assert rel.mechanism.domain.clip
    with pytest.raises(ValueError, match="y_bound"):
        build(y_bound=1e300)


def test_floor_is_reported_on_the_released_covariance(rng):
    """S18.2's numerical floor: every reported number is that of the released M."""
    from dpgp_audit.methods.s18.cloaking import CloakingMechanism

    C = rng.normal(size=(6, 30)) * np.logspace(0, -5, 6)[:, None]  # ill-conditioned
    mech = CloakingMechanism(C, 1.0, 1.0, 0.01)
    Q = mech.solution.basis
    w = np.linalg.eigvalsh(Q.T @ mech.M @ Q)
    assert mech.logdet == pytest.approx(float(np.sum(np.log(w))), rel=1e-10)
    Mp = np.linalg.pinv(mech.M, hermitian=True, rcond=1e-14)
    delta_released = np.sqrt(np.max(np.einsum("ij,ij->j", C, Mp @ C)))
    assert mech.delta_m == pytest.approx(delta_released, rel=1e-6)
    assert mech.delta_m <= mech.solution.delta * (1 + 1e-12)  # the floor only adds noise
    assert mech.floor_added == pytest.approx(1e-9 * np.linalg.eigvalsh(
        Q.T @ mech.solution.M @ Q).max(), rel=1e-10)
    assert "floor" in mech.claim.note
    bare = CloakingMechanism(C, 1.0, 1.0, 0.01, floor=0.0)
    assert bare.floor_added == 0.0 and bare.logdet <= mech.logdet
    with pytest.raises(ValueError, match="floor"):
        CloakingMechanism(C, 1.0, 1.0, 0.01, floor=-1.0)
