"""Experiment drivers for the S18 notebook (catalogue S18 "Experiments to reproduce").

Pure functions that call the S18 mechanisms and return numbers; the notebook only
calls them and plots with :mod:`dpgp_audit.viz.s18`. Every random step takes ``rng``.

Stand-ins (the papers' London prices and Citi Bike data are not shipped by any registry):
:func:`spatial_standin` draws clustered 2-D "property" locations with a smooth price
surface thresholded to [100, 500] (k£); :func:`journey_standin` draws 4-D journeys (start
and end in S18's Citi Bike box) with durations thresholded at 2000 s. All are labelled
synthetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import check_positive_float, check_positive_int, check_rng
from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.integral_kernel import IntegralEQ
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.gp.linalg import cho_solve_lower, psd_cholesky
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.methods.s18.binning import (
    LaplaceBinning,
    integral_binning_predict,
    make_edges,
    simple_binning_predict,
)
from dpgp_audit.methods.s18.cloaking import CloakingMechanism
from dpgp_audit.methods.s18.hyperparameter_selection import GPConfig, HyperparameterSelection
from dpgp_audit.methods.s18.standard import StandardDPGP, paper_sensitivity
from dpgp_audit.privacy.calibrate import hall_c

__all__ = [
    "CITI_BIKE_BOX",
    "KUNG_CENTRE_CM",
    "S18_FOOTNOTE2",
    "S18_PAPER",
    "KungChoice",
    "RMSEResult",
    "cloaking_rmse",
    "footnote2_multiplier",
    "kung_rmse_choices",
    "ml_noise_sd",
    "noise_sd_for_multiplier",
    "noise_sd_for_rmse",
    "standard_vs_cloaking_rmse",
    "journey_standin",
    "mean_ci",
    "selection_heatmap",
    "spatial_standin",
    "surface_standin_2d",
    "table1_best",
    "table1_comparison",
]

KUNG_CENTRE_CM = 140.0
"""A public centre for !Kung heights (not computed from the data): targets are clipped to
KUNG_CENTRE_CM ± 50 cm, so d = 100 cm as in S18 fn. 2."""


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and half-width of a normal 95% interval over repeats."""
    v = np.asarray(values, dtype=float)
    half = 1.96 * v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else float("nan")
    return float(v.mean()), float(half)


@dataclass(frozen=True)
class RMSEResult:
    """RMSE over repeats: no DP and DP, with 95% intervals."""

    no_dp: tuple[float, float]
    dp: tuple[float, float]
    per_repeat_no_dp: np.ndarray
    per_repeat_dp: np.ndarray


def cloaking_rmse(data: Dataset, kernel: EQ, noise_variance: float, *, d: float,
                  epsilon: float, delta: float, n_repeats: int, test_fraction: float,
                  rng: np.random.Generator, centre: float = 0.0,
                  method: str = "hall", in_sample: bool = False,
                  with_dp: bool = True) -> RMSEResult:
    """Held-out RMSE of the GP mean and of its (ε, δ) cloaking release over random splits.

    The split and the test inputs are public; targets are centred by the public ``centre``.
    ``in_sample=True`` scores the predictions at the training women themselves (all of
    them train and are test inputs; the repeats then differ only in the DP noise), one
    reading of S18 §3's unstated protocol. ``with_dp=False`` skips the release (its RMSE
    is then NaN).
    """
    rng = check_rng(rng)
    n = data.n
    n_test = max(1, int(round(test_fraction * n)))
    no_dp, dp = [], []
    for _ in range(n_repeats):
        perm = rng.permutation(n)
        test, train = (perm, perm) if in_sample else (perm[:n_test], perm[n_test:])
        fitted = ExactGP(kernel, noise_variance).fit(data.X[train], data.y[train] - centre)
        C = fitted.mean_weights(data.X[test])
        y_train = data.y[train] - centre
        mean = C @ y_train + centre
        no_dp.append(float(np.sqrt(np.mean((mean - data.y[test]) ** 2))))
        if with_dp:
            mech = CloakingMechanism(C, d, epsilon, delta, method=method)
            release = mech.sample(Dataset(data.X[train], y_train), 1, rng)[0] + centre
            dp.append(float(np.sqrt(np.mean((release - data.y[test]) ** 2))))
        else:
            dp.append(float("nan"))
    return RMSEResult(mean_ci(no_dp), mean_ci(dp), np.array(no_dp), np.array(dp))


