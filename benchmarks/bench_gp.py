"""GP algebra benchmark: kernels, exact and FITC regression versus external baselines.

Run with BLAS pinned to one thread (by ``_common``; PyTorch also set to one thread)::

    python benchmarks/bench_gp.py

Every case is computed in float64 with the same fixed hyperparameters (no optimisation),
and the largest difference to the kit's output is printed next to each time, so that
a fast but wrong baseline cannot pass unnoticed. Side by side:

1. EQ-ARD Gram matrix, n = 3000, D = 3: the kit vs scikit-learn's
   ``ConstantKernel * RBF`` and GPyTorch's ``ScaleKernel(RBFKernel(ard_num_dims=3))``
   (evaluated densely). Internal, labelled: a naive double loop at n = 300.
2. Exact GP regression (R&W Alg. 2.1), n = 1500, mean and variance at 500 points: the kit
   vs scikit-learn ``GaussianProcessRegressor(optimizer=None)``, GPyTorch ``ExactGP``
   (Cholesky forced with ``max_cholesky_size``; otherwise it switches to conjugate
   gradients above n = 800 and is not exact) and a direct SciPy dense solve
   (``cho_factor``/``cho_solve``), the converged reference.
3. New targets on the same inputs (the auditors' inner loop): ``FittedGP.with_targets``
   (reuses the Cholesky factor) vs SciPy ``cho_solve`` with a cached factor (external)
   and, internal, a fresh kit fit.
4. FITC (catalogue S21, Quiñonero-Candela & Rasmussen 2005, eq. 24 and S21 §3.2),
   n = 20000, M = 30 inducing inputs, mean and variance at 500 points: the kit vs the
   textbook formula written directly in NumPy/SciPy (Σ = (K_ZZ + K_Zf Λ⁻¹ K_fZ)⁻¹);
   no installable package ships FITC regression with fixed inducing inputs (GPyTorch's
   ``InducingPointKernel`` is the SGPR/DTC approximation, a different model).

GPflow would be the other candidate: it needs TensorFlow (≈ 600 MB) and pins NumPy < 2,
which would downgrade the project's NumPy, so it is not part of the benchmark
environment. GPyTorch is optional (``benchmarks/requirements.txt``); without it its
column reads "not installed".
"""

from __future__ import annotations

import numpy as np
from _common import best_of, headline, versus  # pins BLAS to one thread
from scipy.linalg import cho_factor, cho_solve, solve_triangular
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process import kernels as skk

from dpgp_audit.gp.kernels import EQ
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.gp.sparse import SparseGP

try:
    import gpytorch
    import torch

    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
except ImportError:  # pragma: no cover - optional benchmark dependency
    gpytorch = None
    torch = None

BENCH = "bench_gp.py"


def _naive_eq(X, ls, var):
    """Internal baseline: the EQ-ARD kernel one entry at a time."""
    n = X.shape[0]
    K = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            d = (X[i] - X[j]) / ls
            K[i, j] = var * np.exp(-0.5 * float(d @ d))
    return K


def _gpytorch_gram(X, ls, var):
    k = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel(ard_num_dims=X.shape[1]))
    k.base_kernel.lengthscale = torch.as_tensor(ls)
    k.outputscale = var
    Xt = torch.as_tensor(X)

    def run():
        with torch.no_grad():
            return k(Xt).to_dense().numpy()
    return run


def _gpytorch_exact(X, y, Xs, ell, noise):
    class _Model(gpytorch.models.ExactGP):
        def __init__(self, x, t, lik):
            super().__init__(x, t, lik)
            self.mean_module = gpytorch.means.ZeroMean()
            self.covar_module = gpytorch.kernels.RBFKernel()

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x),
                                                             self.covar_module(x))

    Xt, yt, Xst = (torch.as_tensor(a) for a in (X, y, Xs))

    def run():  # a fresh model each call: GPyTorch caches its predictive factors
        lik = gpytorch.likelihoods.GaussianLikelihood()
        lik.noise = noise
        model = _Model(Xt, yt, lik)
        model.covar_module.lengthscale = ell
        model.eval()
        with (torch.no_grad(), gpytorch.settings.max_cholesky_size(10**7),
              gpytorch.settings.fast_pred_var(False)):
            f = model(Xst)
            return f.mean.numpy(), f.variance.numpy()
    return run


