"""Drivers that locate the papers' numbers (issue 12): S18 fn. 2 multiplier and !Kung RMSE
readings, S21 Table 1 setting sweeps and stripes draws, H Fig. 3 rates."""

from __future__ import annotations

import numpy as np
import pytest

from dpgp_audit.dataset import Dataset
from dpgp_audit.experiments import honkela as hx
from dpgp_audit.experiments import s18 as s18x
from dpgp_audit.experiments import s21 as s21x
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.methods.s18.standard import StandardDPGP


def _growth(n: int, seed: int) -> Dataset:
    rng = np.random.default_rng(seed)
    age = np.sort(rng.uniform(0, 85, n))
    height = 150 - 90 * np.exp(-age / 6) + 6 * rng.standard_normal(n)
    return Dataset(age[:, None], np.clip(height, 90, 190))


def _b_bound_from_the_paper(Kinv: np.ndarray) -> float:
    # S18 §2: the larger infinity norm of K^-1 with negatives dropped, and of -K^-1 likewise
    return max(np.abs(np.clip(Kinv, 0, None)).sum(axis=0).max(),
               np.abs(np.clip(-Kinv, 0, None)).sum(axis=0).max())


@pytest.mark.filterwarnings("ignore:hall calibration used at epsilon=50")
def test_footnote2_multiplier_matches_s18_eqs_1_2_from_scratch():
    data = _growth(60, 1)
    age, sd = data.X[:, 0], 25.0
    got = s18x.footnote2_multiplier(age, sd, noise_sd=14.0)
    X = age[:, None] / 25.0
    K = (7.72 / sd) ** 2 * np.exp(-0.5 * (X - X.T) ** 2) + (14.0 / sd) ** 2 * np.eye(age.size)
    expected = np.sqrt(2 * np.log(2 / 0.01)) * (100.0 / sd) * _b_bound_from_the_paper(
        np.linalg.inv(K)) / 50.0 * sd
    assert got == pytest.approx(expected, rel=1e-8)
    # and it is the scale of the kit's own S18.1 mechanism in the same units
    mech = StandardDPGP(EQ(25.0, (7.72 / sd) ** 2), (14.0 / sd) ** 2, age, age[:3], 100.0 / sd,
                        50.0, 0.01, sensitivity="paper-b", method="hall", allow_unproven=True)
    assert got == pytest.approx(mech.scale * sd, rel=1e-8)


def test_noise_sd_for_multiplier_round_trip_and_monotone():
    age = _growth(60, 2).X[:, 0]
    m = [s18x.footnote2_multiplier(age, 25.0, noise_sd=s) for s in (10.0, 14.0, 20.0)]
    assert m[0] > m[1] > m[2]
    s = s18x.noise_sd_for_multiplier(m[1] * 1.05, age, 25.0)
    assert s18x.footnote2_multiplier(age, 25.0, noise_sd=s) == pytest.approx(m[1] * 1.05)
    assert s < 14.0
    with pytest.raises(ValueError, match="target"):
        s18x.noise_sd_for_multiplier(1e9, age, 25.0)
    with pytest.raises(ValueError, match="noise_sd"):
        s18x.footnote2_multiplier(age, 25.0, noise_sd=0.0)


def test_s18_fn2_multiplier_is_the_printed_noise_rounded():
    """S18 fn. 2: 'hyperparameters ... appear precise' — 28.53 needs a noise sd that prints
    as 14 cm to two significant figures (the paper's value is the closed form's root)."""
    from dpgp_audit.datasets.kung import DataUnavailableError, load_kung

    try:
        k = load_kung(females_only=True)
    except DataUnavailableError as err:
        pytest.skip(f"!Kung data unavailable: {err}")
    s = s18x.noise_sd_for_multiplier(28.53, k.age, float(np.std(k.height)))
    assert 13.5 <= s < 14.5


