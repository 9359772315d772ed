"""The mutation benchmark's GP and subsampling releases (:mod:`dpgp_audit.bugs.mutants`, A.5).

Each premise is checked against a naive oracle written here (dense solves, a brute-force
marginal likelihood, the Gaussian trade-off solved with scipy), never against the
mutant's own helpers; the default path is then run on both forms of each.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import optimize, stats

from dpgp_audit.audit.neighbours import neighbour_pairs
from dpgp_audit.bugs.mutants import build_form, fitted_lengthscale, fixed_subsample_rows, mutants
from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.default import default_dataset
from dpgp_audit.experiments.mutation import run_mutation
from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma

GP_MUTANTS = ("gp-noise-from-another-fit", "gp-lengthscale-fitted-on-private-data",
              "control-gp-posterior-variance")
XS = np.linspace(0.0, 10.0, 5)


def _spec(name: str):
    return next(s for s in mutants(default_dataset()) if s.name == name)


def _misses(rows) -> list:
    """The forms the default path got wrong: a bug not flagged, or a control flagged."""
    return [(r.form, r.verdict, r.caught_by) for r in rows if not r.correct]


def _default_path_misses(name: str) -> list:
    """:func:`_misses` of both forms of mutant ``name`` on the default path (seed 2026)."""
    return _misses(run_mutation([_spec(name)], np.random.default_rng(2026)))


def _naive_weights(x: np.ndarray, ell: float, noise: float) -> np.ndarray:
    """K(x*, X) (K(X, X) + s² I)⁻¹ by a dense solve (R&W eq. 2.25)."""
    k = lambda a, b: np.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / ell**2)  # noqa: E731
    return np.linalg.solve(k(x, x) + noise * np.eye(x.size), k(x, XS)).T


def _gaussian_epsilon(mu: float, delta: float) -> float:
    """ε with δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) = ``delta`` (Balle & Wang 2018, Thm. 8)."""
    def gap(e: float) -> float:
        return stats.norm.cdf(-e / mu + mu / 2) - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2) \
            - delta
    return optimize.brentq(gap, 0.0, 50.0)


def test_gp_noise_from_another_fit_is_under_noised_by_the_closed_form():
    spec, data = _spec("gp-noise-from-another-fit"), default_dataset()
    x = np.asarray(data.X)[:, 0]
    C = _naive_weights(x, 2.0, 0.1)
    model = build_form(spec, "model")
    np.testing.assert_allclose(model.mean(data), C @ data.y, rtol=1e-10, atol=1e-12)
    sigma = math.sqrt(model.cov(data)[0, 0])
    # the release's sd is the model's: the sample form draws it (two-sided 1e-4 chi-square band)
    draws = build_form(spec, "sample").sample(data, 20_000, np.random.default_rng(5))
    resid = (draws - C @ data.y).ravel()
    lo, hi = (stats.chi2.ppf(q, resid.size) / resid.size for q in (1e-4, 1 - 1e-4))
    assert lo < np.mean(resid**2) / sigma**2 < hi
    # one target moves by at most 1 (outputs_only(1)): mu = largest column norm / sigma
    mu = float(np.max(np.linalg.norm(C, axis=0))) / sigma
    assert _gaussian_epsilon(mu, 1e-5) > 2.0  # against the claimed 1
    # the cause: the other fit (noise variance 1) smooths more, so its weights are smaller
    other = _naive_weights(x, 2.0, 1.0)
    assert np.max(np.linalg.norm(other, axis=0)) < np.max(np.linalg.norm(C, axis=0)) / 1.5


def test_gp_lengthscale_fit_moves_between_generated_neighbours():
    spec, data = _spec("gp-lengthscale-fitted-on-private-data"), default_dataset()
    x = np.asarray(data.X)[:, 0]
    grid = np.geomspace(0.5, 5.0, 8)

    def brute(d) -> float:  # log N(y; 0, K + s² I) on the grid, by slogdet and solve
        def lml(ell: float) -> float:
            K = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / ell**2) + 0.1 * np.eye(x.size)
            return -0.5 * d.y @ np.linalg.solve(K, d.y) - 0.5 * np.linalg.slogdet(K)[1]
        return float(grid[int(np.argmax([lml(e) for e in grid]))])

    pairs = neighbour_pairs(data, spec.claim.relation, np.random.default_rng(0))
    moved = [p for p in pairs if brute(p.d0) != brute(p.d1)]
    assert moved, "the premise: one target's change moves the fitted lengthscale"
    for p in moved[:3]:
        assert fitted_lengthscale(p.d0) == brute(p.d0)
        assert fitted_lengthscale(p.d1) == brute(p.d1)
        # the mean's weights and the noise sd move with it: the release depends on y twice
        m0, m1 = (build_form(spec, "model").cov(d)[0, 0] for d in (p.d0, p.d1))
        assert m0 != m1


def test_gp_posterior_variance_control_releases_public_values_only():
    spec, data = _spec("control-gp-posterior-variance"), default_dataset()
    x = np.asarray(data.X)[:, 0]
    k = np.exp(-0.5 * (XS[:, None] - x[None, :]) ** 2 / 4.0)
    var = 1.0 - np.sum(_naive_weights(x, 2.0, 0.1) * k, axis=1)
    mech = build_form(spec, "sample")
    for p in neighbour_pairs(data, spec.claim.relation, np.random.default_rng(0))[:6]:
        a = mech.sample(p.d0, 3, np.random.default_rng(1))
        b = mech.sample(p.d1, 3, np.random.default_rng(1))
        np.testing.assert_allclose(a[:, 5:], np.tile(var, (3, 1)), rtol=1e-9, atol=1e-12)
        assert np.array_equal(a[:, 5:], b[:, 5:])  # the same bits on both sides


@pytest.mark.parametrize("name", GP_MUTANTS)
def test_gp_mutants_on_the_default_path(name):
    rows = run_mutation([_spec(name)], np.random.default_rng(2026))
    assert [r.form for r in rows] == ["sample", "model"]
    assert not _misses(rows)


SUBSAMPLE_MUTANTS = ("fixed-subsample-amplified", "control-fresh-subsample")


def _amplified(eps0: float, gamma: float) -> float:
    """log(1 + γ(e^ε₀ − 1)): sampling without replacement, replace-one (Balle et al. 2018)."""
    return math.log(1.0 + gamma * (math.exp(eps0) - 1.0))


def test_subsample_mutants_noise_is_calibrated_for_the_amplified_claim():
    data = default_dataset()
    spec = _spec("fixed-subsample-amplified")
    sigma = math.sqrt(build_form(spec, "model").cov(data)[0, 0])
    gamma = 2 / 20  # m = 2 of the 20 rows
    # the noise alone gives (eps0, delta / gamma) for a sum moving by 1, and the amplified
    # guarantee of that is exactly the claim (1, 1e-5)
    eps0 = _gaussian_epsilon(1.0 / sigma, 1e-5 / gamma)
    assert _amplified(eps0, gamma) == pytest.approx(1.0, abs=1e-6)
    assert eps0 > 2.8


def test_fixed_subsample_reads_two_rows_and_loses_eps0_on_them():
    data = default_dataset()
    spec = _spec("fixed-subsample-amplified")
    mech = build_form(spec, "sample")
    rows = fixed_subsample_rows(data)
    assert rows.size == 2
    seen = []
    for i in range(data.n):  # a coupled run: the same seed on D and on y[i] moved by 1
        moved = data.with_target(i, float(data.y[i]) + 1.0)
        a = mech.sample(data, 4, np.random.default_rng(9))
        b = mech.sample(moved, 4, np.random.default_rng(9))
        if not np.array_equal(a, b):
            seen.append(i)
            np.testing.assert_allclose(b - a, 1.0, atol=1e-3)  # the whole move, every draw
    assert seen == rows.tolist()  # only the rows it reads change the release
    sigma = math.sqrt(build_form(spec, "model").cov(data)[0, 0])
    assert _gaussian_epsilon(1.0 / sigma, 1e-5) > 2.5  # on those rows, against the claimed 1


def test_fresh_subsample_control_sums_m_distinct_rows_per_release():
    data = default_dataset()
    spec = _spec("control-fresh-subsample")
    y = np.arange(1.0, 21.0) * 1000.0  # each row's value readable from the sum
    big = Dataset(data.X, y)
    out = build_form(spec, "sample").sample(big, 4000, np.random.default_rng(3))[:, 0]
    sums = np.round(out / 1000.0)  # noise sd ~ 5 against spacing 1000
    assert np.all((sums >= 1 + 2) & (sums <= 19 + 20))  # two distinct rows
    # each pair {i, j} equally likely: the mean of the sum is 2 * mean(1..20) = 21
    assert abs(float(np.mean(sums)) - 21.0) < 4 * float(np.std(sums)) / math.sqrt(sums.size)


@pytest.mark.parametrize("name", SUBSAMPLE_MUTANTS)
def test_subsample_mutants_on_the_default_path(name):
    # before the coverage pairs no generated pair moved row 12 or 16 on most seeds
    assert not _default_path_misses(name)


SCALE_MUTANTS = ("noise-scaled-up-by-spread", "control-scale-from-public-x")


def _unequal_delta(eps: float, m0: float, s0: float, m1: float, s1: float) -> float:
    """max over both orders of ∫ (p − e^ε q)₊ for two scalar Gaussians (quadrature)."""
    from scipy import integrate

    def one(a: float, sa: float, b: float, sb: float) -> float:
        def f(x: float) -> float:
            return max(stats.norm.pdf(x, a, sa) - math.exp(eps) * stats.norm.pdf(x, b, sb), 0.0)
        lo, hi = min(a - 40 * sa, b - 40 * sb), max(a + 40 * sa, b + 40 * sb)
        return integrate.quad(f, lo, hi, points=[a, b], epsabs=1e-15, limit=500)[0]
    return max(one(m0, s0, m1, s1), one(m1, s1, m0, s0))


def test_scaled_up_noise_is_never_below_the_calibration_yet_leaks_its_scale():
    data = default_dataset()
    mech = build_form(_spec("noise-scaled-up-by-spread"), "model")
    sigma = 3.730631634815941  # analytic (1, 1e-5) sigma for sensitivity 1
    flat = Dataset(data.X, np.full(data.n, 0.5))  # every target equal: sd(y) = 0
    moved = flat.with_target(10, -0.5)  # one target moved by d = 1
    s0, s1 = (math.sqrt(mech.cov(d)[0, 0]) for d in (flat, moved))
    assert s0 == pytest.approx(sigma, rel=1e-9)  # never below the calibration
    assert s1 == pytest.approx(sigma * (1 + np.std(moved.y)), rel=1e-9) and s1 > s0
    # the sums move by 1 as the claim allows, but the sds differ by 22 %: delta(1) is
    # three orders of magnitude above the claimed 1e-5
    assert _unequal_delta(1.0, 10.0, s0, 9.0, s1) > 1e-2
    assert _unequal_delta(1.0, 10.0, s0, 9.0, s0) == pytest.approx(1e-5, rel=1e-4)


def test_public_x_scale_control_is_the_same_on_outputs_only_neighbours():
    data = default_dataset()
    mech = build_form(_spec("control-scale-from-public-x"), "sample")
    for p in neighbour_pairs(data, mech.claim.relation, np.random.default_rng(0)):
        a = mech.sample(p.d0, 4, np.random.default_rng(9))
        b = mech.sample(p.d1, 4, np.random.default_rng(9))
        # the same noise, scaled the same way: only the sum moves (by at most 1, up to the
        # rounding to the release grid, below sd/1000 = 0.01)
        assert np.array_equal(p.d0.X, p.d1.X)
        shift = float(np.sum(p.d1.y) - np.sum(p.d0.y))
        assert abs(shift) <= 1.0 + 1e-9
        np.testing.assert_allclose(b - a, shift, atol=0.01)
    assert _unequal_delta(1.0, 0.0, 3.730631634815941 * 2, 1.0, 3.730631634815941 * 2) < 1e-5


@pytest.mark.parametrize("name", SCALE_MUTANTS)
def test_scale_mutants_on_the_default_path(name):
    rows = run_mutation([_spec(name)], np.random.default_rng(2026))
    assert not _misses(rows)
    if name.startswith("noise"):  # the grey-box bound sees it, not the black-box auditor
        assert all("greybox" in r.caught_by for r in rows)


# ----------------------------------------------------------------------------- data-shaped
DATA_SHAPED = ("noise-skipped-on-zero-sum", "exact-when-large", "histogram-data-range",
               "exp-mech-over-data-values", "targets-standardised", "linf-for-l2",
               "noise-off-by-one", "control-histogram-public-range",
               "control-exp-mech-public-grid", "control-l2-from-column-norms")
SIGMA_1 = 3.730631634815941  # analytic (1, 1e-5) sigma for sensitivity 1 (Balle & Wang 2018)


def _kernel_columns(data: Dataset) -> np.ndarray:
    """exp(−(z − x)²/(2·3²)) at 8 evenly spaced points of the x-range, written out here."""
    x = np.asarray(data.X, dtype=float)[:, 0]
    z = x.min() + (x.max() - x.min()) * np.arange(8) / 7.0
    return np.exp(-((z[:, None] - x[None, :]) ** 2) / 18.0)


def test_zero_sum_and_large_sum_branches_release_exact_values_on_one_side():
    data = default_dataset()
    zero = Dataset(data.X, np.array([1.0, -1.0] * 10))  # the targets cancel: sum exactly 0
    moved = zero.with_target(3, 0.0)  # one target moved by 1: sum 1
    mech = build_form(_spec("noise-skipped-on-zero-sum"), "sample")
    assert np.all(mech.sample(zero, 64, np.random.default_rng(1)) == 0.0)
    assert np.std(mech.sample(moved, 64, np.random.default_rng(1))) > 1.0  # noisy: eps = inf
    big = Dataset(data.X, np.ones(20))  # sum 20 > 0.9 n, and 19 after one move
    mech = build_form(_spec("exact-when-large"), "sample")
    a = mech.sample(big, 8, np.random.default_rng(1))
    b = mech.sample(big.with_target(0, 0.0), 8, np.random.default_rng(2))
    assert np.all(a == 20.0) and np.all(b == 19.0)  # two deterministic, different releases


def test_data_range_histogram_moves_many_counts_and_public_range_at_most_two():
    data = default_dataset()

    def counts(y: np.ndarray, lo: float, hi: float) -> np.ndarray:
        """numpy's documented bins: 10 equal ones on [lo, hi], half-open but the last."""
        if lo == hi:  # an empty range is widened by 0.5 each way
            lo, hi = lo - 0.5, hi + 0.5
        edges = np.linspace(lo, hi, 11)
        k = np.searchsorted(edges, y, side="right") - 1
        k[y == hi] = 9
        return np.bincount(k[(y >= lo) & (y <= hi)], minlength=10)

    bug = _spec("histogram-data-range").model["query"]
    ctrl = _spec("control-histogram-public-range").model["query"]
    worst_bug = worst_ctrl = 0.0
    for p in neighbour_pairs(data, _spec("histogram-data-range").claim.relation,
                             np.random.default_rng(0)):
        y0, y1 = np.asarray(p.d0.y), np.asarray(p.d1.y)
        np.testing.assert_array_equal(bug(p.d0), counts(y0, y0.min(), y0.max()))
        np.testing.assert_array_equal(ctrl(p.d0), counts(y0, -1.0, 1.0))
        worst_bug = max(worst_bug, float(np.abs(counts(y1, y1.min(), y1.max())
                                                - counts(y0, y0.min(), y0.max())).sum()))
        worst_ctrl = max(worst_ctrl, float(np.abs(counts(y1, -1, 1) - counts(y0, -1, 1)).sum()))
    assert worst_ctrl <= 2.0  # Laplace(2/eps) per count: eps = 1 as claimed
    assert worst_bug >= 6.0  # the edges move with the extremes: pure eps >= 3


