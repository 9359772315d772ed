"""Meta-learning tasks for the DPConvCNP (R App. E), in numpy (no torch needed).

Three generative processes, on inputs scaled to ``[-1, 1]`` (the sim-to-real
setting of R App. E.2; the grid window is ``[-2, 2]``):

* ``"eq"`` — GP with an EQ kernel, σ_v = 1, lengthscale ℓ ~ U[0.25, 1], noise σ_n ~ U[0.2, 0.6];
* ``"matern"`` — GP with a Matérn-3/2 kernel, σ_v = 1, ℓ ~ U[0.5, 2], σ_n ~ U[0.3, 0.8]
  (R App. E.2; the main text says U[0.2, 0.6] — the appendix values are used);
* ``"sawtooth"`` — the truncated sawtooth of R App. E.1 (direction ±1, phase
  U[0, 2π]), frequency 1/τ ~ U[0.4, 2.5] (R's U[0.2, 1.25] on a domain twice as
  wide), noise σ_n = 0.1;
* ``"mix"`` — one of the three per task.

Each task also draws its privacy budget ε ~ U[0.9, 4] at δ = 1e-3 (R §5.1) and
carries μ = μ(ε, δ). For the GP generators :func:`oracle_predict` is the exact
Bayes predictor (the non-private oracle of R Fig. 6); for the sawtooth the NLL of
the observation noise is a lower bound (R §5.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.datasets.synthetic import gp_draw, sawtooth_function
from dpgp_audit.gp.kernels import EQ, Kernel, Matern32
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.privacy.gdp import gdp_mu

__all__ = ["GENERATORS", "TaskBatch", "gaussian_nll", "oracle_predict", "sample_tasks"]

GENERATORS = ("eq", "matern", "sawtooth", "mix")


@dataclass(frozen=True)
class TaskBatch:
    """A padded batch of regression tasks.

    ``xc``, ``yc``, ``mask`` have shape (B, N_max) (``mask`` is 1 for real context
    points); ``xt``, ``yt`` (B, T); ``epsilon``, ``mu`` (B,); ``kernels`` and
    ``noise_std`` describe each task's generator (``kernels[b]`` is ``None`` for a
    sawtooth task).
    """

    xc: np.ndarray
    yc: np.ndarray
    mask: np.ndarray
    xt: np.ndarray
    yt: np.ndarray
    epsilon: np.ndarray
    mu: np.ndarray
    delta: float
    kernels: tuple[Kernel | None, ...]
    noise_std: np.ndarray
    generators: tuple[str, ...]

    @property
    def n_context(self) -> np.ndarray:
        """Number of context points per task."""
        return self.mask.sum(axis=1).astype(int)


def _fast_gp_draw(kernel: Kernel, x: np.ndarray, noise: float, rng: np.random.Generator,
                  x_range: tuple[float, float], resolution: int = 128) -> np.ndarray:
    """Approximate draw for training: the path on a fine grid, linearly interpolated.

    About 20× faster than an exact draw at a few hundred points; the interpolation
    error (grid spacing 2/128 against lengthscales ≥ 0.25) is far below the noise.
    """
    g = np.linspace(x_range[0], x_range[1], resolution)
    K = kernel(g[:, None])
    L = linalg.cholesky(K + 1e-8 * np.eye(resolution), lower=True)
    f = L @ rng.standard_normal(resolution)
    return np.interp(x, g, f) + noise * rng.standard_normal(x.size)


def _one_task(gen: str, n: int, n_target: int, rng: np.random.Generator,
              x_range: tuple[float, float], exact: bool
              ) -> tuple[np.ndarray, np.ndarray, Kernel | None, float]:
    x = rng.uniform(x_range[0], x_range[1], size=n + n_target)
    if gen == "eq":
        kernel: Kernel | None = EQ(float(rng.uniform(0.25, 1.0)), 1.0)
        noise = float(rng.uniform(0.2, 0.6))
    elif gen == "matern":
        kernel = Matern32(float(rng.uniform(0.5, 2.0)), 1.0)
        noise = float(rng.uniform(0.3, 0.8))
    elif gen == "sawtooth":
        period = 1.0 / float(rng.uniform(0.4, 2.5))
        f = sawtooth_function(x, period=period, direction=float(rng.choice([-1.0, 1.0])),
                              phase=float(rng.uniform(0.0, 2 * math.pi)))
        noise = 0.1
        return x, f + noise * rng.standard_normal(x.size), None, noise
    else:
        raise ValueError(f"generator must be one of {GENERATORS}, got {gen!r}")
    if exact:
        y = gp_draw(kernel, x, rng, noise_std=noise)
    else:
        y = _fast_gp_draw(kernel, x, noise, rng, x_range)
    return x, y, kernel, noise


def sample_tasks(generator: str, batch_size: int, rng: np.random.Generator, *,
                 n_context: tuple[int, int] | int = (1, 300), n_target: int = 64,
                 x_range: tuple[float, float] = (-1.0, 1.0),
                 epsilon: tuple[float, float] | float = (0.9, 4.0),
                 delta: float = 1e-3, exact: bool = True) -> TaskBatch:
    """Draw ``batch_size`` tasks (context size, ε and generator parameters per task).

    ``exact=False`` draws GP paths on a fine grid and interpolates (training only).
    """
    if generator not in GENERATORS:
        raise ValueError(f"generator must be one of {GENERATORS}, got {generator!r}")
    rng = check_rng(rng)
    B = check_positive_int("batch_size", batch_size)
    T = check_positive_int("n_target", n_target)
    lo, hi = (n_context, n_context) if isinstance(n_context, int) else n_context
    ns = rng.integers(lo, hi + 1, size=B)
    e_lo, e_hi = (epsilon, epsilon) if isinstance(epsilon, int | float) else epsilon
    eps = rng.uniform(e_lo, e_hi, size=B)
    n_max = int(ns.max())
    xc = np.zeros((B, n_max))
    yc = np.zeros((B, n_max))
    mask = np.zeros((B, n_max))
    xt = np.zeros((B, T))
    yt = np.zeros((B, T))
    kernels: list[Kernel | None] = []
    noise = np.zeros(B)
    gens: list[str] = []
    for b in range(B):
        gen = str(rng.choice(GENERATORS[:3])) if generator == "mix" else generator
        x, y, k, s = _one_task(gen, int(ns[b]), T, rng, x_range, exact)
        n = int(ns[b])
        xc[b, :n], yc[b, :n], mask[b, :n] = x[:n], y[:n], 1.0
        xt[b], yt[b] = x[n:], y[n:]
        kernels.append(k)
        noise[b] = s
        gens.append(gen)
    mu = np.array([gdp_mu(float(e), delta) for e in eps])
    return TaskBatch(xc, yc, mask, xt, yt, eps, mu, float(delta), tuple(kernels), noise,
                     tuple(gens))


def gaussian_nll(y: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """Per-point negative log-likelihood of ``y`` under N(mean, std²)."""
    var = np.asarray(std, dtype=float) ** 2
    return 0.5 * np.log(2 * math.pi * var) + 0.5 * (np.asarray(y) - mean) ** 2 / var


def oracle_predict(batch: TaskBatch, b: int) -> tuple[np.ndarray, np.ndarray]:
    """The non-private Bayes predictor of task ``b``: mean and std of y at its targets.

    Exact GP posterior with the true kernel and noise for GP tasks; for sawtooth
    tasks the true function is not recorded, so the bound ``N(y, σ_n²)`` is not a
    predictor and ``ValueError`` is raised — use :func:`oracle_nll` instead.
    """
    k = batch.kernels[b]
    if k is None:
        raise ValueError("the sawtooth process has no closed-form Bayes predictor")
    n = int(batch.n_context[b])
    gp = ExactGP(k, batch.noise_std[b] ** 2).fit(batch.xc[b, :n, None], batch.yc[b, :n])
    mean, var = gp.predict(batch.xt[b, :, None])
    return mean, np.sqrt(var + batch.noise_std[b] ** 2)


def oracle_nll(batch: TaskBatch) -> np.ndarray:
    """Mean target NLL per task of the oracle (GP tasks) or its lower bound (sawtooth)."""
    out = np.empty(batch.xc.shape[0])
    for b in range(out.size):
        if batch.kernels[b] is None:
            out[b] = 0.5 * math.log(2 * math.pi * batch.noise_std[b] ** 2) + 0.5
        else:
            mean, std = oracle_predict(batch, b)
            out[b] = float(np.mean(gaussian_nll(batch.yt[b], mean, std)))
    return out