def spatial_standin(n: int, rng: np.random.Generator) -> Dataset:
    """SYNTHETIC stand-in for S18 Fig. 3: clustered locations in a 100 km square, prices
    (k£) from a smooth surface plus noise, thresholded to [100, 500].
    """
    rng = check_rng(rng)
    centres = np.array([[30.0, 40.0], [65.0, 60.0], [50.0, 25.0], [75.0, 80.0]])
    which = rng.integers(0, len(centres), n)
    spread = np.array([6.0, 8.0, 4.0, 10.0])[which][:, None]
    X = centres[which] + spread * rng.normal(size=(n, 2))
    X = np.clip(X, 0.0, 100.0)
    surface = 300 + 120 * np.sin(X[:, 0] / 15.0) * np.cos(X[:, 1] / 20.0)
    y = np.clip(surface + rng.normal(scale=60.0, size=n), 100.0, 500.0)
    return Dataset(X, y, name="SYNTHETIC spatial stand-in (not Land Registry data)")


CITI_BIKE_BOX = ((40.6794, -74.0171), (40.7872, -73.9299))
"""S18 fn. 5: the stations lie between these (latitude, longitude) corners, in degrees."""

_KM_PER_DEGREE = (111.0, 84.3)  # latitude, longitude at 40.7° N


def journey_standin(n: int, rng: np.random.Generator) -> Dataset:
    """SYNTHETIC stand-in for S18 Table 1 (Citi Bike, §4): 4-D journeys in degrees.

    Inputs are (start latitude, start longitude, end latitude, end longitude) inside
    the S18 fn. 5 box (:data:`CITI_BIKE_BOX`), so S18's lengthscales (0.02°–0.781°)
    and bin counts (3⁴, 6⁴, 10⁴) mean the same here. A journey starts uniformly in the
    box and ends a gamma-distributed distance (mean 1.8 km) away in a uniform direction
    (kept inside the box). Its duration is 90 s plus 280 s per km, times log-normal
    noise (sd 0.15), plus a location effect of up to 2 × 300 s (journeys ending further
    north or starting further east take longer); 2 % are leisure rides of 600–3000 s.
    Durations are thresholded at 2000 s as in S18 §4, so d = 2000 s.
    """
    rng = check_rng(rng)
    n = check_positive_int("n", n)
    lo, hi = np.array(CITI_BIKE_BOX[0]), np.array(CITI_BIKE_BOX[1])
    start = lo + (hi - lo) * rng.uniform(size=(n, 2))
    angle = rng.uniform(0.0, 2.0 * np.pi, n)
    km = rng.gamma(2.0, 0.9, n)
    step = np.column_stack([km * np.sin(angle), km * np.cos(angle)]) / _KM_PER_DEGREE
    end = np.clip(start + step, lo, hi)
    dist = np.hypot(*((end - start) * _KM_PER_DEGREE).T)
    rel_end, rel_start = (end - lo) / (hi - lo), (start - lo) / (hi - lo)
    y = ((90.0 + 280.0 * dist) * rng.lognormal(0.0, 0.15, n)
         + 300.0 * rel_end[:, 0] + 300.0 * rel_start[:, 1])
    leisure = rng.uniform(size=n) < 0.02
    y[leisure] = rng.uniform(600.0, 3000.0, int(leisure.sum()))
    return Dataset(np.column_stack([start, end]), np.clip(y, 0.0, 2000.0),
                   name="SYNTHETIC journey stand-in (not Citi Bike data)")