def test_exp_mech_over_data_values_releases_a_value_the_neighbour_cannot():
    data = default_dataset()
    mech = build_form(_spec("exp-mech-over-data-values"), "sample")
    i = int(np.argsort(data.y)[10])  # a central row: the median's neighbourhood
    moved = data.with_target(i, float(data.y[i]) + 0.5)
    out = mech.sample(data, 20_000, np.random.default_rng(3))[:, 0]
    assert np.mean(out == data.y[i]) > 0.01  # released often under D, impossible under D'
    assert data.y[i] not in set(np.asarray(moved.y))
    grid = build_form(_spec("control-exp-mech-public-grid"), "sample")
    assert set(np.unique(grid.sample(data, 2_000, np.random.default_rng(3)))) <= \
        set(np.round(np.linspace(-1, 1, 21), 12)) | set(np.linspace(-1, 1, 21))


def test_standardised_targets_sum_moves_by_more_than_its_stated_two():
    data = default_dataset()
    spec = _spec("targets-standardised")

    def stat(y: np.ndarray) -> float:
        z = (y - y.mean()) / y.std()
        return float(np.minimum(np.maximum(z, -1.0), 1.0).sum())

    worst = max(abs(stat(np.asarray(p.d1.y)) - stat(np.asarray(p.d0.y)))
                for p in neighbour_pairs(data, spec.claim.relation, np.random.default_rng(0))
                if np.std(p.d0.y) > 0 and np.std(p.d1.y) > 0)
    assert worst > 2.5  # stated sensitivity 2
    assert _gaussian_epsilon(worst / (2.0 * SIGMA_1), 1e-5) > 1.2


