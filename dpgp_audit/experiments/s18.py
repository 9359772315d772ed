"""Experiment drivers for the S18 notebook (catalogue S18 "Experiments to reproduce").

Pure functions that call the S18 mechanisms and return numbers; the notebook only
calls them and plots with :mod:`dpgp_audit.viz.s18`. Every random step takes ``rng``.

Stand-ins (the papers' London prices and Citi Bike data are not shipped by any registry):
:func:`spatial_standin` draws clustered 2-D "property" locations with a smooth price
surface thresholded to [100, 500] (k£); :func:`journey_standin` draws 2-D inputs with a
smooth duration surface thresholded at 2000 s. Both are labelled synthetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import check_rng
from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.integral_kernel import IntegralEQ
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.methods.s18.binning import (
    LaplaceBinning,
    integral_binning_predict,
    make_edges,
    simple_binning_predict,
)
from dpgp_audit.methods.s18.cloaking import CloakingMechanism
from dpgp_audit.methods.s18.hyperparameter_selection import GPConfig, HyperparameterSelection

__all__ = [
    "KUNG_CENTRE_CM",
    "RMSEResult",
    "cloaking_rmse",
    "journey_standin",
    "mean_ci",
    "selection_heatmap",
    "spatial_standin",
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
                  method: str = "hall") -> RMSEResult:
    """Held-out RMSE of the GP mean and of its (ε, δ) cloaking release over random splits.

    The split and the test inputs are public; targets are centred by the public ``centre``.
    """
    rng = check_rng(rng)
    n = data.n
    n_test = max(1, int(round(test_fraction * n)))
    no_dp, dp = [], []
    for _ in range(n_repeats):
        perm = rng.permutation(n)
        test, train = perm[:n_test], perm[n_test:]
        fitted = ExactGP(kernel, noise_variance).fit(data.X[train], data.y[train] - centre)
        C = fitted.mean_weights(data.X[test])
        mech = CloakingMechanism(C, d, epsilon, delta, method=method)
        y_train = data.y[train] - centre
        mean = C @ y_train + centre
        release = mech.sample(Dataset(data.X[train], y_train), 1, rng)[0] + centre
        no_dp.append(float(np.sqrt(np.mean((mean - data.y[test]) ** 2))))
        dp.append(float(np.sqrt(np.mean((release - data.y[test]) ** 2))))
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


def journey_standin(n: int, rng: np.random.Generator) -> Dataset:
    """SYNTHETIC stand-in for S18 Table 1 (Citi Bike): 2-D inputs on [0, 1]², durations (s)
    from a smooth surface with heavy-tailed noise, thresholded at 2000 s.
    """
    rng = check_rng(rng)
    X = rng.beta(2.0, 2.0, size=(n, 2))
    surface = 600 + 500 * np.hypot(X[:, 0] - 0.3, X[:, 1] - 0.6) + 150 * np.sin(9 * X[:, 0])
    y = np.clip(surface + rng.gamma(2.0, 120.0, n) - 240.0, 0.0, 2000.0)
    return Dataset(X, y, name="SYNTHETIC journey-duration stand-in (not Citi Bike data)")


def table1_comparison(data: Dataset, *, lengthscales: Sequence[float],
                      bins_per_dim: Sequence[int], epsilons: Sequence[float | None],
                      d: float, delta: float, n_folds: int, n_test: int,
                      kernel_variance: float, noise_variance: float,
                      rng: np.random.Generator, centre: float = 0.0) -> dict:
    """RMSE (mean, 95% half-width over folds) of cloaking / integral binning / simple
    binning over lengthscales, bin counts and ε (``None`` = no DP), as in S18 Table 1.

    Each fold samples ``n_test`` public test inputs; the rest train. Binning is over the
    bounding box of all inputs (public). Empty bins predict the public ``centre``.
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
            for eps in epsilons:
                if eps is None:
                    pred = mean
                else:
                    mech = CloakingMechanism(C, d, eps, delta, method="analytic")
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
                tmp = _with_noise(mech, noise_var)
                integ, _ = integral_binning_predict(data.X[test], tmp, rel, kern,
                                                    noise_variance)
                for name, pred in (("simple binning", simple), ("integral binning", integ)):
                    r = float(np.sqrt(np.mean((pred + centre - data.y[test]) ** 2)))
                    out.setdefault((name, nb, eps), []).append(r)
    return {k: mean_ci(v) for k, v in out.items()}


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
