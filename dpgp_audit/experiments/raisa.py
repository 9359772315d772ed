"""The comparisons of R §5 at CPU scale: DPConvCNP vs DP-SVGP vs the oracle (catalogue R.4, R.5).

Only the DPConvCNP branch needs PyTorch (imported when a model is passed); the
oracle and the DP-SVGP run on numpy, so the notebook works without the extra.

* :func:`nll_vs_n` — mean target NLL against the context size N on synthetic
  tasks (R Fig. 6 style);
* :func:`kung_tasks` / :func:`kung_sim_to_real` — the !Kung sim-to-real task
  (R §5.2, Fig. 7): ages scaled to [−1, 1], targets standardised (the scaling
  statistics are treated as public, as in R App. E.2), random context/target splits;
* :func:`deployment_times` — seconds per task for each method (R Fig. 5).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.kernels import Kernel, Matern32
from dpgp_audit.methods.raisa.dpsgd_svgp import DPSGDSVGP, calibrate_dpsgd_noise
from dpgp_audit.neural.tasks import TaskBatch, gaussian_nll, oracle_nll, sample_tasks
from dpgp_audit.privacy.gdp import gdp_mu

__all__ = [
    "KungSplit",
    "MethodCurve",
    "deployment_times",
    "dpsvgp_predict",
    "kung_sim_to_real",
    "kung_tasks",
    "nll_vs_n",
]


@dataclass(frozen=True)
class MethodCurve:
    """Mean NLL and its standard error at each context size N."""

    ns: np.ndarray
    mean: np.ndarray
    sem: np.ndarray


@lru_cache(maxsize=256)
def _cached_noise(epsilon: float, delta: float, n: int, batch: int, steps: int) -> float:
    return calibrate_dpsgd_noise(epsilon, delta, n, batch, steps)


def dpsvgp_predict(xc: np.ndarray, yc: np.ndarray, xt: np.ndarray, epsilon: float, delta: float,
                   rng: np.random.Generator, *, kernel: Kernel | None = None,
                   n_inducing: int = 15, steps: int = 100, batch_size: int = 64,
                   learning_rate: float = 0.05, clip_norm: float = 1.0
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Fit the DP-SVGP baseline on one context set and predict mean/std at ``xt``.

    Inducing inputs are a fixed grid on [−1.1, 1.1] (public). The kernel defaults
    to a Matérn-3/2 with lengthscale 0.8, a middle-of-the-prior public choice.
    """
    kernel = Matern32(0.8, 1.0) if kernel is None else kernel
    n = int(np.size(xc))
    B = min(batch_size, n)
    Z = np.linspace(-1.1, 1.1, n_inducing)[:, None]
    model = DPSGDSVGP(kernel, Z, epsilon, delta, steps=steps, batch_size=B,
                   learning_rate=learning_rate, clip_norm=clip_norm)
    z = _cached_noise(float(epsilon), float(delta), n, B, int(steps))
    fit = model.fit(Dataset(np.asarray(xc)[:, None], np.asarray(yc)), rng, _noise_multiplier=z)
    mean, var = fit.predict(np.asarray(xt)[:, None])
    return mean, np.sqrt(var)


def _convcnp_predict(model, batch: TaskBatch, rng: np.random.Generator
                     ) -> tuple[np.ndarray, np.ndarray]:
    import torch

    T = torch.as_tensor
    G = model.encoder.grid.shape[0]
    z = T(rng.standard_normal((batch.xc.shape[0], 2, G)))
    with torch.no_grad():
        mean, std = model(T(batch.xc), T(batch.yc), T(batch.mask), T(batch.xt), T(batch.mu), z=z)
    return mean.double().numpy(), std.double().numpy()


def nll_vs_n(generator: str, ns: list[int] | np.ndarray, n_tasks: int, rng: np.random.Generator,
             *, model=None, epsilon: float = 1.0, delta: float = 1e-3, n_target: int = 64,
             dpsvgp: bool = True, dpsvgp_kwargs: dict | None = None) -> dict[str, MethodCurve]:
    """Mean target NLL against N for the oracle, the DP-SVGP and (if given) a DPConvCNP."""
    rng = check_rng(rng)
    n_tasks = check_positive_int("n_tasks", n_tasks)
    ns = np.asarray(ns, dtype=int)
    per: dict[str, list[np.ndarray]] = {"oracle": []}
    if dpsvgp:
        per["DP-SVGP"] = []
    if model is not None:
        per["DPConvCNP"] = []
    for n in ns:
        batch = sample_tasks(generator, n_tasks, rng, n_context=int(n), n_target=n_target,
                             epsilon=float(epsilon), delta=delta, exact=True)
        per["oracle"].append(oracle_nll(batch))
        if dpsvgp:
            vals = []
            for b in range(n_tasks):
                mean, std = dpsvgp_predict(batch.xc[b], batch.yc[b], batch.xt[b], epsilon, delta,
                                           rng, **(dpsvgp_kwargs or {}))
                vals.append(np.mean(gaussian_nll(batch.yt[b], mean, std)))
            per["DP-SVGP"].append(np.array(vals))
        if model is not None:
            mean, std = _convcnp_predict(model, batch, rng)
            per["DPConvCNP"].append(np.mean(gaussian_nll(batch.yt, mean, std), axis=1))
    return {k: MethodCurve(ns, np.array([v.mean() for v in vals]),
                           np.array([v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else np.nan
                                     for v in vals]))
            for k, vals in per.items()}