def test_linf_calibration_under_noises_the_vector_and_the_l2_control_does_not():
    data = default_dataset()
    W = _kernel_columns(data)
    bug, ctrl = (build_form(_spec(n), "model") for n in ("linf-for-l2",
                                                         "control-l2-from-column-norms"))
    np.testing.assert_allclose(bug.mean(data), W @ data.y, rtol=1e-12)
    sd_bug, sd_ctrl = (math.sqrt(m.cov(data)[0, 0]) for m in (bug, ctrl))
    assert sd_bug == pytest.approx(SIGMA_1 * W.max(), rel=1e-6)  # max |w| · d, d = 1
    col = float(np.linalg.norm(W, axis=0).max())  # one target moved by 1 moves W @ y by this
    assert sd_ctrl == pytest.approx(SIGMA_1 * col, rel=1e-6)
    assert _gaussian_epsilon(col / sd_bug, 1e-5) > 1.5
    assert _gaussian_epsilon(col / sd_ctrl, 1e-5) == pytest.approx(1.0, abs=1e-6)


def test_noise_off_by_one_leaves_the_last_half_sum_bare():
    data = default_dataset()
    mech = build_form(_spec("noise-off-by-one"), "sample")
    out = mech.sample(data, 16, np.random.default_rng(0))
    # one value, the half-sum on the release grid (about sd/1500): deterministic, eps = inf
    assert np.unique(out[:, 1]).size == 1
    assert abs(out[0, 1] - float(np.sum(data.y[10:]))) < SIGMA_1 / 1000
    assert np.std(out[:, 0]) > 1.0


@pytest.mark.parametrize("name", DATA_SHAPED)
def test_data_shaped_mutants_on_the_default_path(name):
    assert not _default_path_misses(name)


# ----------------------------------------------------------------------------- GP structure
GP_STRUCTURE = ("svgp-lengthscale-mismatch", "inducing-at-top-targets", "subset-of-top-targets",
                "gp-prior-mean-from-targets")


def _eq(a: np.ndarray, b: np.ndarray, ell: float) -> np.ndarray:
    return np.exp(-((a[:, None] - b[None, :]) ** 2) / (2.0 * ell**2))


def test_svgp_lengthscale_mismatch_rows_outgrow_the_bound_they_were_noised_for():
    data = default_dataset()
    mech = build_form(_spec("svgp-lengthscale-mismatch"), "model")
    z, x = np.linspace(0.0, 10.0, 9), np.asarray(data.X)[:, 0]
    np.testing.assert_allclose(mech.mean(data), _eq(z, x, 3.0) @ data.y, rtol=1e-12)
    grid = np.linspace(-10.0, 20.0, 30001)
    rk1 = float(np.linalg.norm(_eq(z, grid, 1.0), axis=0).max())  # R_k at lengthscale 1
    sd = math.sqrt(mech.cov(data)[0, 0])
    mu_claim = 2.0 * rk1 / sd  # the whole-row flip y = +1 -> -1 the noise was set for
    assert _gaussian_epsilon(mu_claim, 1e-5) == pytest.approx(1.0, abs=1e-3)
    worst = float(np.linalg.norm(_eq(z, x, 3.0), axis=0).max())  # a data row, at lengthscale 3
    assert worst > 1.6 * rk1
    assert _gaussian_epsilon(2.0 * worst / sd, 1e-5) > 1.5


