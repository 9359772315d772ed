"""Experiment drivers for the S21 notebook (Table 1, Figs. 4, 6–8, 10–11).

Pure functions that run the S21 mechanisms on data and return numbers; the
notebook only calls them and plots with :mod:`dpgp_audit.viz.s21`.

RMSEs of private predictions are *expected* over the DP noise:
``RMSE = sqrt(mean((m − y)²) + mean(noise variance))`` per fold — the exact
expectation of the squared error of one private release, so no DP sampling
noise is added to the comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dpgp_audit._validation import check_rng
from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.inducing import kmeans_inducing
from dpgp_audit.gp.kernels import EQ, Kernel
from dpgp_audit.gp.laplace import LaplaceClassifier, SoRClassifier
from dpgp_audit.methods.s18.cloaking import CloakingGP
from dpgp_audit.methods.s21.mechanisms import (
    LaplaceCloakingClassifier,
    SoRCloakingClassifier,
    TwoStepLaplaceClassifier,
    nonstationary_cloaking,
    sparse_cloaking,
)
from dpgp_audit.methods.s21.private_selection import CVSelection, gp_grid

__all__ = [
    "KungSetup",
    "PAPER_TABLE1",
    "classification_accuracy",
    "digits_binary",
    "digits_sparse_accuracy",
    "kung_fold_rmse",
    "kung_table1",
    "regression_release",
    "rmse_vs_inducing",
    "selection_experiment",
    "stripes_accuracy",
]

PAPER_TABLE1 = {
    ("1d", "standard", True): (13.3, 3.2), ("1d", "sparse", True): (9.9, 1.7),
    ("1d", "nonstationary", True): (12.8, 2.0),
    ("2d", "standard", True): (17.2, 3.1), ("2d", "sparse", True): (10.2, 1.6),
    ("2d", "nonstationary", True): (16.3, 2.5),
    ("1d", "standard", False): (7.1, 1.8), ("1d", "sparse", False): (7.7, 1.9),
    ("1d", "nonstationary", False): (8.6, 2.2),
    ("2d", "standard", False): (5.2, 1.5), ("2d", "sparse", False): (7.7, 2.0),
    ("2d", "nonstationary", False): (5.9, 1.7),
}
"""S21 Table 1: (mean, sd over 14 folds) RMSE in cm, keyed (dims, method, with DP)."""


@dataclass(frozen=True)
class KungSetup:
    """Model settings of S21 §6.1 (1-D) and our 2-D extension.

    Heights are centred by a fixed public prior mean ``y_offset`` (S21 does not say how the
    zero-mean GP meets heights around 135 cm; the private sample mean would leak).
    ``lengthscale`` per input (years, kg); kernel variance 10 cm², noise 25 cm²,
    (1, 0.01)-DP with d = 100 cm, 5 k-means inducing inputs. The non-stationary
    lengthscale uses a KDE of the public inputs with ``bandwidth``, cap ``m``,
    ``n_per`` points per lengthscale and the §6.1 neighbourhood minimum.
    """

    lengthscale: tuple[float, ...] = (15.0,)
    variance: float = 10.0
    noise_variance: float = 25.0
    d: float = 100.0
    epsilon: float = 1.0
    delta: float = 0.01
    n_inducing: int = 5
    y_offset: float = 135.0
    bandwidth: tuple[float, ...] = (5.0,)
    m: tuple[float, ...] = (40.0,)
    n_per: float = 20.0
    neighbourhood: tuple[float, ...] | None = (10.0,)

    def kernel(self) -> Kernel:
        """The stationary EQ kernel."""
        ls = self.lengthscale[0] if len(self.lengthscale) == 1 else np.array(self.lengthscale)
        return EQ(ls, variance=self.variance)


def regression_release(method: str, X_train: np.ndarray, X_test: np.ndarray, setup: KungSetup,
                       rng: np.random.Generator):
    """The cloaked release of S21 Table 1's ``method`` ('standard', 'sparse', 'nonstationary')."""
    if method == "standard":
        return CloakingGP(setup.kernel(), setup.noise_variance, X_train, X_test, setup.d,
                          setup.epsilon, setup.delta)
    if method == "sparse":
        return sparse_cloaking(X_train, X_test, setup.kernel(), setup.noise_variance,
                               n_inducing=setup.n_inducing, rng=rng, d=setup.d,
                               epsilon=setup.epsilon, delta=setup.delta)
    if method == "nonstationary":
        arr = (lambda v: v[0] if len(v) == 1 else np.array(v))  # noqa: E731
        return nonstationary_cloaking(
            X_train, X_test, d=setup.d, epsilon=setup.epsilon, delta=setup.delta,
            bandwidth=arr(setup.bandwidth), m=arr(setup.m), n_per=setup.n_per,
            neighbourhood=None if setup.neighbourhood is None else arr(setup.neighbourhood),
            variance=setup.variance, noise_variance=setup.noise_variance, probes=5)
    raise ValueError(f"method must be 'standard', 'sparse' or 'nonstationary', got {method!r}")


