"""``norms.Mahalanobis.lower_bound``: the exact norm's lower bound the sensitivity checker reads.

The expected values come from the RKHS: for a function g = Σ β_i k(·, x_i) evaluated on a
grid, ``gᵀ K_gg⁻¹ g <= ‖g‖²_H = βᵀ K_XX β`` (the interpolant has the least norm), so the
exact Mahalanobis norm of the evaluations is finite and at most the RKHS norm.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgp_audit.gp.kernels import EQ
from dpgp_audit.norms import Mahalanobis


def _grid_2d(k: int) -> np.ndarray:
    a = np.linspace(0.0, 10.0, k)
    return np.array([(u, v) for u in a for v in a])


@pytest.mark.parametrize("seed", range(5))
def test_lower_bound_stays_below_the_rkhs_norm_where_the_range_check_says_inf(seed):
    kern = EQ(lengthscale=1.0)
    G = _grid_2d(21)  # 441 points half a lengthscale apart: eigenvalues down to rounding
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(2, 2))  # a user's inputs in a corner of the window
    beta = np.array([1.0, -1.0])
    g = kern(G, X) @ beta
    rkhs = math.sqrt(float(beta @ kern(X, X) @ beta))
    norm = Mahalanobis(kern(G, G))
    assert math.isinf(norm(g))  # the premise: the range check reads rounding as a leak
    assert 0.5 * rkhs < norm.lower_bound(g) <= rkhs * (1 + 1e-6)


def test_lower_bound_is_the_norm_for_a_well_conditioned_matrix():
    A = np.random.default_rng(0).standard_normal((5, 5))
    M = A @ A.T + np.eye(5)
    v = np.arange(5.0)
    exact = math.sqrt(float(v @ np.linalg.solve(M, v)))
    assert Mahalanobis(M).lower_bound(v) == pytest.approx(exact, rel=1e-12)
    assert Mahalanobis(M)(v) == pytest.approx(exact, rel=1e-12)


def test_lower_bound_of_a_structural_zero_is_infinite():
    M = np.diag([1.0, 0.0])  # the noise never moves coordinate 2
    assert math.isinf(Mahalanobis(M).lower_bound(np.array([0.0, 1.0])))
    assert Mahalanobis(M).lower_bound(np.array([2.0, 0.0])) == pytest.approx(2.0)


def test_lower_bound_of_a_rank_truncated_matrix_is_huge():
    # a numerically singular M (an eigen-truncation, no exact zero): a change along the
    # dropped direction is bounded below by its size over the eigensolver's error
    w, U = np.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
    M = (U[:, 1:] * w[1:]) @ U[:, 1:].T
    assert Mahalanobis(M).lower_bound(U[:, 0]) > 1e6