@pytest.mark.parametrize("name,k", [("inducing-at-top-targets", 4), ("subset-of-top-targets", 10)])
def test_structure_chosen_by_the_largest_targets_moves_between_neighbours(name, k):
    data = default_dataset()
    spec = _spec(name)
    mech = build_form(spec, "sample")
    moved = 0
    for p in neighbour_pairs(data, spec.claim.relation, np.random.default_rng(0), y_bound=1e6):
        top0 = set(np.argsort(-np.abs(p.d0.y), kind="stable")[:k].tolist())
        top1 = set(np.argsort(-np.abs(p.d1.y), kind="stable")[:k].tolist())
        if top0 == top1:
            continue
        moved += 1
        # the same noise draws on both sides: the releases' spread differs with the structure
        a = mech.sample(p.d0, 4000, np.random.default_rng(5))
        b = mech.sample(p.d1, 4000, np.random.default_rng(5))
        if abs(float(np.mean(np.std(a, axis=0) / np.std(b, axis=0))) - 1.0) > 0.02:
            break  # per coordinate: the same draws scaled by two different noise sds
    else:
        pytest.fail(f"no generated pair changes the noise scale ({moved} change the rows)")
    assert moved >= 1


def test_a_prior_mean_set_to_the_targets_mean_moves_the_release_beyond_its_noise():
    """m = ȳ + K*(K + s²I)⁻¹(y − ȳ1) (R&W eq. 2.25 with a constant prior mean, what
    scikit-learn's ``normalize_y=True`` computes) is W y + ȳ(1 − W1): one target moved by
    d moves it by d(w_i + (1 − W1)/n), beyond the d·max‖w_i‖ its noise was set for, most
    at test points outside the data, where W1 < 1."""
    data = default_dataset()
    x, y = np.asarray(data.X)[:, 0], np.asarray(data.y)
    xs = np.linspace(-2.0, 12.0, 5)
    k = lambda a, b: np.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / 2.0**2)  # noqa: E731
    W = np.linalg.solve(k(x, x) + 0.1 * np.eye(x.size), k(x, xs)).T
    mech = build_form(_spec("gp-prior-mean-from-targets"), "model")
    np.testing.assert_allclose(mech.mean(data), y.mean() + W @ (y - y.mean()), rtol=1e-10,
                               atol=1e-12)
    sd = math.sqrt(mech.cov(data)[0, 0])
    mu_claim = float(np.linalg.norm(W, axis=0).max()) / sd  # d = 1
    assert _gaussian_epsilon(mu_claim, 1e-5) == pytest.approx(1.0, abs=1e-3)
    moves = W + (1.0 - W.sum(axis=1, keepdims=True)) / x.size
    mu_true = float(np.linalg.norm(moves, axis=0).max()) / sd
    assert _gaussian_epsilon(mu_true, 1e-5) > 1.03


@pytest.mark.parametrize("name", GP_STRUCTURE)
def test_gp_structure_mutants_on_the_default_path(name):
    assert not _default_path_misses(name)


# ------------------------------------------------------------------ calibration slips
CALIBRATION_SLIPS = ("gaussian-classical-without-the-2", "median-with-mean-sensitivity",
                     "feature-histograms-whole-rows", "control-rounded-laplace-count")


def test_classical_sigma_without_the_2_exceeds_its_claim_by_the_gaussian_trade_off():
    """σ = sqrt(ln(1.25/δ)) for Δ = ε = 1 instead of Dwork & Roth's sqrt(2 ln(1.25/δ)): μ = 1/σ
    gives ε ≈ 1.098 at δ = 1e-5 (Balle & Wang's exact curve), while the textbook σ stays
    below the claim."""
    data = default_dataset()
    mech = build_form(_spec("gaussian-classical-without-the-2"), "model")
    sd_bug = math.sqrt(math.log(1.25 / 1e-5))
    assert math.sqrt(mech.cov(data)[0, 0]) == pytest.approx(sd_bug, rel=1e-12)
    assert _gaussian_epsilon(1.0 / sd_bug, 1e-5) == pytest.approx(1.098, abs=1e-3)
    assert _gaussian_epsilon(1.0 / (math.sqrt(2.0) * sd_bug), 1e-5) < 1.0


def test_median_moves_by_half_n_times_the_mean_sensitivity_on_a_split_base():
    """Ten targets at -1 and ten at +1: the median (average of the 10th and 11th order
    statistics) is 0; one +1 moved to -1 makes it -1, n/2 = 10 times the stated 2/n."""
    spec = _spec("median-with-mean-sensitivity")
    mech = build_form(spec, "model")
    x = np.asarray(default_dataset().X)
    y = np.repeat([-1.0, 1.0], 10)
    y2 = y.copy()
    y2[-1] = -1.0
    def middle(v):
        s = sorted(v)
        return (s[9] + s[10]) / 2
    assert (middle(y), middle(y2)) == (0.0, -1.0)
    assert mech.query(Dataset(x, y2)) - mech.query(Dataset(x, y)) == pytest.approx([-1.0])
    assert mech.sensitivity_bound() == pytest.approx(2.0 / 20)


def test_a_whole_row_moves_one_count_pair_in_each_feature_histogram():
    """A row moved from the first bin of every feature to the last changes 6 counts by one:
    L1 sensitivity 6 against the stated 2, so Laplace(2) gives ε = 3, not 1."""
    spec = _spec("feature-histograms-whole-rows")
    data, mech = spec.data, build_form(spec, "model")
    X = np.asarray(data.X, dtype=float).copy()
    edges = np.linspace(-1.0, 1.0, 6)
    def counts(M):
        return np.array([sum(edges[b] <= v < edges[b + 1] or (b == 4 and v == 1.0)
                             for v in M[:, j]) for j in range(3) for b in range(5)], float)
    X[0] = -0.95
    X2 = X.copy()
    X2[0] = 0.95
    d, d2 = Dataset(X, data.y), Dataset(X2, data.y)
    np.testing.assert_array_equal(mech.query(d), counts(X))
    assert np.abs(mech.query(d2) - mech.query(d)).sum() == 6.0
    assert 6.0 / 2.0 == 3.0 * spec.claim.epsilon  # true epsilon of Laplace(2) at L1 = 6


def test_rounded_laplace_count_keeps_every_integer_ratio_within_e():
    """round(L), L ~ Laplace(1): P(k) = F(k + 1/2) - F(k - 1/2) (upper tail by the survival
    function, without cancellation); every ratio P(k)/P(k - 1) of
    neighbouring counts is at most e (post-processing keeps the Laplace mechanism's ε = 1),
    and the releases are the count plus integers."""
    k = np.arange(-30, 31)
    lap = stats.laplace
    p = np.where(k <= 0, lap.cdf(k + 0.5) - lap.cdf(k - 0.5),  # each tail from its own side
                 lap.sf(k - 0.5) - lap.sf(k + 0.5))
    ratio = np.log(p[1:] / p[:-1])
    assert np.max(np.abs(ratio)) <= 1.0 + 1e-12
    assert np.max(np.abs(ratio)) == pytest.approx(1.0)  # tight: the control sits at its claim
    data = default_dataset()
    out = build_form(_spec("control-rounded-laplace-count"), "sample").sample(
        data, 500, np.random.default_rng(3))
    count = float(np.sum(np.asarray(data.y) > 0))
    assert np.all(out == np.round(out)) and np.all(np.abs(out - count) < 40)


