"""Synthetic data generators used by the papers' experiments.

Every generator takes an explicit ``rng: numpy.random.Generator`` (never a
global seed) and returns a :class:`~dpgp_audit.dataset.Dataset` (or arrays for
:func:`gp_draw`). The noise-free target functions are exposed as pure
functions so that notebooks can plot the truth.

- :func:`sinc_data` — H §6.1 / Fig. 1: f(x) = sin(2x) / (2x) on [−4, 4], σ = 0.1.
- :func:`gp_draw` — a sample path of a zero-mean GP (R App. E "Gaussian generative process").
- :func:`sawtooth` — R App. E: truncated Fourier series of a sawtooth wave with
  random direction and phase.
- :func:`stripes_2d` — S21 §6.5 / Fig. 7: noisy diagonal binary stripes with a
  density gradient (dense at the bottom, sparse at the top).
"""

from __future__ import annotations

import numpy as np

from dpgp_audit._validation import (
    as_finite_array,
    check_positive_float,
    check_positive_int,
    check_rng,
)
from dpgp_audit.dataset import Dataset
from dpgp_audit.gp.kernels import Kernel, as_inputs

__all__ = [
    "gp_draw",
    "sawtooth",
    "sawtooth_function",
    "sinc_data",
    "sinc_function",
    "stripe_labels",
    "stripes_2d",
    "stripes_grid",
]


def _nonneg(name: str, value: object) -> float:
    v = float(value)  # type: ignore[arg-type]
    if not np.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return v


def _interval(name: str, value: tuple[float, float]) -> tuple[float, float]:
    lo, hi = (float(v) for v in value)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"{name} must be a finite interval (low, high) with low < high, "
                         f"got {value!r}")
    return lo, hi


# --------------------------------------------------------------------------- sinc (H Fig. 1)
def sinc_function(x: object) -> np.ndarray:
    """``sin(2x) / (2x)`` with value 1 at x = 0 (H §6.1)."""
    x = as_finite_array("x", x)
    return np.sinc(2.0 * x / np.pi)  # np.sinc(t) = sin(πt) / (πt)


def sinc_data(n: int, noise_std: float, rng: np.random.Generator, *,
              x_range: tuple[float, float] = (-4.0, 4.0)) -> Dataset:
    """H Fig. 1 setting: x ~ U[x_range], y = sin(2x)/(2x) + N(0, noise_std²).

    The paper uses n = 1024, noise_std = 0.1 on [−4, 4].
    """
    n = check_positive_int("n", n)
    noise_std = _nonneg("noise_std", noise_std)
    rng = check_rng(rng)
    lo, hi = _interval("x_range", x_range)
    x = rng.uniform(lo, hi, size=n)
    y = sinc_function(x) + noise_std * rng.standard_normal(n)
    return Dataset(x[:, None], y, name=f"sinc(n={n}, noise_std={noise_std:g})")


