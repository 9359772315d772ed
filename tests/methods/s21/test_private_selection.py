"""S21.5: Alg. 1's cross-validated SSE utility, its sensitivity, and the toy example of S21 §5.1."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpgp_audit.gp.kernels import EQ
from dpgp_audit.methods.s21.cv_utility import (
    clipped_square_sensitivity,
    config_sensitivity,
    cv_sse,
    expected_clipped_square,
    gp_cloaking_matrix,
    kfold_test_sets,
    polynomial_cloaking_matrix,
    prepare_folds,
)
from dpgp_audit.privacy.calibrate import hall_c

X_TOY = np.array([0.0, 1.0, 2.0, 4.0])
Y_TOY = np.array([0.0, 0.5, 1.0, 2.0])
D_TOY = 2.0  # "a sensitivity of 2"


def _closed_form_cloaking_variance(C):
    """Optimal cloaking M for the toy's 2 x 2 maps, by hand (independent of any solver).

    Invertible C: with P' = Cᵀ M⁻¹ C the problem is max log|P'| s.t. diag(P') <= 1, so P' = I
    (Hadamard) and M = C Cᵀ. Two identical columns c: M = c cᵀ (noise only along c).
    """
    if abs(np.linalg.det(C)) > 1e-12:
        M = C @ C.T
    else:
        assert np.allclose(C[:, 0], C[:, 1])
        M = np.outer(C[:, 0], C[:, 0])
    sigma = hall_c(0.01) * D_TOY / 1.0  # (1, 0.01)-DP, Hall's c(δ) (S21 §2.2)
    return sigma**2 * np.diag(M)


def _toy_models(interleaved):
    tests = kfold_test_sets(4, 2, interleaved=interleaved)
    return [prepare_folds(X_TOY, polynomial_cloaking_matrix(order), tests,
                          _closed_form_cloaking_variance) for order in (0, 1)]


def _p0(sse, du, eps=1.0):
    a = -eps * np.asarray(sse) / (2 * du)
    p = np.exp(a - a.max())
    return (p / p.sum())[0]


def test_s21_5_toy_cloaking_matrices():
    # first fold of the paper's split trains on x = {0, 1} and tests on {2, 4}
    tests = kfold_test_sets(4, 2)
    assert [t.tolist() for t in tests] == [[0, 1], [2, 3]]
    m0, m1 = _toy_models(False)
    np.testing.assert_allclose(m0.folds[1].C, [[0.5, 0.5], [0.5, 0.5]])  # C0
    np.testing.assert_allclose(m1.folds[1].C, [[-1, 2], [-3, 4]], atol=1e-12)  # C1


def test_s21_5_toy_example_reproduces_section_5_1():
    m0, m1 = _toy_models(False)
    # without DP: 6.875 (3.625 + 3.25) and 0
    assert cv_sse(m0, Y_TOY, D_TOY, clip=False, include_noise=False) == pytest.approx(6.875)
    assert cv_sse(m1, Y_TOY, D_TOY, clip=False, include_noise=False) == pytest.approx(0, abs=1e-20)
    # with (1, 0.01)-DP noise: exact expectations (the paper's 50 and 1597 are sampled)
    c2 = (hall_c(0.01) * D_TOY) ** 2
    sse0 = cv_sse(m0, Y_TOY, D_TOY, clip=False)
    sse1 = cv_sse(m1, Y_TOY, D_TOY, clip=False)
    assert sse0 == pytest.approx(6.875 + c2 * (0.5 + 0.5))  # tr(M) = 1/2 per fold
    assert sse1 == pytest.approx(c2 * (30 + 7.5))  # tr(C1 C1ᵀ) = 30, other fold 7.5
    assert sse0 == pytest.approx(49.26, abs=0.01) and abs(sse0 - 50) < 1
    assert sse1 == pytest.approx(1589.50, abs=0.01) and abs(sse1 - 1597) / 1597 < 0.01
    du = max(config_sensitivity(m, D_TOY, "text") for m in (m0, m1))
    assert du == pytest.approx(116)
    assert round(100 * _p0([sse0, sse1], du), 2) == 99.87  # exact expectations
    assert round(100 * _p0([50, 1597], du), 2) == 99.87  # the paper's sampled SSEs


def test_s21_5_toy_example_interleaved_split():
    m0, m1 = _toy_models(True)
    sse0 = cv_sse(m0, Y_TOY, D_TOY, clip=False)
    sse1 = cv_sse(m1, Y_TOY, D_TOY, clip=False)
    assert round(sse1) == 337
    du = max(config_sensitivity(m, D_TOY, "text") for m in (m0, m1))
    assert du == pytest.approx(53)
    assert round(100 * _p0([sse0, sse1], du), 2) == 93.94


def test_s21_5_text_and_algorithm_disagree_and_both_undercount():
    m0, m1 = _toy_models(False)
    assert config_sensitivity(m1, D_TOY, "algorithm") == pytest.approx(9 * 4 + 4 * 6.25)  # 61
    assert config_sensitivity(m1, D_TOY, "text") == pytest.approx(116)
    assert config_sensitivity(m1, D_TOY, "valid") == pytest.approx(140)
    assert config_sensitivity(m0, D_TOY, "valid") == pytest.approx(58)
    # explicit witness (clipped SSE, no noise) where |ΔSSE| reaches the valid bound:
    # moving y[1] (x = 1) by +2 moves the linear fit on {0, 1} by (4, 8) at x = (2, 4): errors
    # (4, 0) -> (8, 8) add 48 + 64; in the other fold x = 1 is a test point, error -6 -> -8
    # adds 28. Total 140 > 116 = the paper's bound (S21 eq. 13 misses the cross term 2 e δ).
    y = np.array([0.0, 0.0, -4.0, 0.0])
    y2 = y.copy()
    y2[1] += D_TOY
    change = abs(cv_sse(m1, y2, D_TOY, include_noise=False) - cv_sse(m1, y, D_TOY,
                                                                        include_noise=False))
    assert change == pytest.approx(140, abs=1e-9)
    assert change > config_sensitivity(m1, D_TOY, "text")


def test_expected_clipped_square_against_quadrature(rng):
    for e, s, a in [(0.3, 1.2, 2.0), (-5.0, 0.5, 8.0), (9.0, 3.0, 8.0), (1.0, 0.0, 2.0),
                    (0.5, 2.0, np.inf)]:
        z = np.linspace(-12, 12, 200_001)
        w = np.exp(-0.5 * z**2) / np.sqrt(2 * np.pi)
        want = np.trapezoid(np.minimum((e + s * z) ** 2, a**2) * w, z)
        got = float(expected_clipped_square(np.array([e]), np.array([s]), a)[0])
        assert got == pytest.approx(want, rel=1e-6, abs=1e-9)


def test_clipped_square_sensitivity_is_the_supremum():
    d = 0.7
    a = 4 * d
    e = np.linspace(-3 * a, 3 * a, 100_001)
    h = lambda x: np.minimum(x**2, a**2)  # noqa: E731
    for delta in (0.1, d, 2.5, 3.5 * d, 5 * d):
        sup = np.max(np.abs(h(e + delta) - h(e)))
        assert float(clipped_square_sensitivity(delta, d)) == pytest.approx(sup, rel=1e-4)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(4, 12), k=st.integers(2, 4),
       model=st.sampled_from(["poly0", "poly1", "poly2", "gp"]), noise=st.booleans(),
       interleaved=st.booleans())
def test_s21_5_valid_bound_holds_on_random_neighbours(seed, n, k, model, noise, interleaved):
    g = np.random.default_rng(seed)
    k = min(k, n // 2)
    X = np.sort(g.uniform(0, 5, n)) + np.arange(n) * 1e-3
    cloak = (gp_cloaking_matrix(EQ(g.uniform(0.3, 3)), g.uniform(0.01, 1)) if model == "gp"
             else polynomial_cloaking_matrix(int(model[-1])))
    if model == "poly2" and n - int(np.ceil(n / k)) < 3:
        return
    d = float(g.uniform(0.2, 2))
    var = (lambda C: g.uniform(0, 2) * np.sum(C**2, axis=1)) if noise else None
    m = prepare_folds(X, cloak, kfold_test_sets(n, k, interleaved=interleaved), var)
    bound = config_sensitivity(m, d, "valid")
    for _ in range(10):
        y = g.normal(0, 3 * d, n)
        j = int(g.integers(n))
        y2 = y.copy()
        y2[j] += g.uniform(-d, d)
        change = abs(cv_sse(m, y, d, include_noise=noise) - cv_sse(m, y2, d, include_noise=noise))
        assert change <= bound * (1 + 1e-9) + 1e-9


def test_kfold_and_prepare_folds_validation():
    with pytest.raises(ValueError, match="folds"):
        kfold_test_sets(3, 4)
    with pytest.raises(ValueError, match="partition"):
        prepare_folds(X_TOY, polynomial_cloaking_matrix(0), [np.array([0, 1])])
    with pytest.raises(ValueError, match="rule"):
        config_sensitivity(_toy_models(False)[0], 1.0, "paper")


def test_s21_5_cross_checks_with_s18_selection(rng):
    """Same folds, GP configs, no noise: S21's clipped SSE equals S18's; its bound is tighter."""
    from dpgp_audit.methods.s18.hyperparameter_selection import (
        GPConfig,
        clipped_sse_sensitivity,
        fold_cloaking_matrices,
        fold_sse,
    )

    X = np.sort(rng.uniform(0, 10, 15))[:, None]
    y = rng.normal(0, 2, 15)
    d = 0.8
    tests = kfold_test_sets(15, 3, interleaved=True)
    for ls in (0.5, 2.0):
        cfg = GPConfig(EQ(ls), 0.3)
        m = prepare_folds(X, gp_cloaking_matrix(EQ(ls), 0.3), tests)
        Cs = fold_cloaking_matrices(X, cfg, tests)
        for f, C in zip(m.folds, Cs, strict=True):
            np.testing.assert_allclose(f.C, C, rtol=1e-10, atol=1e-12)
        assert cv_sse(m, y, d, include_noise=False) == pytest.approx(
            float(fold_sse(y, tests, Cs, 4 * d).sum()))
        assert config_sensitivity(m, d, "valid") <= clipped_sse_sensitivity(Cs, d, 4 * d) + 1e-9