@pytest.mark.parametrize("name", CALIBRATION_SLIPS)
def test_calibration_slips_on_the_default_path(name):
    assert not _default_path_misses(name)


# ------------------------------------------------------------------ the second hunt
HUNT = ("gp-sup-norm-as-l2", "gp-mean-and-fit-at-full-eps", "gp-noise-shaped-by-posterior-sd",
        "gp-mean-with-log-marginal-likelihood", "laplace-loc-for-scale", "small-cell-suppression",
        "variance-with-half-range", "trimmed-mean-with-mean-sensitivity",
        "exp-mech-abs-error-sensitivity", "control-suppress-noisy-cells",
        "control-median-of-local-noise")


def _naive_weights_at(x: np.ndarray, xs: np.ndarray, ell: float = 2.0,
                      noise: float = 0.1) -> np.ndarray:
    """K(x*, X) (K(X, X) + s² I)⁻¹ at the test points ``xs``, by a dense solve."""
    k = lambda a, b: np.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / ell**2)  # noqa: E731
    return np.linalg.solve(k(x, x) + noise * np.eye(x.size), k(x, xs)).T


def _sds(mech, data) -> np.ndarray:
    return np.sqrt(np.diag(mech.cov(data)))


def test_sup_norm_calibration_fits_the_largest_weight_not_the_column():
    """At 30 test points each target's weight spreads over several outputs: sigma is the
    analytic one for max |C_ji| (its epsilon is exactly the claim), while the L2 change of one
    target is the column norm, which gives 1.42."""
    spec, data = _spec("gp-sup-norm-as-l2"), default_dataset()
    x = np.asarray(data.X)[:, 0]
    C = _naive_weights_at(x, np.linspace(0.0, 10.0, 30))
    mech = build_form(spec, "model")
    np.testing.assert_allclose(mech.mean(data), C @ data.y, rtol=1e-10, atol=1e-12)
    sigma = _sds(mech, data)[0]
    assert _gaussian_epsilon(float(np.max(np.abs(C))) / sigma, 1e-5) == pytest.approx(1.0,
                                                                                      abs=1e-6)
    true = _gaussian_epsilon(float(np.max(np.linalg.norm(C, axis=0))) / sigma, 1e-5)
    assert true == pytest.approx(1.416, abs=2e-3)


def test_mean_and_fit_are_each_calibrated_alone_and_compose_beyond_the_claim():
    """Each part's sigma gives exactly the claim for that part alone; one target moves both
    parts, mu^2 = sum_j (C_ji / s_j)^2 over the 25 outputs, up to sqrt(2) times the claim's."""
    spec, data = _spec("gp-mean-and-fit-at-full-eps"), default_dataset()
    x = np.asarray(data.X)[:, 0]
    A, B = _naive_weights_at(x, np.linspace(0.0, 10.0, 5)), _naive_weights_at(x, x)
    mech = build_form(spec, "model")
    s = _sds(mech, data)
    np.testing.assert_allclose(mech.mean(data), np.r_[A @ data.y, B @ data.y], rtol=1e-10,
                               atol=1e-12)
    for part, sd in ((A, s[:5]), (B, s[5:])):
        mu = float(np.max(np.linalg.norm(part / sd[:, None], axis=0)))
        assert _gaussian_epsilon(mu, 1e-5) == pytest.approx(1.0, abs=1e-6)
    mu_claim = float(np.max(np.linalg.norm(A, axis=0))) / s[0]
    mu = float(np.max(np.linalg.norm(np.vstack([A, B]) / s[:, None], axis=0)))
    assert mu <= math.sqrt(2.0) * mu_claim * (1 + 1e-12)  # two parts, each at the claim
    assert _gaussian_epsilon(mu, 1e-5) == pytest.approx(1.465, abs=2e-3)


def test_noise_shaped_by_the_posterior_sd_keeps_its_total_and_loses_where_weights_are_large():
    spec, data = _spec("gp-noise-shaped-by-posterior-sd"), default_dataset()
    x, xs = np.asarray(data.X)[:, 0], np.linspace(-5.0, 15.0, 10)
    C = _naive_weights_at(x, xs)
    k = np.exp(-0.5 * (xs[:, None] - x[None, :]) ** 2 / 4.0)
    sd = np.sqrt(1.0 - np.sum(C * k, axis=1))
    mech = build_form(spec, "model")
    s = _sds(mech, data)
    np.testing.assert_allclose(s / s.max(), sd / sd.max(), rtol=1e-9)  # in proportion
    sigma = s[0] / sd[0] * math.sqrt(np.mean(sd**2))  # the calibrated sd they were spread from
    # the mean square is the calibrated one: for the same noise everywhere, exactly the claim
    assert _gaussian_epsilon(float(np.max(np.linalg.norm(C, axis=0))) / sigma,
                             1e-5) == pytest.approx(1.0, abs=1e-6)
    true = _gaussian_epsilon(float(np.max(np.linalg.norm(C / s[:, None], axis=0))), 1e-5)
    assert true == pytest.approx(1.438, abs=2e-3)


def test_log_marginal_likelihood_is_a_noise_free_output_that_moves():
    spec, data = _spec("gp-mean-with-log-marginal-likelihood"), default_dataset()
    x = np.asarray(data.X)[:, 0]
    K = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / 4.0) + 0.1 * np.eye(x.size)

    def lml(y):  # log N(y; 0, K) by slogdet and a dense solve
        return float(-0.5 * y @ np.linalg.solve(K, y) - 0.5 * np.linalg.slogdet(K)[1]
                     - 0.5 * y.size * math.log(2 * math.pi))
    moved = data.with_target(0, float(data.y[0]) + 1.0)
    mech = build_form(spec, "sample")
    a = mech.sample(data, 50, np.random.default_rng(1))[:, -1]
    b = mech.sample(moved, 50, np.random.default_rng(2))[:, -1]
    np.testing.assert_allclose(a, lml(np.asarray(data.y)), rtol=1e-10)
    np.testing.assert_allclose(b, lml(np.asarray(moved.y)), rtol=1e-10)
    assert a[0] != b[0]  # two point masses apart: epsilon is infinite


def test_laplace_loc_for_scale_draws_laplace_one_shifted_by_the_intended_scale():
    spec, data = _spec("laplace-loc-for-scale"), default_dataset()
    noise = build_form(spec, "sample").sample(data, 4000, np.random.default_rng(3)).ravel() \
        - float(np.sum(data.y))
    assert stats.kstest(noise, stats.laplace(loc=2.0, scale=1.0).cdf).pvalue > 1e-3
    assert stats.kstest(noise, stats.laplace(loc=0.0, scale=2.0).cdf).pvalue < 1e-10
    # the sum moves by 1 (outputs only): Laplace(1) gives epsilon 1, twice the claimed 0.5
    assert 1.0 / 1.0 == 2 * spec.claim.epsilon


