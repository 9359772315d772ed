"""GP core benchmark: vectorised kernels and regression versus baselines.

Run with BLAS pinned to one thread (by ``_common``)::

    python benchmarks/bench_gp.py

Side by side:

1. Gram matrix EQ-ARD, n = 300, D = 3: ours vs a naive double loop vs scikit-learn's RBF;
   n = 3000: ours vs scikit-learn.
2. Exact GP, n = 1500: fit + predict at 500 points, ours vs GaussianProcessRegressor
   (optimizer=None); and refitting new targets on the same inputs
   (``FittedGP.with_targets`` reuses the Cholesky factor) vs a fresh fit.
3. FITC with M = 30 inducing inputs, n = 20000 (O(n M²)) vs the exact GP at n = 1500.
"""

from __future__ import annotations

import numpy as np
from _common import best_of  # pins BLAS to one thread
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process import kernels as skk

from dpgp_audit.gp.kernels import EQ
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.gp.sparse import SparseGP


def _naive_eq(X, ls, var):
    n = X.shape[0]
    K = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            d = (X[i] - X[j]) / ls
            K[i, j] = var * np.exp(-0.5 * float(d @ d))
    return K


def main() -> dict[str, float]:
    rng = np.random.default_rng(0)
    ls = np.array([0.5, 1.0, 2.0])
    k = EQ(ls, 1.5)
    sk = skk.ConstantKernel(1.5) * skk.RBF(ls)
    out: dict[str, float] = {}

    X = rng.normal(size=(300, 3))
    out["gram n=300 ours [s]"] = best_of(lambda: k(X), 3)
    out["gram n=300 naive loop [s]"] = best_of(lambda: _naive_eq(X, ls, 1.5), 1)
    out["gram n=300 sklearn [s]"] = best_of(lambda: sk(X), 3)
    X3 = rng.normal(size=(3000, 3))
    out["gram n=3000 ours [s]"] = best_of(lambda: k(X3), 3)
    out["gram n=3000 sklearn [s]"] = best_of(lambda: sk(X3), 3)

    n = 1500
    X = rng.uniform(-3, 3, size=(n, 1))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=n)
    Xs = np.linspace(-3, 3, 500)[:, None]
    gp = ExactGP(EQ(0.8), 0.01)
    out["exact n=1500 fit+predict ours [s]"] = best_of(lambda: gp.fit(X, y).predict(Xs), 3)
    gpr = GaussianProcessRegressor(skk.RBF(0.8), alpha=0.01, optimizer=None)
    out["exact n=1500 fit+predict sklearn [s]"] = best_of(
        lambda: gpr.fit(X, y).predict(Xs, return_std=True), 3)
    fitted = gp.fit(X, y)
    y2 = y + 0.1
    out["exact n=1500 new targets, with_targets [s]"] = best_of(
        lambda: fitted.with_targets(y2).predict(Xs), 3)
    out["exact n=1500 new targets, refit [s]"] = best_of(lambda: gp.fit(X, y2).predict(Xs), 3)

    N = 20000
    Xb = rng.uniform(-3, 3, size=(N, 1))
    yb = np.sin(2 * Xb[:, 0]) + 0.1 * rng.normal(size=N)
    Z = np.linspace(-3, 3, 30)[:, None]
    sp = SparseGP(EQ(0.8), 0.01, Z, "fitc")
    out["fitc n=20000 M=30 fit+predict [s]"] = best_of(lambda: sp.fit(Xb, yb).predict(Xs), 3)
    return out


if __name__ == "__main__":
    for key, val in main().items():
        print(f"{key:45s} {val:10.4f}")
