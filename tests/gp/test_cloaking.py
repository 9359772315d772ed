"""S18.2 cloaking optimisation (dpgp_audit.gp.cloaking): correctness of both solvers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from dpgp_audit.gp.cloaking import (
    calc_delta_paper,
    cloaking_bounds,
    mahalanobis_delta,
    mahalanobis_leverages,
    solve_cloaking,
    solve_cloaking_paper,
)
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.gp.regression import ExactGP


def gp_C(rng, n, k, ls=1.0, noise=0.1, dim=1):
    X = rng.uniform(0, 10, (n, dim))
    Xs = rng.uniform(-1, 11, (k, dim))
    return ExactGP(EQ(lengthscale=ls), noise).fit(X, np.zeros(n)).mean_weights(Xs)


def _kkt(C, sol, tol=1e-9):
    lev = sol.leverages
    assert np.max(lev) <= 1 + tol
    # complementary slackness: positive weights sit on active constraints
    active = sol.lam > 1e-6 * sol.lam.max()
    np.testing.assert_allclose(lev[active], 1.0, atol=1e-4)
    assert np.all(sol.lam >= 0)


@pytest.mark.parametrize("n,k", [(10, 4), (30, 10), (8, 8), (5, 20), (40, 25)])
def test_fast_solver_kkt_and_certificate(rng, n, k):
    C = gp_C(rng, n, k)
    sol = solve_cloaking(C)
    assert sol.converged and sol.gap <= 1e-9
    _kkt(C, sol)
    lb, ub = cloaking_bounds(sol.lam, C)
    assert lb <= sol.logdet + 1e-9 and sol.logdet <= ub + 1e-6
    # independent check of the constraint with a dense pseudo-inverse on a well-conditioned C
    G = rng.normal(size=(min(n, k), n))
    solg = solve_cloaking(G)
    Mp = np.linalg.pinv(solg.M, hermitian=True, rcond=1e-12)
    lev = np.einsum("ij,ij->j", G, Mp @ G)
    np.testing.assert_allclose(lev, solg.leverages, rtol=1e-7, atol=1e-9)
    assert np.max(lev) <= 1 + 1e-9
    lb, ub = cloaking_bounds(sol.lam, C)
    assert lb <= sol.logdet + 1e-9 and sol.logdet <= ub + 1e-6


def test_square_invertible_closed_form(rng):
    # For invertible square C the optimum is λ = 1, M = C Cᵀ, log|M| = 2 log|det C|.
    C = rng.normal(size=(6, 6))
    sol = solve_cloaking(C)
    np.testing.assert_allclose(sol.M, C @ C.T, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(sol.logdet, 2 * np.log(abs(np.linalg.det(C))), atol=1e-8)
    paper = solve_cloaking_paper(C, rng, max_iter=20000)
    assert paper.converged
    np.testing.assert_allclose(paper.lam, 1.0, atol=1e-3)


def test_brute_force_primal_small(rng):
    # Oracle: minimise log|M| over M = L Lᵀ (k = 2) directly with SLSQP.
    C = rng.normal(size=(2, 5))
    sol = solve_cloaking(C)

    def unpack(p):
        L = np.array([[np.exp(p[0]), 0.0], [p[1], np.exp(p[2])]])
        return L @ L.T

    cons = {"type": "ineq",
            "fun": lambda p: 1.0 - np.einsum("ij,ij->j", C, np.linalg.solve(unpack(p), C))}
    best = np.inf
    for start in rng.normal(size=(8, 3)) + np.array([1.0, 0.0, 1.0]):
        res = optimize.minimize(lambda p: 2 * (p[0] + p[2]), start, constraints=[cons],
                                method="SLSQP", options={"ftol": 1e-13, "maxiter": 500})
        if res.success and np.all(cons["fun"](res.x) >= -1e-9):
            best = min(best, res.fun)
    assert np.isfinite(best)
    np.testing.assert_allclose(sol.logdet, best, atol=1e-6)


@settings(max_examples=8, deadline=None)
@given(n=st.integers(2, 25), k=st.integers(1, 30), seed=st.integers(0, 2**31 - 1),
       ls=st.floats(0.3, 5.0))
def test_fast_solver_property(n, k, seed, ls):
    rng = np.random.default_rng(seed)
    C = gp_C(rng, n, k, ls=ls)
    sol = solve_cloaking(C)
    assert np.max(sol.leverages) <= 1 + 1e-9
    assert sol.gap <= 1e-8
    assert sol.rank <= min(n, k)
    # the noise lives in span{c_i}
    P = sol.basis @ sol.basis.T
    np.testing.assert_allclose(P @ sol.M @ P, sol.M, atol=1e-10 * max(1.0, np.abs(sol.M).max()))


def test_more_test_points_than_training_points(rng):
    # k > n: M has rank n, every c_i is on the boundary (independent columns -> all active)
    C = gp_C(rng, 5, 40, ls=2.0)
    sol = solve_cloaking(C)
    assert sol.rank == 5
    assert np.linalg.matrix_rank(sol.M, tol=1e-8 * np.abs(sol.M).max()) == 5
    np.testing.assert_allclose(sol.leverages, 1.0, atol=1e-8)
    # a direction outside span{c_i} is infinitely far in the Mahalanobis norm
    Q, _ = np.linalg.qr(np.column_stack([C, rng.normal(size=(40, 1))]))
    outside = Q[:, -1]
    lev = mahalanobis_leverages(np.column_stack([C, outside]), sol.M, rtol=1e-12)
    assert np.isinf(lev[-1]) and np.all(np.isfinite(lev[:-1]))


def test_collinear_columns(rng):
    C = rng.normal(size=(3, 4))
    C = np.column_stack([C, 0.5 * C[:, 0], 2.0 * C[:, 1]])
    sol = solve_cloaking(C)
    _kkt(C, sol)
    # the longer of two parallel columns carries the constraint, the shorter is slack
    assert sol.leverages[4] <= 0.25 + 1e-9


def test_calc_delta_units(rng):
    # Alg. 1 CALCDELTA returns the squared norm: at λ = s λ* it gives 1/s, the true Δ is 1/sqrt(s)
    C = gp_C(rng, 12, 6)
    sol = solve_cloaking(C)
    for s in (0.5, 4.0):
        assert calc_delta_paper(s * sol.lam, C) == pytest.approx(1 / s, rel=1e-6)
        assert mahalanobis_delta(C, s * sol.M, rtol=1e-14) == pytest.approx(1 / np.sqrt(s),
                                                                          rel=1e-6)


def test_paper_gradient_agrees_with_fast_solver_when_it_converges(rng):
    C = rng.normal(size=(3, 5)) + 0.5
    fast = solve_cloaking(C)
    paper = solve_cloaking_paper(C, rng, max_iter=5000)
    if paper.converged and np.all(paper.lam >= 0):
        assert abs(paper.logdet - fast.logdet) < 1e-3
        assert paper.logdet >= fast.lower_bound - 1e-9


def test_paper_gradient_fails_with_an_inactive_constraint(rng):
    # c_3 = 0.1 c_1 can never be active: its gradient stays positive, the unprojected step
    # drives λ_3 below zero and Alg. 1 does not stop (S18-supp footnote ‡).
    C = np.array([[1.0, 0.0, 0.1], [0.0, 1.0, 0.0]])
    paper = solve_cloaking_paper(C, rng, max_iter=3000)
    assert paper.lam[2] < 0
    fast = solve_cloaking(C)
    assert fast.converged and fast.lam[2] == pytest.approx(0.0, abs=1e-9)


def test_bad_input():
    with pytest.raises(ValueError, match="C"):
        solve_cloaking(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="non-finite"):
        solve_cloaking(np.array([[1.0, np.nan]]))
    with pytest.raises(TypeError):
        solve_cloaking_paper(np.eye(2), rng=1)


def test_logdet_matches_independent_dual_solver(rng):
    # Reference: minimise the Lagrange dual Σλ − log det(C Λ Cᵀ) over λ ≥ 0 with L-BFGS-B;
    # at the optimum the primal optimum log|M*| equals log det(C Λ* Cᵀ) (Σλ* = k).
    C = rng.normal(size=(4, 12))

    def f(lam):
        M = (C * lam) @ C.T
        sign, ld = np.linalg.slogdet(M)
        if sign <= 0:
            return 1e10, np.zeros_like(lam)
        g = np.einsum("ij,ij->j", C, np.linalg.solve(M, C))
        return float(lam.sum() - ld), 1.0 - g

    res = optimize.minimize(f, np.full(12, 0.3), jac=True, method="L-BFGS-B",
                            bounds=[(0, None)] * 12,
                            options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000})
    ref = np.linalg.slogdet((C * res.x) @ C.T)[1] + 4 * np.log(4 / res.x.sum())
    sol = solve_cloaking(C)
    np.testing.assert_allclose(sol.logdet, ref, atol=1e-6)