def test_small_cell_suppression_releases_an_atom_on_one_side_only():
    """The default targets fill the 5 cells 3, 3, 4, 4, 6: a row moved from the full cell
    into a cell of 4 makes it 5, which is published (noisy) where D publishes exactly 0."""
    spec, data = _spec("small-cell-suppression"), default_dataset()
    y = np.asarray(data.y)
    edges = np.linspace(-1.0, 1.0, 6)
    counts = np.histogram(y, bins=edges)[0]
    assert list(counts) == [3, 3, 4, 4, 6]
    donor = int(np.flatnonzero(y >= edges[4])[0])  # a row of the cell of 6
    moved = data.with_row(donor, data.X[donor], 0.4)  # into [0.2, 0.6), the second cell of 4
    assert list(np.histogram(moved.y, bins=edges)[0]) == [3, 3, 4, 5, 5]
    mech = build_form(spec, "sample")
    a = mech.sample(data, 200, np.random.default_rng(1))[:, 3]
    b = mech.sample(moved, 200, np.random.default_rng(1))[:, 3]
    assert np.all(a == 0.0)  # suppressed on D ...
    # ... noisy on D': Laplace(2) noise hits exactly -5 on the release grid almost never
    assert np.count_nonzero(b) == 200


def test_variance_moves_by_four_n_minus_one_over_n_squared():
    """All targets at -1 but one moved to +1: var goes from 0 to 4(n-1)/n^2, 4(n-1)/n = 3.8
    times the stated b^2/n, so Laplace(b^2/(n eps)) gives epsilon 3.8."""
    spec, data = _spec("variance-with-half-range"), default_dataset()
    n = data.n
    y = np.full(n, -1.0)
    y2 = y.copy()
    y2[0] = 1.0
    mech = build_form(spec, "model")
    change = float(mech.query(Dataset(data.X, y2))[0] - mech.query(Dataset(data.X, y))[0])
    assert change == pytest.approx(4 * (n - 1) / n**2, rel=1e-12)
    assert change / mech.sensitivity_bound() == pytest.approx(3.8, rel=1e-12)


def test_trimmed_mean_moves_by_two_over_the_rows_it_keeps():
    """Ten targets at -1 and ten at +1; the middle half is five of each (mean 0). One -1 moved
    to +1 leaves four and six: 0.2 = 2/m with m = 10, twice the stated 2/n."""
    spec, data = _spec("trimmed-mean-with-mean-sensitivity"), default_dataset()
    y = np.repeat([-1.0, 1.0], 10)
    y2 = y.copy()
    y2[0] = 1.0
    mech = build_form(spec, "model")
    change = float(mech.query(Dataset(data.X, y2))[0] - mech.query(Dataset(data.X, y))[0])
    assert change == pytest.approx(0.2, rel=1e-12)
    assert change / mech.sensitivity_bound() == pytest.approx(2.0, rel=1e-12)


@pytest.mark.parametrize("name", HUNT)
def test_hunt_mutants_on_the_default_path(name):
    assert not _default_path_misses(name)


def test_exp_mech_on_the_absolute_error_moves_every_utility_by_two():
    """One target moved from +1 to -1 at x = 1 changes |y - theta x| by 2 for theta = +-1 in
    opposite directions: the selection probabilities exp(eps u / 2) / Z then move by a log
    ratio near 2 eps = 2 on a base that fits theta = 1 exactly (the claim is 1)."""
    spec = _spec("exp-mech-abs-error-sensitivity")
    x = np.linspace(-1.0, 1.0, 30)
    slopes = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])

    def logp(y):  # the exponential mechanism at Delta = 1, by a log-sum-exp
        u = -np.abs(y[None, :] - slopes[:, None] * x[None, :]).sum(axis=1) / 2.0
        return u - (u.max() + np.log(np.exp(u - u.max()).sum()))
    y = x.copy()  # every target on the line theta = 1, inside |y| <= 1
    y2 = y.copy()
    y2[-1] = -1.0  # moved by 2: a neighbour under outputs_only(2)
    loss = float(np.max(np.abs(logp(y) - logp(y2))))
    assert 1.9 < loss <= 2.0 + 1e-12
    mech = build_form(spec, "model")
    change = np.abs(mech.query(Dataset(x, y2)) - mech.query(Dataset(x, y)))
    assert change.max() == pytest.approx(2.0) and mech.sensitivity_bound() == 1.0
    draws = build_form(spec, "sample").sample(Dataset(x, y), 4000, np.random.default_rng(0))
    freq = np.array([np.mean(draws == s) for s in slopes])
    np.testing.assert_allclose(freq, np.exp(logp(y)), atol=4 * math.sqrt(0.25 / 4000))


# ------------------------------------------------------------------ the third hunt
LABELS = ("label-count-suppression", "control-label-count-noisy-suppression")


@pytest.mark.parametrize("name", LABELS)
def test_label_mutants_on_the_default_path(name):
    assert not _default_path_misses(name)


def test_label_count_suppression_is_a_point_mass_on_one_side_only():
    """Four positives: 0 on every release; five: 0 only when the geometric noise is -5,
    P = (1 - a) a^5 / (1 + a) with a = e^-1 (the two-sided geometric law), so the event
    "not 0" separates them (true eps = inf); the user's data hold 17 positives. The
    noisy-count twin is a post-processing of the geometric mechanism."""
    spec, twin = _spec("label-count-suppression"), _spec("control-label-count-noisy-suppression")
    data = spec.data
    assert np.sum(data.y) == 17 and set(np.unique(data.y)) == {0.0, 1.0}
    four = Dataset(data.X, (np.arange(data.n) < 4).astype(float))
    five = four.with_target(4, 1.0)
    mech = build_form(spec, "sample")
    a = mech.sample(four, 4000, np.random.default_rng(1))
    b = mech.sample(five, 4000, np.random.default_rng(1))
    assert np.all(a == 0.0)
    alpha = math.exp(-1.0)
    p_zero = (1 - alpha) * alpha**5 / (1 + alpha)
    assert np.mean(b == 0.0) < p_zero + 5 * math.sqrt(p_zero / 4000)
    assert np.all(b[b != 0.0] == np.round(b[b != 0.0]))  # integer releases
    # the geometric noise's law: P(k) = (1 - a)/(1 + a) a^|k| (two-sided, exactly)
    noise = build_form(twin, "sample").sample(
        Dataset(data.X, np.ones(data.n)), 20_000, np.random.default_rng(2)) - data.n
    for k in (0, 1, -1, 2):
        p = (1 - alpha) / (1 + alpha) * alpha ** abs(k)
        assert abs(np.mean(noise == k) - p) < 5 * math.sqrt(p * (1 - p) / 20_000)


POSTPROCESSING = ("mean-with-exact-count", "randomised-response-twice")


@pytest.mark.parametrize("name", POSTPROCESSING)
def test_postprocessing_mutants_on_the_default_path(name):
    assert not _default_path_misses(name)


