"""H.1 sensitivity maths: brute-force checks of H eq. (6) and the R_k bounds (eqs. 4, 7, 8)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import optimize

from dpgp_audit.methods.honkela.bounds import (
    dpsvgp_sensitivity,
    min_pairwise_distance,
    paper_sensitivity_is_tight,
    rk_bound,
    rk_grid1d_paper,
    rk_min_distance,
    rk_spacing_1d,
    rk_trivial,
    upper_dim,
    upper_unvec,
    upper_vec,
)


def _tb_loop(k: np.ndarray) -> np.ndarray:
    """Oracle for t_b (H eq. 23) written as an explicit loop."""
    d = len(k)
    out = [k[i] ** 2 for i in range(d)]
    for i in range(d):
        for j in range(i + 1, d):
            out.append(math.sqrt(2) * k[i] * k[j])
    return np.array(out)


def _delta(k, kp, y, yp, ratio):
    """Change of the rescaled query [y k; ratio t_b(k)] (H eq. 27), by the oracle t_b."""
    da = y * k - yp * kp
    db = ratio * (_tb_loop(k) - _tb_loop(kp))
    return math.sqrt(float(da @ da + db @ db))


def _brute_force_max(ry, rk, ratio, d, rng, starts=8):
    """Maximise the query change over ‖k‖, ‖k′‖ ≤ R_k, |y|, |y′| ≤ R_y by multistart search."""

    def unpack(p):
        u, up = p[:d], p[d:2 * d]
        k = rk * u / max(1.0, float(np.linalg.norm(u)))
        kp = rk * up / max(1.0, float(np.linalg.norm(up)))
        y, yp = ry * np.tanh(p[2 * d]), ry * np.tanh(p[2 * d + 1])
        return k, kp, y, yp

    best = 0.0
    for _ in range(starts):
        p0 = rng.normal(size=2 * d + 2) * 1.5
        res = optimize.minimize(lambda p: -_delta(*unpack(p), ratio), p0, method="Nelder-Mead",
                                options={"maxiter": 1500, "xatol": 1e-10, "fatol": 1e-12})
        best = max(best, -res.fun)
    # structured candidates: the two analytic maximisers
    e = np.zeros(d)
    e[0] = rk
    best = max(best, _delta(e, -e, ry, ry, ratio))
    c = ratio * ratio
    t = -ry * ry / (2 * c)
    if abs(t) <= rk * rk:
        # two unit-norm vectors with inner product t / rk^2
        ang = math.acos(t / rk**2)
        kp = np.zeros(d)
        kp[0], kp[1] = rk * math.cos(ang), rk * math.sin(ang)
        best = max(best, _delta(e, kp, ry, ry, ratio))
    return best


def test_upper_vec_matches_loop_oracle_and_frobenius(rng):
    for d in (1, 2, 5):
        k = rng.normal(size=d)
        np.testing.assert_allclose(upper_vec(np.outer(k, k)), _tb_loop(k), rtol=1e-14)
        S = rng.normal(size=(d, d))
        S = S + S.T
        assert upper_vec(S).shape == (upper_dim(d),)
        assert math.isclose(np.linalg.norm(upper_vec(S)), np.linalg.norm(S), rel_tol=1e-12)
        np.testing.assert_allclose(upper_unvec(upper_vec(S), d), S, atol=1e-13)


def test_upper_dim_is_d_choose_2_plus_d_not_paper_d2():
    # H §3.1 prints d2 = C(d+2, 2); the half-vectorisation has C(d+1, 2) entries.
    for d in (1, 3, 9):
        assert upper_dim(d) == math.comb(d + 1, 2)
        assert upper_dim(d) != math.comb(d + 2, 2)


@pytest.mark.parametrize(("ry", "rk", "ratio"), [
    (1.0, 1.0, 1.0),     # c = 1 >= 1/2: eq. (6) tight
    (1.0, 3.0, 1.0),     # R_k = sqrt(9): tight
    (3.0, 1.0, 1.0),     # c = 1 < 9/2: eq. (6) loose, exact = 2 R_y R_k
    (1.0, 1.0, 0.3),     # small ratio: loose
    (2.0, 0.5, 5.0),     # large ratio: tight
])
def test_exact_sensitivity_equals_brute_force_maximum(ry, rk, ratio, rng):
    exact = dpsvgp_sensitivity(ry, rk, ratio, "exact")
    paper = dpsvgp_sensitivity(ry, rk, ratio, "paper")
    brute = _brute_force_max(ry, rk, ratio, d=3, rng=rng)
    assert brute <= exact * (1 + 1e-9)
    assert brute >= exact * (1 - 1e-4)          # the bound is attained
    assert paper >= exact * (1 - 1e-12)          # the printed formula is never below
    if paper_sensitivity_is_tight(ry, rk, ratio):
        assert math.isclose(paper, exact, rel_tol=1e-12)
    else:
        assert math.isclose(exact, 2 * ry * rk, rel_tol=1e-12)
        assert paper > brute * 1.01              # the printed formula is loose here


def test_paper_formula_loose_example_numbers():
    # R_y = 3, R_k = 1, ratio 1: eq. (6) gives sqrt(4.5*9 + 18 + 2) = 7.78; exact is 6.
    assert math.isclose(dpsvgp_sensitivity(3, 1, 1, "paper"), math.sqrt(60.5), rel_tol=1e-12)
    assert math.isclose(dpsvgp_sensitivity(3, 1, 1, "exact"), 6.0, rel_tol=1e-12)


@given(st.floats(0.1, 5), st.floats(0.1, 5), st.floats(0.05, 10), st.integers(1, 6),
       st.integers(0, 2**32 - 1))
def test_bound_holds_on_random_rows(ry, rk, ratio, d, seed):
    r = np.random.default_rng(seed)
    bound = dpsvgp_sensitivity(ry, rk, ratio)
    for _ in range(20):
        k = r.normal(size=d)
        kp = r.normal(size=d)
        k *= rk * r.uniform() ** 0.3 / np.linalg.norm(k)
        kp *= rk * r.uniform() ** 0.3 / np.linalg.norm(kp)
        y, yp = r.uniform(-ry, ry, size=2)
        assert _delta(k, kp, y, yp, ratio) <= bound * (1 + 1e-12)
        assert _delta(k, -k, ry, ry, ratio) <= bound * (1 + 1e-12)


def test_sensitivity_rejects_bad_input():
    with pytest.raises(ValueError, match="y_bound"):
        dpsvgp_sensitivity(0.0, 1.0)
    with pytest.raises(ValueError, match="ratio"):
        dpsvgp_sensitivity(1.0, 1.0, ratio=float("nan"))
    with pytest.raises(ValueError, match="formula"):
        dpsvgp_sensitivity(1.0, 1.0, formula="wrong")


# ----------------------------------------------------------------------------- R_k


def _eq_profile(ell):
    return lambda r: np.exp(-0.5 * (np.asarray(r) / ell) ** 2)


def _sup_norm_1d(Z, ell, sf2):
    x = np.linspace(Z.min() - 3, Z.max() + 3, 20001)
    K = sf2 * np.exp(-0.5 * ((x[:, None] - Z[None, :]) / ell) ** 2)
    return float(np.sqrt(np.max(np.sum(K * K, axis=1))))


@pytest.mark.parametrize("m", [1, 2, 5, 9, 10])
@pytest.mark.parametrize("ell", [0.3, 1.0, 3.0])
def test_rk_bounds_dominate_brute_force_sup_1d(m, ell):
    Z = np.linspace(-3, 3, m)
    sf2 = 1.7
    sup = _sup_norm_1d(Z, ell, sf2)
    for method in ("trivial", "grid1d-paper", "spacing-1d", "min-distance"):
        assert rk_bound(method, Z, sf2, _eq_profile(ell)) >= sup * (1 - 1e-9), method
    if m > 1:
        dz = min_pairwise_distance(Z)
        tight = rk_spacing_1d(m, dz, _eq_profile(ell), sf2)
        assert tight <= rk_grid1d_paper(m, dz, _eq_profile(ell), sf2) + 1e-12


def test_paper_eq7_can_exceed_trivial_bound():
    # Long lengthscale: k_r ≈ 1, eq. (7) ≈ sqrt(|Z| + 2) σ_f² > sqrt(|Z|) σ_f² (eq. 4).
    m, dz = 9, 0.75
    assert rk_grid1d_paper(m, dz, _eq_profile(100.0), 1.0) > rk_trivial(m, 1.0)
    assert math.isclose(rk_bound("grid1d-paper", np.linspace(-3, 3, m), 1.0,
                                 _eq_profile(100.0)), rk_trivial(m, 1.0))


def test_rk_min_distance_dominates_sup_2d(rng):
    # random 2-D inducing inputs, dense search over x
    Z = rng.uniform(-2, 2, size=(7, 2))
    ell, sf2 = 0.8, 1.0
    g = np.linspace(-4, 4, 301)
    X = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    d2 = np.sum((X[:, None, :] - Z[None]) ** 2, -1)
    sup = float(np.sqrt(np.max(np.sum(np.exp(-d2 / ell**2), axis=1))))
    dz = min_pairwise_distance(Z)
    assert rk_min_distance(7, dz, _eq_profile(ell), sf2) >= sup
    with pytest.raises(ValueError, match="1-D"):
        rk_bound("spacing-1d", Z, sf2, _eq_profile(ell))


def test_rk_bound_validation():
    with pytest.raises(ValueError, match="k_r"):
        rk_bound("min-distance", np.array([0.0, 1.0]), 1.0)
    with pytest.raises(ValueError, match="non-increasing"):
        rk_min_distance(3, 1.0, lambda r: np.asarray(r) / (1 + np.asarray(r)), 1.0)
    with pytest.raises(ValueError, match="duplicate"):
        rk_bound("min-distance", np.array([0.0, 0.0, 1.0]), 1.0, _eq_profile(1.0))
    with pytest.raises(ValueError, match="method"):
        rk_bound("nope", np.array([0.0, 1.0]), 1.0, _eq_profile(1.0))