# --------------------------------------------------------------------------- GP draws
def gp_draw(kernel: Kernel, X: object, rng: np.random.Generator, noise_std: float = 0.0, *,
            size: int | None = None, return_latent: bool = False
            ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Sample f ~ GP(0, kernel) at inputs X and return y = f + N(0, noise_std²).

    Sampling uses the symmetric eigendecomposition of K(X, X) (round-off
    negative eigenvalues clipped to 0), so singular kernel matrices (duplicate
    or very close inputs) need no jitter.

    Parameters
    ----------
    kernel, X
        Covariance function and inputs (n,) or (n, D).
    rng
        Random generator.
    noise_std
        Standard deviation of independent Gaussian observation noise.
    size
        ``None``: one draw of shape (n,); an int: ``size`` independent draws, (size, n).
    return_latent
        Return ``(y, f)``: the observations and the noise-free values (same shape).
    """
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a Kernel, got {type(kernel).__name__}")
    Xa = as_inputs("X", X)
    rng = check_rng(rng)
    noise_std = _nonneg("noise_std", noise_std)
    m = 1 if size is None else check_positive_int("size", size)
    K = kernel(Xa)
    lam, Q = np.linalg.eigh(0.5 * (K + K.T))
    if lam.size and lam[0] < -1e-8 * max(lam[-1], 1.0):
        raise ValueError(f"kernel matrix is not PSD (smallest eigenvalue {lam[0]:.3g})")
    root = Q * np.sqrt(np.maximum(lam, 0.0))  # root @ root.T == K
    n = Xa.shape[0]
    f = rng.standard_normal((m, n)) @ root.T
    y = f + noise_std * rng.standard_normal((m, n)) if noise_std > 0 else f.copy()
    if size is None:
        f, y = f[0], y[0]
    return (y, f) if return_latent else y


# --------------------------------------------------------------------------- sawtooth (R App. E)
def sawtooth_function(x: object, *, period: float, direction: float = 1.0, phase: float = 0.0,
                      n_terms: int = 2) -> np.ndarray:
    """Truncated sawtooth Fourier series of R App. E.

    ``f(x) = (2/π) Σ_{m=1}^{n_terms} sin(2π m d x / τ + φ) / m`` with period τ,
    direction d ∈ {−1, 1} and phase φ. R truncates at ``n_terms = 2`` so that a
    (periodic-kernel) GP baseline can fit it; larger ``n_terms`` approach the
    discontinuous wave (for φ = 0).
    """
    x = as_finite_array("x", x)
    period = check_positive_float("period", period)
    if direction not in (-1, 1, -1.0, 1.0):
        raise ValueError(f"direction must be -1 or 1, got {direction!r}")
    n_terms = check_positive_int("n_terms", n_terms)
    phase = float(phase)
    if not np.isfinite(phase):
        raise ValueError(f"phase must be finite, got {phase!r}")
    m = np.arange(1, n_terms + 1)
    arg = 2.0 * np.pi * np.multiply.outer(float(direction) * x / period, m) + phase
    return (2.0 / np.pi) * np.sum(np.sin(arg) / m, axis=-1)


def sawtooth(n: int, rng: np.random.Generator, *, period: float = 1.0, noise_std: float = 0.1,
             n_terms: int = 2, x_range: tuple[float, float] = (-2.0, 2.0),
             direction: float | None = None, phase: float | None = None) -> Dataset:
    """R App. E sawtooth task: x ~ U[x_range], y = sawtooth_function(x) + N(0, noise_std²).

    Direction d (uniform on {−1, 1}) and phase φ ~ U[0, 2π] are drawn from
    ``rng`` unless given; the dataset's name records them. R draws contexts on
    [−2, 2] and uses 1/τ ∈ {0.25, 0.5, 1} (or 1/τ ~ U[0.2, 1.25]); it states a
    fixed noise level without giving its value, so ``noise_std`` is a parameter.
    """
    n = check_positive_int("n", n)
    rng = check_rng(rng)
    noise_std = _nonneg("noise_std", noise_std)
    lo, hi = _interval("x_range", x_range)
    d = float(rng.choice([-1.0, 1.0])) if direction is None else float(direction)
    phi = float(rng.uniform(0.0, 2.0 * np.pi)) if phase is None else float(phase)
    x = rng.uniform(lo, hi, size=n)
    f = sawtooth_function(x, period=period, direction=d, phase=phi, n_terms=n_terms)
    y = f + noise_std * rng.standard_normal(n)
    return Dataset(x[:, None], y,
                   name=f"sawtooth(period={period:g}, direction={d:+g}, phase={phi:.6g})")


# --------------------------------------------------------------------------- stripes (S21 Fig. 7)
def stripe_labels(X: object, stripe_width: float = 3.5) -> np.ndarray:
    """Class (0/1) of diagonal stripes of width ``stripe_width`` perpendicular to (1, 1).

    Label = ⌊((x₁ + x₂)/√2) / stripe_width⌋ mod 2.
    """
    Xa = as_inputs("X", X)
    if Xa.shape[1] != 2:
        raise ValueError(f"X must have 2 columns, got {Xa.shape[1]}")
    w = check_positive_float("stripe_width", stripe_width)
    s = (Xa[:, 0] + Xa[:, 1]) / np.sqrt(2.0)
    return (np.floor(s / w) % 2).astype(float)


def stripes_2d(n: int, rng: np.random.Generator, *, extent: float = 10.0,
               stripe_width: float = 3.5, label_noise: float = 0.1,
               density_gradient: bool = True) -> Dataset:
    """S21 §6.5 / Fig. 7: 2-D binary classification with noisy diagonal stripes.

    Inputs lie in [0, extent]²: x₁ uniform; x₂ uniform, or with
    ``density_gradient`` drawn from extent · Beta(1, 2) (density falling
    linearly from the bottom edge to zero at the top), mimicking the paper's
    dense-bottom / sparse-top training set. Labels (0/1) come from
    :func:`stripe_labels`, each flipped independently with probability
    ``label_noise``. The paper uses n = 200 and an EQ kernel with lengthscale
    3.5; it does not give the stripe width or noise level, so both are
    parameters. The default width 3.5 splits the paper's 10 × 10 test grid
    (:func:`stripes_grid`) into exactly 50 points of each class, as S21 reports.
    """
    n = check_positive_int("n", n)
    rng = check_rng(rng)
    extent = check_positive_float("extent", extent)
    p = float(label_noise)
    if not (0.0 <= p <= 0.5):
        raise ValueError(f"label_noise must lie in [0, 0.5], got {label_noise!r}")
    x1 = rng.uniform(0.0, extent, size=n)
    x2 = extent * (rng.beta(1.0, 2.0, size=n) if density_gradient
                   else rng.uniform(0.0, 1.0, size=n))
    X = np.column_stack([x1, x2])
    y = stripe_labels(X, stripe_width)
    flip = rng.uniform(size=n) < p
    y = np.where(flip, 1.0 - y, y)
    return Dataset(X, y, name=f"stripes_2d(n={n}, label_noise={p:g})")


def stripes_grid(n_side: int = 10, *, extent: float = 10.0, stripe_width: float = 3.5
                 ) -> Dataset:
    """Noise-free test set on an ``n_side × n_side`` grid over [0, extent]² (S21 §6.5).

    Grid points sit at cell centres; labels from :func:`stripe_labels`.
    """
    n_side = check_positive_int("n_side", n_side)
    extent = check_positive_float("extent", extent)
    g = (np.arange(n_side) + 0.5) * extent / n_side
    G1, G2 = np.meshgrid(g, g, indexing="xy")
    X = np.column_stack([G1.ravel(), G2.ravel()])
    return Dataset(X, stripe_labels(X, stripe_width), name=f"stripes_grid({n_side}x{n_side})")
