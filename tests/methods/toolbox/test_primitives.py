"""The registered toolbox mechanisms (P.1, P.2, P.4, P.5): claims, sensitivities, sampling."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dpgp_audit import catalogue
from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.methods.toolbox.primitives import (
    ExponentialThresholdMechanism,
    FunctionalMechanism,
    LaplaceSumMechanism,
    MultivariateGaussianMechanism,
)
from dpgp_audit.norms import Mahalanobis
from dpgp_audit.privacy.calibrate import CalibrationRangeError
from dpgp_audit.privacy.claims import Neighbour, PureDP
from dpgp_audit.privacy.gdp import gdp_delta

P_IDS = ["P.1/gaussian-sum", "P.2/laplace-sum", "P.2/laplace-sum-rows", "P.2/exponential",
         "P.4/multivariate-gaussian", "P.5/functional"]


def _neighbour(data: Dataset, i: int, t: float) -> Dataset:
    return data.with_target(i, float(data.y[i] + t))


def test_every_primitive_is_registered():
    ids = {e.id for e in catalogue.entries(paper="P")}
    assert set(P_IDS) <= ids
    assert all(i.startswith("P.") for i in ids)


# ---------------------------------------------------------------- generic properties


@pytest.mark.parametrize("mid", P_IDS)
@given(seed=st.integers(0, 2**32 - 1))
def test_sensitivity_bound_holds_on_generated_neighbours(mid, seed):
    g = np.random.default_rng(seed)
    mech, data = catalogue.get(mid).make()
    y = g.uniform(-1, 1, data.n)
    d0 = Dataset(data.X, y)
    i = int(g.integers(data.n))
    rel = mech.claim.relation
    if rel.kind is Neighbour.ROWS:  # substitute a whole row inside the declared domain
        d1 = d0.with_row(i, g.uniform(-20, 20, data.dim), g.uniform(-rel.d, rel.d))
    else:
        t = float(g.choice([-1.0, 1.0]) * g.uniform(0.0, 1.0) ** 0.25) * rel.d
        d1 = _neighbour(d0, i, t)
    assert mech.norm(mech.query(d0) - mech.query(d1)) <= mech.sensitivity_bound() * (1 + 1e-9)


@pytest.mark.parametrize("mid", ["P.1/gaussian-sum", "P.4/multivariate-gaussian",
                                 "P.5/functional"])
def test_claimed_delta_covers_exact_gaussian_profile(mid):
    # White-box: the exact profile of N(m0, S) vs N(m1, S) is the mu-GDP profile with
    # mu = ||S^{-1/2}(m0 - m1)||; the claim's delta at its epsilon must be at least it,
    # for the worst single-target change of size d.
    mech, data = catalogue.get(mid).make()
    norm = Mahalanobis(np.atleast_2d(mech.cov(data)))
    d = mech.claim.relation.d
    m0 = np.ravel(mech.mean(data))
    mu = max(norm(np.ravel(mech.mean(_neighbour(data, i, s * d))) - m0)
             for i in range(data.n) for s in (-1.0, 1.0))
    assert gdp_delta(mech.claim.epsilon, mu) <= mech.claim.delta * (1 + 1e-8)


@pytest.mark.parametrize("mid", P_IDS)
def test_bad_targets_rejected(mid):
    mech, data = catalogue.get(mid).make()
    with pytest.raises(ValueError, match="non-finite"):
        Dataset(data.X, np.where(np.arange(data.n) == 0, np.nan, data.y))
    wrong = Dataset(data.X[:-1], data.y[:-1])
    if mid in ("P.4/multivariate-gaussian", "P.5/functional"):
        with pytest.raises(ValueError, match="data"):
            mech.sample(wrong, 2, np.random.default_rng(0))


# ---------------------------------------------------------------- P.2 Laplace


def test_p2_laplace_sum_distribution(rng):
    data = default_dataset()
    mech = LaplaceSumMechanism(d=0.5, epsilon=2.0)
    assert isinstance(mech.claim, PureDP) and mech.scale == 0.25
    x = mech.sample(data, 50_000, rng)
    assert x.shape == (50_000, 1)
    ref = stats.laplace(loc=math.fsum(data.y), scale=0.25)
    assert stats.kstest(x[:, 0], ref.cdf).pvalue > 1e-4


def test_p2_laplace_exact_epsilon_equals_claim():
    # Closed form: the largest log density ratio between Lap(s0, b) and Lap(s1, b) is
    # |s0 - s1| / b, which reaches epsilon for a change of exactly d.
    mech = LaplaceSumMechanism(d=0.5, epsilon=2.0)
    data = default_dataset()
    s0, s1 = mech.query(data)[0], mech.query(_neighbour(data, 3, 0.5))[0]
    grid = np.linspace(s0 - 5, s0 + 5, 4001)
    loss = np.max(np.abs(stats.laplace(s0, mech.scale).logpdf(grid)
                         - stats.laplace(s1, mech.scale).logpdf(grid)))
    assert loss == pytest.approx(mech.claim.epsilon, rel=1e-9)


def test_p2_laplace_whole_rows():
    mech, data = catalogue.get("P.2/laplace-sum-rows").make()
    assert mech.claim.relation.kind is Neighbour.ROWS and mech.claim.relation.d == 1.0
    assert mech.sensitivity_bound() == 2.0 and mech.scale == 2.0
    # the extreme substitution y_i: -1 -> +1 moves the sum by exactly 2 = the bound
    lo = data.with_row(0, data.X[0], -1.0)
    hi = data.with_row(0, [3.0], 1.0)
    assert mech.norm(mech.query(hi) - mech.query(lo)) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="y_bound"):
        LaplaceSumMechanism(d=1.0, epsilon=1.0, relation="rows")
    with pytest.raises(ValueError, match="relation"):
        LaplaceSumMechanism(d=1.0, epsilon=1.0, relation="pairs")


def test_p2_declared_bound_and_clip():
    data = Dataset(np.arange(3.0), np.array([0.2, 3.0, -0.5]))
    with pytest.raises(ValueError, match="outside the declared bound"):
        LaplaceSumMechanism(d=1.0, epsilon=1.0, y_bound=1.0).query(data)
    mech = LaplaceSumMechanism(d=1.0, epsilon=1.0, y_bound=1.0, clip=True)
    assert mech.query(data)[0] == pytest.approx(0.2 + 1.0 - 0.5)
    assert "clipped" in mech.claim.note
    with pytest.raises(ValueError, match="y_bound"):
        LaplaceSumMechanism(d=1.0, epsilon=1.0, clip=True)
    with pytest.raises(ValueError, match="epsilon"):
        LaplaceSumMechanism(d=1.0, epsilon=0.0)
    with pytest.raises(ValueError, match="d "):
        LaplaceSumMechanism(d=-1.0, epsilon=1.0)
    with pytest.raises(ValueError, match="d must be finite"):
        MultivariateGaussianMechanism(C=np.eye(2), epsilon=1.0, delta=1e-5, d=math.nan)


# ---------------------------------------------------------------- P.2 exponential


def _naive_probabilities(y, thresholds, q, eps):
    u = []
    for t in thresholds:
        count = sum(1 for v in y if v > t)
        u.append(-abs(count - q * len(y)))
    w = [math.exp(eps * ui / 2.0) for ui in u]
    return np.array(w) / sum(w)


def test_p2_exponential_probabilities_match_naive_oracle():
    data = default_dataset()
    t = np.linspace(-1, 1, 7)
    mech = ExponentialThresholdMechanism(thresholds=t, epsilon=1.5, quantile=0.3)
    np.testing.assert_allclose(mech.probabilities(data),
                               _naive_probabilities(data.y, t, 0.3, 1.5), rtol=1e-12)


@given(st.lists(st.floats(-2, 2), min_size=3, max_size=15), st.integers(0, 100),
       st.floats(-1, 1), st.floats(0.05, 5.0))
def test_p2_exponential_neighbour_ratio_at_most_e_epsilon(y, i, t, eps):
    y = np.array(y)
    d0 = Dataset(np.arange(y.size, dtype=float), y)
    d1 = _neighbour(d0, i % y.size, t)
    mech = ExponentialThresholdMechanism(thresholds=np.linspace(-2, 2, 9), epsilon=eps)
    assert mech.privacy_loss(d0, d1) <= eps * (1 + 1e-12)
    np.testing.assert_allclose(mech.probabilities(d0).sum(), 1.0, rtol=1e-12)


def test_p2_exponential_sampling_chi_square(rng):
    data = default_dataset()
    mech, _ = catalogue.get("P.2/exponential").make(data)
    n = 100_000
    idx = mech.sample(data, n, rng)
    assert idx.shape == (n,)
    p = mech.probabilities(data)
    counts = np.bincount(idx, minlength=p.size)
    keep = n * p > 5
    chi2 = np.sum((counts[keep] - n * p[keep]) ** 2 / (n * p[keep]))
    assert stats.chi2(keep.sum() - 1).sf(chi2) > 1e-4


def test_p2_exponential_bad_input():
    with pytest.raises(ValueError, match="thresholds"):
        ExponentialThresholdMechanism(thresholds=[0.0], epsilon=1.0)
    with pytest.raises(ValueError, match="thresholds"):
        ExponentialThresholdMechanism(thresholds=[0.0, math.nan], epsilon=1.0)
    with pytest.raises(ValueError, match="quantile"):
        ExponentialThresholdMechanism(thresholds=[0.0, 1.0], epsilon=1.0, quantile=1.5)


# ---------------------------------------------------------------- P.4 multivariate Gaussian


def test_p4_cloak_covariance_gives_sensitivity_d():
    # M = C C^T with C of full column rank: c_i^T M^+ c_i = 1 (leverages of the
    # row space), so the Mahalanobis sensitivity is exactly d although M is singular.
    mech, data = catalogue.get("P.4/multivariate-gaussian").make(d=0.7)
    assert np.linalg.matrix_rank(mech.M) == data.n < mech.M.shape[0]
    assert mech.sensitivity_bound() == pytest.approx(0.7, rel=1e-9)
    np.testing.assert_allclose(mech.factor @ mech.factor.T, mech.M, atol=1e-12)


def test_p4_identity_covariance_is_l2_sensitivity():
    mech, _ = catalogue.get("P.4/multivariate-gaussian").make(covariance="identity")
    assert mech.sensitivity_bound() == pytest.approx(np.max(np.linalg.norm(mech.C, axis=0)),
                                                     rel=1e-12)


def test_p4_singular_M_missing_a_direction_is_refused():
    C = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
    M = np.diag([1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="change direction 2"):
        MultivariateGaussianMechanism(C=C, M=M, epsilon=1.0, delta=1e-5)


def test_p4_sampling_moments(rng):
    mech, data = catalogue.get("P.4/multivariate-gaussian").make(k=8, covariance="identity")
    x = mech.sample(data, 40_000, rng)
    np.testing.assert_allclose(np.cov(x.T), mech.cov(data), atol=0.05 * mech.sigma**2)
    np.testing.assert_allclose(x.mean(axis=0), mech.mean(data), atol=6 * mech.sigma / 200)


def test_p4_bad_input():
    with pytest.raises(ValueError, match="C"):
        MultivariateGaussianMechanism(C=[[1.0, math.inf]], epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="zero"):
        MultivariateGaussianMechanism(C=np.zeros((2, 2)), M=np.eye(2), epsilon=1.0, delta=1e-5)
    with pytest.raises(CalibrationRangeError):
        MultivariateGaussianMechanism(C=np.eye(2), epsilon=2.0, delta=1e-5, method="hall")


# ---------------------------------------------------------------- P.5 functional


def _naive_rkhs_sensitivity(X, kernel, s2, d):
    n = X.shape[0]
    K = np.array([[kernel(X[i:i + 1], X[j:j + 1])[0, 0] for j in range(n)] for i in range(n)])
    W = np.linalg.inv(K + s2 * np.eye(n)) if s2 is not None else np.eye(n)
    best = 0.0
    for j in range(n):
        beta = d * W[:, j]
        best = max(best, math.sqrt(beta @ K @ beta))
    return best


@pytest.mark.parametrize("s2", [None, 0.1, 1.0])
def test_p5_rkhs_sensitivity_matches_naive_oracle(s2):
    data = default_dataset(12)
    k = EQ(lengthscale=1.3, variance=2.0)
    mech = FunctionalMechanism(X=data.X, grid=np.linspace(0, 10, 5), kernel=k, epsilon=1.0,
                               delta=1e-3, d=0.5, noise_variance=s2)
    assert mech.sensitivity_bound() == pytest.approx(_naive_rkhs_sensitivity(data.X, k, s2, 0.5),
                                                     rel=1e-9)
    if s2 is None:  # kernel sum: d sqrt(k(x, x))
        assert mech.sensitivity_bound() == pytest.approx(0.5 * math.sqrt(2.0), rel=1e-12)


def test_p5_mean_is_gp_posterior_mean_sklearn_oracle():
    sk = pytest.importorskip("sklearn.gaussian_process")
    data = default_dataset()
    mech, _ = catalogue.get("P.5/functional").make(data)
    gpr = sk.GaussianProcessRegressor(kernel=sk.kernels.RBF(1.0), alpha=0.1, optimizer=None,
                                      normalize_y=False).fit(data.X, data.y)
    np.testing.assert_allclose(mech.mean(data), gpr.predict(mech.grid), rtol=1e-8, atol=1e-10)


def test_p5_gdp_claim_and_mu():
    mech, data = catalogue.get("P.5/functional").make(epsilon=0.5, delta=1e-3)
    assert gdp_delta(0.5, mech.mu) == pytest.approx(1e-3, rel=1e-8)
    assert "mu" in mech.claim.note


def test_p5_hall_calibration_range_and_ordering():
    data = default_dataset()
    hall, _ = catalogue.get("P.5/functional").make(data, epsilon=0.5, method="hall")
    gdp, _ = catalogue.get("P.5/functional").make(data, epsilon=0.5, method="gdp")
    assert gdp.scale < hall.scale
    with pytest.raises(CalibrationRangeError):
        catalogue.get("P.5/functional").make(data, epsilon=2.0, method="hall")


def test_p5_sampling_covariance_is_scaled_gram(rng):
    mech, data = catalogue.get("P.5/functional").make(k=6)
    x = mech.sample(data, 40_000, rng)
    K = mech.kernel(mech.grid, mech.grid)
    np.testing.assert_allclose(np.cov(x.T), mech.scale**2 * K, atol=0.05 * mech.scale**2)


def test_p5_refuses_other_inputs():
    mech, data = catalogue.get("P.5/functional").make()
    moved = Dataset(data.X + 0.1, data.y)
    with pytest.raises(ValueError, match="public inputs"):
        mech.sample(moved, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="noise_variance"):
        FunctionalMechanism(X=data.X, grid=data.X, kernel=EQ(), epsilon=1.0, delta=1e-3,
                            noise_variance=-1.0)


@given(seed=st.integers(0, 2**32 - 1), eps=st.floats(0.05, 20.0),
       delta=st.sampled_from([1e-8, 1e-5, 1e-2]), singular=st.booleans())
def test_p4_exact_profile_never_exceeds_claim(seed, eps, delta, singular):
    # For random C and M (singular or not), the exact delta(eps) of the worst
    # single-target change (GDP profile of the Gaussian pair) is at most the claim.
    g = np.random.default_rng(seed)
    k, n = 5, 3
    C = g.standard_normal((k, n))
    M = C @ np.diag(g.uniform(0.2, 2.0, n)) @ C.T if singular else (
        (lambda A: A @ A.T + 0.1 * np.eye(k))(g.standard_normal((k, k))))
    mech = MultivariateGaussianMechanism(C=C, M=M, epsilon=eps, delta=delta, d=0.8)
    data = Dataset(np.arange(n, dtype=float), g.uniform(-1, 1, n))
    norm = Mahalanobis(mech.cov(data))
    mu = max(norm(mech.mean(_neighbour(data, i, 0.8)) - mech.mean(data)) for i in range(n))
    assert gdp_delta(eps, mu) <= delta * (1 + 1e-8)


@given(centres=st.lists(st.floats(0, 10), min_size=2, max_size=6, unique=True),
       grid=st.lists(st.integers(-8, 48), min_size=1, max_size=5, unique=True),
       eps=st.floats(0.05, 10.0), s2=st.sampled_from([None, 0.05, 1.0]))
def test_p5_exact_grid_profile_never_exceeds_claim(centres, grid, eps, s2):
    # Grid spacing >= 0.25 keeps K_gg numerically invertible enough for the check
    # (the inequality itself, R Lemma A.2, holds for any grid).
    X = np.array(centres)[:, None]
    G = 0.25 * np.array(grid, dtype=float)[:, None]
    mech = FunctionalMechanism(X=X, grid=G, kernel=EQ(lengthscale=2.0), epsilon=eps,
                               delta=1e-5, noise_variance=s2)
    data = Dataset(X, np.zeros(len(centres)))
    # A tiny ridge (above the norm's eigenvalue cut-off) keeps rounding in the
    # near-null directions of K_gg from reading as "outside the range"; it can only
    # hide a violation confined to directions with variance below 1e-9 c^2.
    cov = mech.cov(data) + 1e-9 * mech.scale**2 * np.eye(len(grid))
    norm = Mahalanobis(cov)
    mu = max(norm(mech.mean(data.with_target(j, 1.0)) - mech.mean(data))
             for j in range(len(centres)))
    assert mu <= mech.mu * (1 + 1e-6)
    assert gdp_delta(eps, mu) <= 1e-5 * (1 + 1e-6)