def test_the_exact_count_beside_the_mean_moves_deterministically():
    """One target crossing 0.5 changes the second output for sure (true ε = ∞)."""
    spec = _spec("mean-with-exact-count")
    data = spec.data
    i = int(np.argmin(np.abs(data.y - 0.3)))
    assert data.y[i] <= 0.5
    crossed = data.with_target(i, 0.9)
    mech = build_form(spec, "sample")
    a = mech.sample(data, 500, np.random.default_rng(1))[:, 1]
    b = mech.sample(crossed, 500, np.random.default_rng(1))[:, 1]
    assert np.all(a == np.sum(data.y > 0.5)) and np.all(b == a[0] + 1)


def test_randomised_response_twice_doubles_epsilon_at_its_extreme_count():
    """The count of ones among 2N answers, each an ε-RR answer: a row's two answers are
    Bin(2, 1 - q) for a 1 and Bin(2, q) for a 0 (q = 1/(1 + e^ε)), independent of the
    others, so the count's law is a convolution and its largest probability ratio between
    a 0 and a 1 in one row is ((1 - q)/q)² = e^{2ε} (at the count 2N, or 0); computed here
    by convolving the exact binomial laws (scipy), and checked against the sampler."""
    spec = _spec("randomised-response-twice")
    q = 1.0 / (1.0 + math.e)
    y = np.array([1.0, 0.0, 1.0])  # a small dataset, as the tiny-dataset pairs are

    def law(labels: np.ndarray) -> np.ndarray:
        out = np.array([1.0])
        for v in labels:
            out = np.convolve(out, stats.binom.pmf(np.arange(3), 2, 1 - q if v else q))
        return out
    p, p1 = law(y), law(np.r_[y[:1], 1.0, y[2:]])  # row 1: 0 -> 1
    assert np.max(np.abs(np.log(p1 / p))) == pytest.approx(2.0, rel=1e-12)
    data = Dataset(np.linspace(0, 1, 3)[:, None], y)
    draws = build_form(spec, "sample").sample(data, 40_000, np.random.default_rng(3))[:, 0]
    for k in range(7):
        assert abs(np.mean(draws == k) - p[k]) < 5 * math.sqrt(p[k] * (1 - p[k]) / 40_000)


# ------------------------------------------------------------------ the fifth hunt
FLOAT_AND_STEP = ("signed-zero-floor", "signed-zero-weight", "grid-from-the-data-scale",
                  "ptr-mode-margin-not-noised", "control-floor-literal-zero",
                  "control-public-grid-snap", "control-ptr-mode-noised-margin")


@pytest.mark.parametrize("name", FLOAT_AND_STEP)
def test_float_and_step_mutants_on_the_default_path(name):
    assert not _default_path_misses(name)


def _zeros_and(value: float) -> tuple[Dataset, Dataset]:
    data = default_dataset()
    zeros = Dataset(data.X, np.zeros(data.n))
    return zeros, zeros.with_target(0, value)


def test_a_zero_written_as_zero_times_the_mean_carries_its_sign():
    """IEEE 754: 0.0·m = -0.0 for m < 0. Floored at 0, the noisy mean releases -0.0 with
    the probability that the noisy mean is ≤ 0 when the mean is negative, Φ(0.05/σ) for
    the mean -1/20 (σ for the mean's sensitivity 2/20), and never when the mean is 0; the
    literal-zero twin never releases -0.0."""
    zeros, neg = _zeros_and(-1.0)
    mech = build_form(_spec("signed-zero-floor"), "sample")
    a = mech.sample(zeros, 20_000, np.random.default_rng(1))[:, 0]
    b = mech.sample(neg, 20_000, np.random.default_rng(2))[:, 0]
    assert not np.any((a == 0) & np.signbit(a))
    sd = analytic_gaussian_sigma(1.0, 1e-5, 2.0 / zeros.n)
    p = stats.norm.cdf(0.05 / sd)
    share = np.mean((b == 0) & np.signbit(b))
    assert abs(share - p) < 5 * math.sqrt(p * (1 - p) / 20_000)
    twin = build_form(_spec("control-floor-literal-zero"), "sample")
    c = twin.sample(neg, 20_000, np.random.default_rng(2))[:, 0]
    assert np.mean(c == 0) == pytest.approx(p, abs=5 * math.sqrt(p * (1 - p) / 20_000))
    assert not np.any(np.signbit(c[c == 0]))


def test_a_zero_weight_on_the_mean_and_its_noise_leaks_the_sign_of_the_mean():
    """0.0·m + 0.0·σz is -0.0 exactly when m < 0 and z < 0: probability ½ on a dataset of
    negative mean, 0 on one of mean 0."""
    zeros, neg = _zeros_and(-1.0)
    mech = build_form(_spec("signed-zero-weight"), "sample")
    a = mech.sample(zeros, 20_000, np.random.default_rng(1))[:, 1]
    b = mech.sample(neg, 20_000, np.random.default_rng(2))[:, 1]
    assert np.all(a == 0) and np.all(b == 0)
    assert not np.any(np.signbit(a))
    assert abs(np.mean(np.signbit(b)) - 0.5) < 5 * math.sqrt(0.25 / 20_000)


def test_a_grid_from_the_targets_scale_puts_half_of_one_side_off_the_others_grid():
    """All targets 0 (max |y| below 1/16): grid 2⁻²⁰; one target at 1: grid 2⁻¹⁶. Read by
    integer arithmetic, about half of the first side's outputs are odd multiples of 2⁻²⁰,
    and every output of the second is a multiple of 2⁻¹⁶ (true ε = ∞); the public-grid
    twin keeps 2⁻¹⁶ on both."""
    zeros, one = _zeros_and(1.0)
    mech = build_form(_spec("grid-from-the-data-scale"), "sample")
    a = mech.sample(zeros, 20_000, np.random.default_rng(1))[:, 0]
    b = mech.sample(one, 20_000, np.random.default_rng(2))[:, 0]
    k = np.ldexp(a, 20)
    assert np.all(k == np.round(k))
    assert abs(np.mean(k % 2 == 1) - 0.5) < 5 * math.sqrt(0.25 / 20_000)
    assert np.all(np.ldexp(b, 16) == np.round(np.ldexp(b, 16)))
    twin = build_form(_spec("control-public-grid-snap"), "sample")
    for d in (zeros, one):
        c = twin.sample(d, 5_000, np.random.default_rng(3))[:, 0]
        assert np.all(np.ldexp(c, 16) == np.round(np.ldexp(c, 16)))