@dataclass(frozen=True)
class KungSplit:
    """One random context/target split of the normalised !Kung data."""

    xc: np.ndarray
    yc: np.ndarray
    xt: np.ndarray
    yt: np.ndarray


def kung_tasks(target: str, n_context: int, n_splits: int, rng: np.random.Generator
               ) -> list[KungSplit]:
    """Random splits of the !Kung data: age scaled to [−1, 1], ``target`` standardised.

    Needs the data file (``DPGP_AUDIT_DATA_DIR`` mirror or a download; see
    :mod:`dpgp_audit.datasets.kung`).
    """
    from dpgp_audit.datasets.kung import load_kung

    rng = check_rng(rng)
    data = load_kung()
    age = np.asarray(data.age, dtype=float)
    y = np.asarray(getattr(data, target), dtype=float)
    x = 2.0 * (age - age.min()) / (age.max() - age.min()) - 1.0
    y = (y - y.mean()) / y.std()
    n_context = check_positive_int("n_context", n_context)
    if n_context >= x.size:
        raise ValueError(f"n_context must be below the {x.size} rows")
    out = []
    for _ in range(check_positive_int("n_splits", n_splits)):
        perm = rng.permutation(x.size)
        c, t = perm[:n_context], perm[n_context:]
        out.append(KungSplit(x[c], y[c], x[t], y[t]))
    return out


def kung_sim_to_real(splits: list[KungSplit], epsilon: float, delta: float,
                     rng: np.random.Generator, *, model=None, dpsvgp: bool = True,
                     dpsvgp_kwargs: dict | None = None) -> dict[str, np.ndarray]:
    """Per-split mean target NLL of the DPConvCNP (if given) and the DP-SVGP on !Kung splits."""
    rng = check_rng(rng)
    out: dict[str, list[float]] = {}
    mu = gdp_mu(epsilon, delta)
    for s in splits:
        if model is not None:
            from dpgp_audit.neural.dpconvcnp import predict_numpy

            mean, std = predict_numpy(model, s.xc, s.yc, s.xt, mu, rng)
            out.setdefault("DPConvCNP", []).append(float(np.mean(gaussian_nll(s.yt, mean, std))))
        if dpsvgp:
            mean, std = dpsvgp_predict(s.xc, s.yc, s.xt, epsilon, delta, rng,
                                       **(dpsvgp_kwargs or {}))
            out.setdefault("DP-SVGP", []).append(float(np.mean(gaussian_nll(s.yt, mean, std))))
    return {k: np.array(v) for k, v in out.items()}


def deployment_times(n_context: int, rng: np.random.Generator, *, model=None,
                     epsilon: float = 1.0, delta: float = 1e-3, repeats: int = 3,
                     dpsvgp_steps: tuple[int, ...] = (50, 200)) -> dict[str, float]:
    """Seconds per task at meta-test time: one DPConvCNP forward pass vs DP-SVGP training."""
    rng = check_rng(rng)
    batch = sample_tasks("matern", 1, rng, n_context=n_context, n_target=64, epsilon=epsilon,
                         delta=delta)
    out: dict[str, float] = {}
    if model is not None:
        from dpgp_audit.neural.dpconvcnp import predict_numpy

        def run_cnp() -> None:
            predict_numpy(model, batch.xc[0], batch.yc[0], batch.xt[0], float(batch.mu[0]), rng)

        run_cnp()  # warm-up
        out["DPConvCNP forward"] = _best_time(run_cnp, repeats)
    for steps in dpsvgp_steps:
        _cached_noise(float(epsilon), float(delta), n_context, min(64, n_context), int(steps))

        def run_svgp(steps: int = steps) -> None:
            dpsvgp_predict(batch.xc[0], batch.yc[0], batch.xt[0], epsilon, delta, rng,
                           steps=steps)

        out[f"DP-SVGP ({steps} DP-SGD steps)"] = _best_time(run_svgp, repeats)
    return out


def _best_time(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return float(best)