def test_kung_rmse_choices_are_paired_and_in_sample_matches_sklearn():
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    data = _growth(50, 3)
    a, b = s18x.KungChoice("a"), s18x.KungChoice("b")
    ins = s18x.KungChoice("in", noise_sd=8.0, in_sample=True)
    res = s18x.kung_rmse_choices(data, [a, b, ins], d=100.0, epsilon=1.0, delta=0.01,
                                 n_repeats=3, test_fraction=0.2,
                                 rng=np.random.default_rng(0))
    np.testing.assert_array_equal(res["a"].per_repeat_dp, res["b"].per_repeat_dp)
    gp = GaussianProcessRegressor(ConstantKernel(7.72**2, "fixed") * RBF(25.0, "fixed"),
                                  alpha=8.0**2, optimizer=None)
    gp.fit(data.X, data.y - s18x.KUNG_CENTRE_CM)
    pred = gp.predict(data.X) + s18x.KUNG_CENTRE_CM
    expected = np.sqrt(np.mean((pred - data.y) ** 2))
    np.testing.assert_allclose(res["in"].per_repeat_no_dp, expected, rtol=1e-6)


def test_noise_sd_for_rmse_round_trip():
    data = _growth(50, 4)
    seed = int(np.random.default_rng(1).integers(2**63))  # what the function derives
    at9 = s18x.cloaking_rmse(data, EQ(25.0, 7.72**2), 9.0**2, d=100.0, epsilon=1.0,
                             delta=0.01, n_repeats=3, test_fraction=0.2,
                             rng=np.random.default_rng(seed), centre=s18x.KUNG_CENTRE_CM,
                             with_dp=False)
    assert np.all(np.isnan(at9.per_repeat_dp))
    s = s18x.noise_sd_for_rmse(at9.no_dp[0], data, n_repeats=3, test_fraction=0.2,
                               rng=np.random.default_rng(1), bracket=(5.0, 14.0))
    assert s == pytest.approx(9.0, abs=0.01)


def test_standard_vs_cloaking_expected_rmse_agrees_with_monte_carlo():
    data = _growth(40, 5)
    out = s18x.standard_vs_cloaking_rmse(data, lengthscale=25.0, kernel_sd=7.72, noise_sd=14.0,
                                         d=100.0, epsilon=1.0, delta=0.01, n_repeats=1,
                                         test_fraction=0.25, rng=np.random.default_rng(3),
                                         sensitivity="rkhs")
    # the same split again, now by sampling the cloaking release: mean squared error over
    # 4000 draws; its standard error bounds the tolerance (6 sigma)
    rng = np.random.default_rng(3)
    perm = rng.permutation(data.n)
    test, train = perm[:10], perm[10:]
    from dpgp_audit.gp.regression import ExactGP
    from dpgp_audit.methods.s18.cloaking import CloakingMechanism

    tr = Dataset(data.X[train], data.y[train] - s18x.KUNG_CENTRE_CM)
    C = ExactGP(EQ(25.0, 7.72**2), 14.0**2).fit(tr.X, tr.y).mean_weights(data.X[test])
    draws = CloakingMechanism(C, 100.0, 1.0, 0.01, method="hall").sample(
        tr, 4000, np.random.default_rng(7)) + s18x.KUNG_CENTRE_CM
    se2 = np.mean((draws - data.y[test]) ** 2, axis=1)
    assert out["cloaking"][0] ** 2 == pytest.approx(se2.mean(),
                                                    abs=6 * se2.std() / np.sqrt(se2.size))
    assert out["standard"].shape == (1,)


def test_table1_setting_sweep_same_folds_and_interval():
    data = _growth(40, 6)
    setup = s21x.KungSetup()
    out = s21x.table1_setting_sweep(data, "standard", {"x": setup, "y": setup}, 4,
                                    np.random.default_rng(0))
    assert out["x"] == out["y"]
    r = out["x"]["no_dp"]
    assert r["ci"] == pytest.approx(1.96 * r["sd"] * np.sqrt(4 / 3) / 2)
    assert set(s21x.NONSTATIONARY_PAPERLIKE) == {"1d", "2d"}