def _scipy_exact(X, y, Xs, k, noise):
    def run():
        c = cho_factor(k(X) + noise * np.eye(X.shape[0]), lower=True)
        Ksf = k(Xs, X)
        mean = Ksf @ cho_solve(c, y)
        v = solve_triangular(c[0], Ksf.T, lower=True)
        return mean, k.diag(Xs) - np.einsum("ij,ij->j", v, v)
    return run


def _fitc_direct(X, y, Xs, Z, k, noise, jitter):
    """FITC predictive mean and variance from the textbook formula (dense in n × M)."""
    Kzz = k(Z)
    Kzz = Kzz + jitter * float(np.mean(np.diag(Kzz))) * np.eye(Z.shape[0])
    Kzf = k(Z, X)
    cz = cho_factor(Kzz, lower=True)
    qdiag = np.sum(Kzf * cho_solve(cz, Kzf), axis=0)
    lam = np.maximum(k.diag(X) - qdiag, 0.0) + noise
    A = Kzz + (Kzf / lam) @ Kzf.T
    ca = cho_factor(A, lower=True)
    Kzs = k(Z, Xs)
    mean = Kzs.T @ cho_solve(ca, Kzf @ (y / lam))
    var = (k.diag(Xs) - np.sum(Kzs * cho_solve(cz, Kzs), axis=0)
           + np.sum(Kzs * cho_solve(ca, Kzs), axis=0))
    return mean, var