def surface_standin_2d(n: int, rng: np.random.Generator) -> Dataset:
    """A noise-dominated SYNTHETIC 2-D stand-in (durations in s on [0, 1]², thresholded at
    2000 s): a smooth surface of sd ≈ 130 s under gamma noise of sd ≈ 170 s.

    Notebook 01 used it for S18 Table 1 before :func:`journey_standin`; it reverses the
    table (binning ahead at every ε), and the notebook's appendix shows why.
    """
    rng = check_rng(rng)
    X = rng.beta(2.0, 2.0, size=(check_positive_int("n", n), 2))
    surface = 600 + 500 * np.hypot(X[:, 0] - 0.3, X[:, 1] - 0.6) + 150 * np.sin(9 * X[:, 0])
    y = np.clip(surface + rng.gamma(2.0, 120.0, n) - 240.0, 0.0, 2000.0)
    return Dataset(X, y, name="SYNTHETIC noise-dominated 2-D surface (not Citi Bike data)")


def table1_comparison(data: Dataset, *, lengthscales: Sequence[float],
                      bins_per_dim: Sequence[int], epsilons: Sequence[float | None],
                      d: float, delta: float, n_folds: int, n_test: int,
                      kernel_variance: float, noise_variance: float,
                      rng: np.random.Generator, centre: float = 0.0) -> dict:
    """RMSE (mean, 95% half-width over folds) of cloaking / integral binning / simple
    binning over lengthscales, bin counts and ε (``None`` = no DP), as in S18 Table 1.

    Each fold samples ``n_test`` public test inputs; the rest train. Binning is over the
    bounding box of all inputs (public). Empty bins predict the public ``centre``.

    Keys are ``(method, lengthscale or bins per dimension, ε)``. Two integral-binning
    variants are returned: ``"integral binning"`` gives its GP each bin's noise variance,
    sampling plus the (public) DP-noise variance, and ``"integral binning, DP noise not
    modelled"`` gives it the sampling variance only (S18 §4 does not say that its GP
    knew the DP noise; without it the noisiest, emptiest bins pull the fit).
    """
    rng = check_rng(rng)
    out: dict = {}
    lo, hi = data.X.min(axis=0), data.X.max(axis=0) + 1e-9
    for _ in range(n_folds):
        perm = rng.permutation(data.n)
        test, train = perm[:n_test], perm[n_test:]
        Xtr, ytr = data.X[train], data.y[train] - centre
        dtr = Dataset(Xtr, ytr)
        for ls in lengthscales:
            fitted = ExactGP(EQ(ls, kernel_variance), noise_variance).fit(Xtr, ytr)
            C = fitted.mean_weights(data.X[test])
            mean = C @ ytr
            solution = None  # M does not depend on ε: solve once per fold and lengthscale
            for eps in epsilons:
                if eps is None:
                    pred = mean
                else:
                    mech = CloakingMechanism(C, d, eps, delta, method="analytic",
                                             solution=solution)
                    solution = mech.solution
                    pred = mech.sample(dtr, 1, rng)[0]
                r = float(np.sqrt(np.mean((pred + centre - data.y[test]) ** 2)))
                out.setdefault(("cloaking", ls, eps), []).append(r)
        for nb in bins_per_dim:
            edges = tuple(make_edges(lo, hi, nb))
            for eps in epsilons:
                mech = LaplaceBinning(Xtr, edges, d, 1.0 if eps is None else eps)
                rel = mech.query(dtr) if eps is None else mech.sample(dtr, 1, rng)[0]
                simple = simple_binning_predict(data.X[test], edges, mech.full_release(rel))
                noise_var = (np.zeros(mech.occupied.size) if eps is None
                             else mech.noise_variance)
                kern = IntegralEQ(lengthscale=(hi - lo) / nb, variance=kernel_variance)
                integ, _ = integral_binning_predict(data.X[test], _with_noise(mech, noise_var),
                                                    rel, kern, noise_variance)
                blind, _ = integral_binning_predict(
                    data.X[test], _with_noise(mech, np.zeros(mech.occupied.size)), rel, kern,
                    noise_variance)
                for name, pred in (("simple binning", simple), ("integral binning", integ),
                                   ("integral binning, DP noise not modelled", blind)):
                    r = float(np.sqrt(np.mean((pred + centre - data.y[test]) ** 2)))
                    out.setdefault((name, nb, eps), []).append(r)
    return {k: mean_ci(v) for k, v in out.items()}