def test_stripes_draws_shapes():
    st = s21x.stripes_draws(2, 40, np.random.default_rng(0), epsilon=1.0, delta=0.01, n_rep=2)
    for key in ("no_dp", "one_step", "two_steps"):
        assert st[key].shape == (2,) and np.all((st[key] >= 0) & (st[key] <= 1))
    with pytest.raises(ValueError, match="n_draws"):
        s21x.stripes_draws(0, 40, np.random.default_rng(0), epsilon=1.0, delta=0.01, n_rep=2)


def test_true_choice_rates():
    counts = np.zeros((2, 3, 3), dtype=int)
    counts[0, 1, 1], counts[0, 0, 2] = 2, 5
    counts[1, 1, 1], counts[1, 2, 0] = 9, 1
    k, n = hx.true_choice_rates(counts)
    np.testing.assert_array_equal(k, [2, 9])
    np.testing.assert_array_equal(n, [7, 10])
    with pytest.raises(ValueError, match="counts"):
        hx.true_choice_rates(np.zeros((3, 3)))


def test_in_sample_floor_matches_sklearn():
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    data = _growth(40, 7)
    out = s21x.in_sample_floor(data, [(625.0, 25.0, 1.0), (25.0, 5.0, 125.0)], y_offset=135.0)
    for (ls, nv, kv), got in out.items():
        gp = GaussianProcessRegressor(ConstantKernel(kv, "fixed") * RBF(ls, "fixed"), alpha=nv,
                                      optimizer=None).fit(data.X, data.y - 135.0)
        pred = gp.predict(data.X) + 135.0
        assert got == pytest.approx(np.sqrt(np.mean((pred - data.y) ** 2)), rel=1e-6)


# ---- the papers' qualitative claims, at the notebooks' default settings ----------------
# (notebooks 01 and 02 print a verdict for these; the checks live here so that a student who
# lowers a parameter never stops Run All)


def _kung_women():
    from dpgp_audit.datasets.kung import load_kung_or_standin

    kung, _ = load_kung_or_standin(np.random.default_rng(0), females_only=True)
    return Dataset(kung.age[:, None], np.clip(kung.height, s18x.KUNG_CENTRE_CM - 50,
                                              s18x.KUNG_CENTRE_CM + 50))


def test_s18_claim_cloaking_needs_less_noise_than_the_standard_dp_gp():
    """S18 §3: on 8 paired splits at (1, 0.01) cloaking's expected RMSE beats the standard
    mechanism's on every split (sign test p = 2^-8 < 0.01). Deterministic (fixed seed, exact
    expected RMSEs, no Monte Carlo); notebook 01 measures a margin of about 9x."""
    from dpgp_audit.experiments.reproduction import paired_sign_test

    pairs = s18x.standard_vs_cloaking_rmse(_kung_women(), lengthscale=25.0, kernel_sd=7.72,
                                           noise_sd=14.0, d=100.0, epsilon=1.0, delta=0.01,
                                           n_repeats=8, test_fraction=0.2,
                                           rng=np.random.default_rng(2018))
    assert paired_sign_test(pairs["cloaking"], pairs["standard"]) < 0.01


@pytest.mark.slow
def test_s21_claim_one_private_newton_step_beats_two():
    """S21 §6.5 on the stripes stand-in: over 12 training sets of 200 points (10 releases
    each) one private step has the higher mean accuracy in at least 11 (sign test p < 0.01).
    Over seeds one step wins a draw with probability about 0.99 (mean margin about 0.1), so
    this passes about 99 times in 100; the seed is fixed, so the outcome is deterministic."""
    from dpgp_audit.experiments.reproduction import paired_sign_test

    st = s21x.stripes_draws(12, 200, np.random.default_rng(0), epsilon=1.0, delta=0.01,
                            n_rep=10)
    assert paired_sign_test(-st["one_step"], -st["two_steps"]) < 0.01