def kung_fold_rmse(data: Dataset, method: str, test_sets: Sequence[np.ndarray],
                   setup: KungSetup, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Per-fold RMSE without DP and expected RMSE with DP for one method."""
    rng = check_rng(rng)
    no_dp, dp = [], []
    for test in test_sets:
        train = np.setdiff1d(np.arange(data.n), test)
        rel = regression_release(method, data.X[train], data.X[test], setup, rng)
        tr = Dataset(data.X[train], data.y[train] - setup.y_offset)
        mean = rel.query(tr) + setup.y_offset
        var = np.clip(np.diag(rel.cov(tr)), 0.0, None)
        mse = float(np.mean((mean - data.y[test]) ** 2))
        no_dp.append(np.sqrt(mse))
        dp.append(np.sqrt(mse + float(np.mean(var))))
    return {"no_dp": np.array(no_dp), "dp": np.array(dp)}


def kung_table1(data_1d: Dataset, data_2d: Dataset, n_folds: int, rng: np.random.Generator,
                setups: dict[str, KungSetup], methods: Sequence[str] = (
                    "standard", "sparse", "nonstationary")) -> list[dict]:
    """S21 Table 1 rows: RMSE mean ± sd over folds, ours beside the paper's."""
    rng = check_rng(rng)
    rows = []
    for dims, data in (("1d", data_1d), ("2d", data_2d)):
        perm = rng.permutation(data.n)
        tests = [np.sort(t) for t in np.array_split(perm, n_folds)]
        for method in methods:
            res = kung_fold_rmse(data, method, tests, setups[dims], rng)
            for dp in (True, False):
                r = res["dp" if dp else "no_dp"]
                rows.append({"dims": dims, "method": method, "dp": dp,
                             "rmse": float(r.mean()), "sd": float(r.std()),
                             "paper": PAPER_TABLE1.get((dims, method, dp))})
    return rows


def rmse_vs_inducing(data: Dataset, ms: Sequence[int], n_folds: int, setup: KungSetup,
                     rng: np.random.Generator) -> dict[str, np.ndarray]:
    """S21 Fig. 4: fold-mean RMSE (with and without DP) against the number of inducing inputs."""
    rng = check_rng(rng)
    perm = rng.permutation(data.n)
    tests = [np.sort(t) for t in np.array_split(perm, n_folds)]
    dp, no_dp = [], []
    for m in ms:
        s = KungSetup(**{**setup.__dict__, "n_inducing": int(m)})
        res = kung_fold_rmse(data, "sparse", tests, s, rng)
        dp.append(res["dp"].mean())
        no_dp.append(res["no_dp"].mean())
    return {"m": np.asarray(ms), "dp": np.array(dp), "no_dp": np.array(no_dp)}


# --------------------------------------------------------------------------- classification
def classification_accuracy(proba: np.ndarray, y: np.ndarray) -> float:
    """Share of ±1 labels predicted on the right side of ½."""
    return float(np.mean(np.where(np.asarray(proba) >= 0.5, 1.0, -1.0) == np.asarray(y)))


def stripes_accuracy(train: Dataset, test: Dataset, kernel: Kernel, *, epsilon: float,
                     delta: float, n_rep: int, rng: np.random.Generator,
                     n_iter: int = 20) -> dict[str, np.ndarray | float]:
    """S21 §6.5 / Fig. 7: accuracy without DP (``n_iter`` steps), one and two private steps."""
    rng = check_rng(rng)
    model = LaplaceClassifier(kernel, train.X)
    f_mode = model.mode(train.y, n_iter)
    acc_nodp = classification_accuracy(model.predict_proba(f_mode, test.X), test.y)
    one = LaplaceCloakingClassifier(kernel, train.X, epsilon, delta)
    f1 = one.sample(train, n_rep, rng)
    p1 = np.array([one.predict_proba(f, test.X) for f in f1])
    two = TwoStepLaplaceClassifier(kernel, train.X, epsilon, delta)
    f2 = two.sample(train, n_rep, rng)
    p2 = np.array([model.predict_proba(f, test.X) for f in f2])
    return {"no_dp": acc_nodp,
            "one_step": np.array([classification_accuracy(p, test.y) for p in p1]),
            "two_steps": np.array([classification_accuracy(p, test.y) for p in p2]),
            "proba_one_step": p1, "proba_no_dp": model.predict_proba(f_mode, test.X)}


def digits_binary(n_train: int, n_test: int, rng: np.random.Generator
                  ) -> tuple[Dataset, Dataset]:
    """scikit-learn's 8×8 digits (the MNIST stand-in): low {0–4} → −1, high {5–9} → +1."""
    from sklearn.datasets import load_digits

    rng = check_rng(rng)
    X, digit = load_digits(return_X_y=True)
    y = np.where(digit >= 5, 1.0, -1.0)
    idx = rng.permutation(X.shape[0])[: n_train + n_test]
    tr, te = idx[:n_train], idx[n_train:]
    return (Dataset(X[tr], y[tr], name="digits-train"), Dataset(X[te], y[te], name="digits-test"))


def digits_sparse_accuracy(train: Dataset, test: Dataset, lengthscales: Sequence[float],
                           ms: Sequence[int], *, epsilon: float, delta: float, n_rep: int,
                           rng: np.random.Generator, n_iter: int = 10
                           ) -> dict[str, np.ndarray]:
    """S21 Fig. 8: accuracy of SoR classification (with/without DP) per lengthscale × M."""
    rng = check_rng(rng)
    acc_dp = np.zeros((len(lengthscales), len(ms)))
    acc = np.zeros_like(acc_dp)
    for a, ls in enumerate(lengthscales):
        for b, m in enumerate(ms):
            Z = kmeans_inducing(train.X, int(m), rng)
            model = SoRClassifier(EQ(ls), train.X, Z, jitter=1e-6)
            u = model.mode(train.y, n_iter)
            acc[a, b] = classification_accuracy(model.predict_proba(u, test.X), test.y)
            mech = SoRCloakingClassifier(EQ(ls), train.X, int(m), rng, epsilon, delta,
                                         placement=lambda X, k, g, Z=Z: Z, jitter=1e-6)
            us = mech.sample(train, n_rep, rng)
            acc_dp[a, b] = np.mean([classification_accuracy(mech.predict_proba(v, test.X),
                                                            test.y) for v in us])
    return {"lengthscales": np.asarray(lengthscales), "m": np.asarray(ms), "dp": acc_dp,
            "no_dp": acc}


# --------------------------------------------------------------------------- selection
def selection_experiment(data: Dataset, *, lengthscales: Sequence[float],
                         noise_variances: Sequence[float], kernel_variances: Sequence[float],
                         folds: int, epsilon: float, d: float, rng: np.random.Generator,
                         y_offset: float = 135.0, reg_epsilon: float = 1.0,
                         reg_delta: float = 0.01, threshold: float | None = None,
                         evaluate: Callable | None = None) -> dict:
    """S21 §6.7 / Figs. 10–11: select on one half, report the RMSE on the other half.

    Returns the configuration labels, selection probabilities (exponential mechanism),
    each configuration's expected DP RMSE on the held-out half (standard cloaking trained
    on the selection half), the expected RMSE under the mechanism and under a uniform pick.
    """
    rng = check_rng(rng)
    perm = rng.permutation(data.n)
    half = data.n // 2
    sel, ev = np.sort(perm[:half]), np.sort(perm[half:])
    grid = gp_grid(lengthscales, noise_variances, kernel_variances)
    sel_data = Dataset(data.X[sel], data.y[sel] - y_offset)
    mech = CVSelection(sel_data.X, tuple(grid), d, epsilon, folds=folds,
                       reg_epsilon=reg_epsilon, reg_delta=reg_delta, threshold=threshold)
    probs = mech.probabilities(sel_data)
    rmse = []
    for ls in lengthscales:
        for nv in noise_variances:
            for kv in kernel_variances:
                rel = CloakingGP(EQ(ls, variance=kv), nv, sel_data.X, data.X[ev], d,
                                 reg_epsilon, reg_delta)
                mean = rel.query(sel_data) + y_offset
                var = np.clip(np.diag(rel.cov(sel_data)), 0.0, None)
                rmse.append(np.sqrt(np.mean((mean - data.y[ev]) ** 2) + np.mean(var)))
    rmse = np.array(rmse)
    return {"labels": [g[0] for g in grid], "probabilities": probs, "rmse": rmse,
            "expected_rmse": float(probs @ rmse), "uniform_rmse": float(rmse.mean()),
            "best": int(np.argmin(rmse)), "sensitivity": mech.sensitivity_bound(),
            "sse": mech.sse(sel_data), "mechanism": mech}