def _diff(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def _ms(t: float) -> str:
    return f"{t * 1e3:.1f} ms"


def main() -> dict[str, float]:
    rng = np.random.default_rng(0)
    ls = np.array([0.5, 1.0, 2.0])
    k = EQ(ls, 1.5)
    sk = skk.ConstantKernel(1.5) * skk.RBF(ls)
    out: dict[str, float] = {}

    print("1. EQ-ARD Gram matrix, D = 3")
    X3 = rng.normal(size=(3000, 3))
    K_ours = k(X3)
    out["gram n=3000 ours"] = best_of(lambda: k(X3), 3)
    out["gram n=3000 sklearn"] = best_of(lambda: sk(X3), 3)
    print(f"   n=3000: kit {_ms(out['gram n=3000 ours'])} | sklearn "
          f"{_ms(out['gram n=3000 sklearn'])} (max diff {_diff(sk(X3), K_ours):.1e})", end="")
    ext = [("sklearn", out["gram n=3000 sklearn"])]
    if gpytorch is not None:
        run = _gpytorch_gram(X3, ls, 1.5)
        out["gram n=3000 gpytorch"] = best_of(run, 3)
        ext.append(("GPyTorch", out["gram n=3000 gpytorch"]))
        print(f" | GPyTorch {_ms(out['gram n=3000 gpytorch'])} "
              f"(max diff {_diff(run(), K_ours):.1e})", end="")
    print()
    X = rng.normal(size=(300, 3))
    out["gram n=300 ours"] = best_of(lambda: k(X), 3)
    out["gram n=300 naive loop (internal)"] = best_of(lambda: _naive_eq(X, ls, 1.5), 1)
    print(f"   n=300: kit {_ms(out['gram n=300 ours'])} | internal naive double loop "
          f"{_ms(out['gram n=300 naive loop (internal)'])}")
    name, t = min(ext, key=lambda e: e[1])
    headline(BENCH, "EQ-ARD Gram, n = 3000, D = 3", _ms(out["gram n=3000 ours"]),
             f"{name}: {_ms(t)} ({versus(out['gram n=3000 ours'], t)})",
             f"double loop at n = 300: {_ms(out['gram n=300 naive loop (internal)'])}")

    print("2. exact GP, n = 1500, mean + variance at 500 points")
    n = 1500
    X = rng.uniform(-3, 3, size=(n, 1))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=n)
    Xs = np.linspace(-3, 3, 500)[:, None]
    gp = ExactGP(EQ(0.8), 0.01)
    m_ours, v_ours = gp.fit(X, y).predict(Xs)
    out["exact ours"] = best_of(lambda: gp.fit(X, y).predict(Xs), 3)
    runs = {
        "SciPy cho_solve": _scipy_exact(X, y, Xs, EQ(0.8), 0.01),
        "sklearn GPR": lambda: GaussianProcessRegressor(skk.RBF(0.8), alpha=0.01,
                                                        optimizer=None)
        .fit(X, y).predict(Xs, return_std=True),
    }
    if gpytorch is not None:
        runs["GPyTorch ExactGP"] = _gpytorch_exact(X, y, Xs, 0.8, 0.01)
    ext = []
    print(f"   kit {_ms(out['exact ours'])}")
    for name, run in runs.items():
        mean, second = run()
        var = second**2 if name == "sklearn GPR" else second
        t = best_of(run, 3)
        out[f"exact {name}"] = t
        ext.append((name, t))
        print(f"   {name:<18} {_ms(t):>10}  max |mean diff| {_diff(mean, m_ours):.1e}, "
              f"max |var diff| {_diff(var, v_ours):.1e}")
    name, t = min(ext, key=lambda e: e[1])
    headline(BENCH, "exact GP fit+predict, n = 1500, 500 test", _ms(out["exact ours"]),
             f"{name}: {_ms(t)} ({versus(out['exact ours'], t)}); "
             + ", ".join(f"{nm} {_ms(tt)}" for nm, tt in ext if nm != name))

    print("3. new targets on the same inputs (n = 1500)")
    fitted = gp.fit(X, y)
    y2 = y + 0.1
    c = cho_factor(EQ(0.8)(X) + 0.01 * np.eye(n), lower=True)
    Ksf = EQ(0.8)(Xs, X)
    out["new targets with_targets"] = best_of(lambda: fitted.with_targets(y2).predict(Xs), 3)
    out["new targets scipy cached factor"] = best_of(
        lambda: (Ksf @ cho_solve(c, y2), solve_triangular(c[0], Ksf.T, lower=True)), 3)
    out["new targets refit (internal)"] = best_of(lambda: gp.fit(X, y2).predict(Xs), 3)
    print(f"   kit with_targets {_ms(out['new targets with_targets'])} | SciPy cho_solve, "
          f"cached factor and K_*f {_ms(out['new targets scipy cached factor'])} | internal: "
          f"fresh kit fit {_ms(out['new targets refit (internal)'])}")
    headline(BENCH, "exact GP new targets, n = 1500", _ms(out["new targets with_targets"]),
             f"SciPy cho_solve, cached factor: {_ms(out['new targets scipy cached factor'])}",
             f"fresh fit: {_ms(out['new targets refit (internal)'])}")

    print("4. FITC, n = 20000, M = 30, mean + variance at 500 points")
    N = 20000
    Xb = rng.uniform(-3, 3, size=(N, 1))
    yb = np.sin(2 * Xb[:, 0]) + 0.1 * rng.normal(size=N)
    Z = np.linspace(-3, 3, 30)[:, None]
    sp = SparseGP(EQ(0.8), 0.01, Z, "fitc")
    m_sp, v_sp = sp.fit(Xb, yb).predict(Xs)
    m_ref, v_ref = _fitc_direct(Xb, yb, Xs, Z, EQ(0.8), 0.01, sp.jitter)
    out["fitc ours"] = best_of(lambda: sp.fit(Xb, yb).predict(Xs), 3)
    out["fitc direct numpy"] = best_of(
        lambda: _fitc_direct(Xb, yb, Xs, Z, EQ(0.8), 0.01, sp.jitter), 3)
    print(f"   kit {_ms(out['fitc ours'])} | direct NumPy/SciPy formula "
          f"{_ms(out['fitc direct numpy'])} (max |mean diff| {_diff(m_sp, m_ref):.1e}, "
          f"max |var diff| {_diff(v_sp, v_ref):.1e})")
    headline(BENCH, "FITC fit+predict, n = 20000, M = 30", _ms(out["fitc ours"]),
             f"direct NumPy/SciPy formula: {_ms(out['fitc direct numpy'])}")
    return out


if __name__ == "__main__":
    main()