def table1_best(table: dict, method: str, epsilon: float | None
                ) -> tuple[float, float, float]:
    """The best setting of ``method`` at ``epsilon`` in a :func:`table1_comparison` result:
    (lengthscale or bins per dimension, mean RMSE, 95% half-width), lowest mean RMSE.
    """
    rows = [(q, *v) for (m, q, e), v in table.items() if m == method and e == epsilon]
    if not rows:
        raise ValueError(f"no rows for method={method!r} at epsilon={epsilon!r}")
    q, mean, half = min(rows, key=lambda r: r[1])
    return float(q), float(mean), float(half)


@dataclass(frozen=True)
class _NoiseView:
    edges: tuple
    counts: np.ndarray
    occupied: np.ndarray
    noise_variance: np.ndarray


def _with_noise(mech: LaplaceBinning, noise_var: np.ndarray) -> _NoiseView:
    return _NoiseView(mech.edges, mech.counts, mech.occupied, noise_var)


def _expected_noise_sse(C: np.ndarray, d: float, eps: float, delta: float) -> float:
    mech = CloakingMechanism(C, d, eps, delta, method="analytic")
    return mech.sigma**2 * float(np.trace(mech.M))


def selection_heatmap(data: Dataset, lengthscales: Sequence[float], noise_variance: float,
                      kernel_variance: float, *, d: float, regression_epsilons:
                      Sequence[float | None], delta: float, selection_epsilon: float,
                      n_folds: int, centre: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Selection probabilities (rows: regression ε, columns: lengthscale), S18-supp Fig. 4.

    The utility is −(clipped CV SSE + expected SSE of the cloaking noise in each fold,
    σ² tr M): the offset depends only on public quantities, so the sensitivity is the
    clipped-SSE bound. Returns (probabilities, expected noise offsets).
    """
    centred = Dataset(data.X, data.y - centre)
    configs = tuple(GPConfig(EQ(ls, kernel_variance), noise_variance, f"l={ls:g}")
                    for ls in lengthscales)
    base = HyperparameterSelection(data.X, configs, d, selection_epsilon, n_folds=n_folds)
    probs, offsets_all = [], []
    for eps in regression_epsilons:
        if eps is None:
            offsets = np.zeros(len(configs))
        else:
            offsets = np.array([sum(_expected_noise_sse(C, d, eps, delta) for C in Cs)
                                for Cs in base.C_folds])
        sel = HyperparameterSelection(data.X, configs, d, selection_epsilon, n_folds=n_folds,
                                      folds=base.folds, offsets=offsets)
        probs.append(sel.probabilities(centred))
        offsets_all.append(offsets)
    return np.array(probs), np.array(offsets_all)


# --------------------------------------------------------------------------- reproduction
S18_FOOTNOTE2 = {"lengthscale": 25.0, "kernel_sd": 7.72, "noise_sd": 14.0, "d": 100.0,
                 "epsilon": 50.0, "delta": 0.01}
"""S18 fn. 2 (Fig. 1A): EQ lengthscale 25 years, kernel sd 7.72 cm, noise sd 14 cm,
d = 100 cm, ε = 50, δ = 0.01; the paper's multiplier is 28.53 (S18 §2)."""

S18_PAPER = {"multiplier": 28.53, "rmse_no_dp": 6.8, "rmse_dp": 12.2}
"""The numbers S18 prints for the !Kung women (§2 and §3)."""


def footnote2_multiplier(age: np.ndarray, sd_y: float, *, noise_sd: float,
                         kernel_sd: float = 7.72, lengthscale: float = 25.0, d: float = 100.0,
                         epsilon: float = 50.0, delta: float = 0.01) -> float:
    """The S18 §2 multiplier c(δ)·d·b(K⁻¹)/ε of the standard DP-GP, in cm (S18 eqs. 1–2).

    As in S18 fn. 2 the model is set in units of the targets' standard deviation ``sd_y``
    (kernel variance (kernel_sd/sd_y)², noise (noise_sd/sd_y)², d/sd_y) and the
    multiplier is converted back to cm. Hall's c(δ) = √(2 ln(2/δ)) (S18 eq. 2).
    """
    sd = check_positive_float("sd_y", sd_y)
    noise = check_positive_float("noise_sd", noise_sd)
    X = np.asarray(age, dtype=float).reshape(-1, 1)
    K = EQ(lengthscale, (check_positive_float("kernel_sd", kernel_sd) / sd) ** 2)(X)
    K[np.diag_indices_from(K)] += (noise / sd) ** 2
    Kinv = cho_solve_lower(psd_cholesky(K, name="K + noise"), np.eye(X.shape[0]))
    b = paper_sensitivity(0.5 * (Kinv + Kinv.T), check_positive_float("d", d) / sd, "paper-b")
    return hall_c(delta) * b / check_positive_float("epsilon", epsilon) * sd


def noise_sd_for_multiplier(target: float, age: np.ndarray, sd_y: float, *,
                            bracket: tuple[float, float] = (5.0, 30.0), **settings) -> float:
    """The noise sd (cm) at which :func:`footnote2_multiplier` equals ``target``.

    The multiplier decreases as the noise grows (a larger σ_n² shrinks K⁻¹), so a root in
    ``bracket`` is unique; ``ValueError`` if ``target`` is outside the bracket's range.
    """
    from scipy.optimize import brentq

    def gap(s: float) -> float:
        return footnote2_multiplier(age, sd_y, noise_sd=s, **settings) - float(target)

    lo, hi = bracket
    if gap(lo) * gap(hi) > 0:
        raise ValueError(f"target={target!r} is not reached for noise_sd in {bracket}")
    return float(brentq(gap, lo, hi, xtol=1e-6))


@dataclass(frozen=True)
class KungChoice:
    """One reading of S18's !Kung set-up: noise and kernel sd (cm), lengthscale (years) and
    whether the RMSE is on held-out women (``in_sample=False``) or on the training women.
    """

    label: str
    noise_sd: float = 14.0
    kernel_sd: float = 7.72
    lengthscale: float = 25.0
    in_sample: bool = False


def kung_rmse_choices(data: Dataset, choices: Sequence[KungChoice], *, d: float,
                      epsilon: float, delta: float, n_repeats: int, test_fraction: float,
                      rng: np.random.Generator, centre: float = KUNG_CENTRE_CM
                      ) -> dict[str, RMSEResult]:
    """:func:`cloaking_rmse` for each reading, on the same splits and the same normal draws
    (a paired design: differences between readings are not split noise).
    """
    rng = check_rng(rng)
    seed = int(rng.integers(2**63))
    out = {}
    for ch in choices:
        out[ch.label] = cloaking_rmse(
            data, EQ(ch.lengthscale, ch.kernel_sd**2), ch.noise_sd**2, d=d, epsilon=epsilon,
            delta=delta, n_repeats=n_repeats, test_fraction=test_fraction,
            rng=np.random.default_rng(seed), centre=centre, in_sample=ch.in_sample)
    return out


def noise_sd_for_rmse(target: float, data: Dataset, *, n_repeats: int, test_fraction: float,
                      rng: np.random.Generator, kernel_sd: float = 7.72,
                      lengthscale: float = 25.0, in_sample: bool = False,
                      bracket: tuple[float, float] = (4.0, 14.0),
                      centre: float = KUNG_CENTRE_CM, d: float = 100.0) -> float:
    """The noise sd (cm) whose mean no-DP RMSE over fixed splits equals ``target``.

    The no-DP RMSE grows with the noise sd over S18's range (more smoothing of the steep
    childhood growth); the same splits are used at every trial value (root by brentq).
    """
    from scipy.optimize import brentq

    rng = check_rng(rng)
    seed = int(rng.integers(2**63))

    def gap(s: float) -> float:
        r = cloaking_rmse(data, EQ(lengthscale, kernel_sd**2), s**2, d=d, epsilon=1.0,
                          delta=0.01, n_repeats=n_repeats, test_fraction=test_fraction,
                          rng=np.random.default_rng(seed), centre=centre, in_sample=in_sample,
                          with_dp=False)
        return r.no_dp[0] - float(target)

    lo, hi = bracket
    if gap(lo) * gap(hi) > 0:
        raise ValueError(f"target={target!r} is not reached for noise_sd in {bracket}")
    return float(brentq(gap, lo, hi, xtol=1e-3))


def ml_noise_sd(data: Dataset, *, lengthscale: float = 25.0, centre: float = KUNG_CENTRE_CM,
                start: tuple[float, float] = (7.72, 10.0)) -> tuple[float, float]:
    """Maximum-likelihood (kernel sd, noise sd) in cm with the EQ lengthscale held fixed.

    Maximises the GP log marginal likelihood of the centred targets (Nelder–Mead on the
    logs, from ``start``). A non-private fit: it reads y, so it only serves to compare
    S18 fn. 2's a-priori values with what the data alone would suggest.
    """
    from scipy.optimize import minimize

    X, y = data.X, data.y - float(centre)
    ls = check_positive_float("lengthscale", lengthscale)

    def nll(t: np.ndarray) -> float:
        kern_sd, noise_sd = np.exp(t)
        return -ExactGP(EQ(ls, kern_sd**2), noise_sd**2).fit(X, y).log_marginal_likelihood()

    res = minimize(nll, np.log(np.asarray(start, dtype=float)), method="Nelder-Mead",
                   options={"xatol": 1e-4, "fatol": 1e-6})
    kern_sd, noise_sd = np.exp(res.x)
    return float(kern_sd), float(noise_sd)


def standard_vs_cloaking_rmse(data: Dataset, *, lengthscale: float, kernel_sd: float,
                              noise_sd: float, d: float, epsilon: float, delta: float,
                              n_repeats: int, test_fraction: float, rng: np.random.Generator,
                              centre: float = KUNG_CENTRE_CM, method: str = "hall",
                              sensitivity: str = "paper-b") -> dict[str, np.ndarray]:
    """Per-split expected RMSE of the standard DP-GP (S18 §2) and of cloaking (S18 §3) at
    the same (ε, δ), on the same split and test inputs.

    Both releases are the same GP mean plus Gaussian noise, so the expected squared error
    at the test inputs is the squared error of the mean plus the mean noise variance; the
    comparison is exact given the split (no Monte Carlo noise from the DP draws).

    The standard mechanism is set in units of ``kernel_sd`` so that the kernel lies in
    [0, 1], as S18's b(K⁻¹) bound requires (``sensitivity="paper-b"``: the paper's
    mechanism; ``"rkhs"``: the exact, much smaller sensitivity). Both releases use the
    same GP mean. S18's claim — cloaking needs far less noise — is tested in notebook 01
    with :func:`dpgp_audit.experiments.reproduction.paired_sign_test`.
    """
    rng = check_rng(rng)
    unit = check_positive_float("kernel_sd", kernel_sd)
    n = data.n
    n_test = max(1, int(round(test_fraction * n)))
    std, clo = [], []
    for _ in range(check_positive_int("n_repeats", n_repeats)):
        perm = rng.permutation(n)
        test, train = perm[:n_test], perm[n_test:]
        tr = Dataset(data.X[train], data.y[train] - centre)
        s_mech = StandardDPGP(EQ(lengthscale, 1.0), (noise_sd / unit) ** 2, tr.X,
                              data.X[test], d / unit, epsilon, delta,
                              sensitivity=sensitivity, method=method)  # type: ignore[arg-type]
        mean = s_mech.mean(Dataset(tr.X, tr.y / unit)) * unit + centre
        s_var = np.diag(s_mech.cov(Dataset(tr.X, tr.y / unit))) * unit**2
        C = ExactGP(EQ(lengthscale, unit**2), noise_sd**2).fit(tr.X, tr.y).mean_weights(
            data.X[test])
        c_var = np.diag(CloakingMechanism(C, d, epsilon, delta, method=method).cov(tr))
        mse = float(np.mean((mean - data.y[test]) ** 2))
        std.append(float(np.sqrt(mse + np.mean(s_var))))
        clo.append(float(np.sqrt(mse + np.mean(c_var))))
    return {"standard": np.array(std), "cloaking": np.array(clo)}