def test_ptr_mode_without_noise_on_its_margin_is_a_step_and_with_it_within_e():
    """Counts 38, 8, 6, 5, 3: margin 30. Three rows moved from the mode to the runner-up
    give a margin of 24, above T = 2 + 2 ln(1/(2·10⁻⁵)) ≈ 23.64, so the mode is released on
    every draw; a fourth gives 22, and -1 on every draw (ε = ∞). With the margin noised by
    Lap(2), P(release) = ½ e^{-(T - g)/2} below T, and two rows apart (margins 20 and 22)
    the ratio is e^1, the claim."""
    spec = _spec("ptr-mode-margin-not-noised")
    data = spec.data
    assert [int(np.sum(data.y == v)) for v in (0, 1, 2, 3, 4)] == [38, 8, 6, 5, 3]
    T = 2.0 + 2.0 * math.log(1.0 / 2e-5)
    zeros = np.flatnonzero(data.y == 0.0)

    def moved(k: int) -> Dataset:
        y = data.y.copy()
        y[zeros[:k]] = 1.0
        return Dataset(data.X, y)
    mech = build_form(spec, "sample")
    assert 38 - 3 - (8 + 3) > T > 38 - 4 - (8 + 4)
    assert np.all(mech.sample(moved(3), 500, np.random.default_rng(1)) == 0.0)
    assert np.all(mech.sample(moved(4), 500, np.random.default_rng(1)) == -1.0)
    twin = build_form(_spec("control-ptr-mode-noised-margin"), "sample")
    m = 400_000
    for k, g in ((5, 20.0), (4, 22.0)):
        p = 0.5 * math.exp(-(T - g) / 2.0)
        got = np.mean(twin.sample(moved(k), m, np.random.default_rng(k)) == 0.0)
        assert abs(got - p) < 5 * math.sqrt(p / m)
    assert 0.5 * math.exp(-(T - 22.0) / 2) / (0.5 * math.exp(-(T - 20.0) / 2)) == \
        pytest.approx(math.e)


# ------------------------------------------------------------------ the sixth hunt
INPUT_CORNERS = ("contrast-l2-bound-in-a-box", "sketch-keeps-norms", "cross-moment-add-remove",
                 "control-contrast-box-sensitivity")


@pytest.mark.parametrize("name", INPUT_CORNERS)
def test_input_corner_mutants_on_the_default_path(name):
    assert not _default_path_misses(name)


def _corners(dim: int) -> np.ndarray:
    return np.array(list(itertools.product((1.0, -1.0), repeat=dim)))


def _largest_move(f, dim: int) -> float:
    """max over pairs of corners of [-1, 1]^dim of ||f(a) - f(b)||_2: a row's largest move
    of a release linear or bilinear in its inputs (each is extreme at corners)."""
    c = _corners(dim)
    vals = np.array([np.atleast_1d(f(x)) for x in c])
    return float(max(np.linalg.norm(vals[i] - vals[j]) for i in range(len(c))
                     for j in range(len(c))))


@pytest.mark.parametrize(("name", "f", "dim", "noised_for", "true_eps"), [
    ("contrast-l2-bound-in-a-box", lambda x: (x[0] - x[1]) / math.sqrt(2.0), 2, 2.0, None),
    ("sketch-keeps-norms", None, 8, 2.0 * math.sqrt(8.0), None),
    ("cross-moment-add-remove", lambda x: x[0] * x[1], 2, 1.0, 2.155),
    ("control-contrast-box-sensitivity", lambda x: (x[0] - x[1]) / math.sqrt(2.0), 2,
     2.0 * math.sqrt(2.0), 1.0),
])
def test_input_corner_mutants_move_by_their_corner_swing_beyond_their_noise(
        name, f, dim, noised_for, true_eps):
    """The largest move of one row, over every pair of corners of the declared box, against
    the sensitivity the noise was calibrated for; ε by Balle & Wang's exact curve."""
    from dpgp_audit.bugs.mutants import SKETCH

    spec = _spec(name)
    if f is None:
        f = lambda x: SKETCH @ x  # noqa: E731
    swing = _largest_move(f, dim)
    sigma = analytic_gaussian_sigma(1.0, 1e-5, noised_for)
    eps = _gaussian_epsilon(swing / sigma, 1e-5)
    if spec.private:
        assert swing == pytest.approx(noised_for) and eps == pytest.approx(1.0, abs=1e-6)
    else:
        assert swing >= 1.7 * noised_for if dim == 8 else swing >= 1.4 * noised_for
        assert eps > 1.4
        if true_eps is not None:
            assert eps == pytest.approx(true_eps, abs=1e-3)
    # the release is the query plus noise of that σ, on a dataset of the declared box
    data = spec.data
    assert np.abs(data.X).max() <= 1.0 and data.X.shape[1] == dim
    draws = build_form(spec, "sample").sample(data, 20_000, np.random.default_rng(4))
    query = np.sum([np.atleast_1d(f(x)) for x in data.X], axis=0)
    assert np.allclose(draws.mean(axis=0), query, atol=5 * sigma / math.sqrt(20_000))
    assert np.allclose(draws.std(axis=0), sigma, rtol=5 / math.sqrt(2 * 20_000))


def test_cross_moment_data_have_features_of_one_sign_on_every_row():
    """Positively correlated features: no row sits in a mixed-sign quadrant, so no row of
    the data is where the cross moment moves most from the diagonal's corners."""
    X = _spec("cross-moment-add-remove").data.X
    assert np.all(X[:, 0] * X[:, 1] >= 0)


ORDER_STATISTICS = ("winsorised-at-own-percentiles", "control-winsorised-whole-width")


@pytest.mark.parametrize("name", ORDER_STATISTICS)
def test_order_statistic_mutants_on_the_default_path(name):
    assert not _default_path_misses(name)


def test_the_winsorised_mean_moves_k_plus_one_times_the_plain_means_change():
    """Closed form: 3 targets at -1 and 37 at +1, one of the three moved to +1. The 2nd
    order statistic (the clip point) goes from -1 to +1 and takes the two rows left at -1
    with it, so the mean moves by 6/40 where the plain mean moves by 2/40. Against noise
    for 2/n, mu is 3 times the claim's (Balle & Wang's exact curve); the control's noise is
    for 2, the width of [-1, 1], which no mean of values in it can exceed."""
    from dpgp_audit.bugs.mutants import WINSOR_K, winsorised_mean

    n = 40
    y = np.ones(n)
    y[:WINSOR_K + 1] = -1.0
    d0 = Dataset(np.linspace(0, 1, n), y)
    d1 = d0.with_target(0, 1.0)
    moved = abs(float(winsorised_mean(d1)[0] - winsorised_mean(d0)[0]))
    assert moved == pytest.approx((2 * WINSOR_K + 2) / n, rel=1e-12)
    assert moved == pytest.approx(3 * 2.0 / n, rel=1e-12)
    mu_claim = 2.0 / n / analytic_gaussian_sigma(1.0, 1e-5, 2.0 / n)
    assert _gaussian_epsilon(3 * mu_claim, 1e-5) > 3.0  # far beyond the claimed 1
    spec = _spec("control-winsorised-whole-width")
    rng = np.random.default_rng(0)
    for _ in range(200):  # the statistic stays in [-1, 1], so no move exceeds 2
        d = Dataset(np.linspace(0, 1, n), rng.choice([-1.0, 1.0, 0.3], n))
        assert -1.0 <= float(spec.model["query"](d)[0]) <= 1.0
    assert spec.model["bound"] == 2.0 and not _spec(ORDER_STATISTICS[0]).private
