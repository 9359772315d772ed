"""DP-SVGP: a sparse variational GP trained by DP-SGD, the baseline of R (catalogue R.5; R App. D).

Model (R eqs. 61–63): ``f ~ GP(0, k)``, ``y_n | f ~ N(f(x_n), σ²)``, whitened
inducing variables ``u = L_z v`` at *public* inducing inputs ``Z`` (a fixed grid:
never chosen from the private data) and ``q(v) = N(m, S)``, ``S = L Lᵀ``. The
per-example expected log-likelihood is, with ``a_n = L_z⁻¹ k(Z, x_n)``,

    ℓ_n = −½ log(2πσ²) − [(y_n − a_nᵀ m)² + ||Lᵀ a_n||² + k(x_n, x_n) − ||a_n||²] / (2σ²),

and the ELBO is ``Σ_n ℓ_n − KL(N(m, S) || N(0, I))``. DP-SGD (Abadi et al. 2016)
trains ``(m, L, log σ²)``: each step draws a batch of fixed size ``B`` without
replacement, clips every per-example gradient of ``ℓ_n`` to norm ``C`` (the
gradients are closed-form and vectorised), sums them and adds
``N(0, (2 z C)² I)``; the KL gradient involves no data and is added exactly.

Privacy accounting uses dp-accounting's RDP accountant (a maintained library, a
core dependency of the kit) with the event
``SampledWithoutReplacement(n, B, Gaussian(z))`` composed over the steps under
the *replace-one* relation, the same whole-row substitution as the DPSetConv.
Under substitution the clipped-gradient sum moves by up to ``2C`` (one gradient
out, another in), so the noise standard deviation is ``z · 2C`` for noise
multiplier ``z`` — using ``z · C`` here would silently halve the protection.

Simplification (stated in the claim's note): the kernel hyperparameters are fixed
public values (R tunes their initial values on simulated data); only the
variational parameters and the noise variance are learned privately.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import linalg

from dpgp_audit._validation import (
    as_finite_array,
    check_delta,
    check_epsilon,
    check_positive_int,
    check_rng,
)
from dpgp_audit.contract import COST_CLASSES
from dpgp_audit.dataset import Dataset, check_dataset, clip_targets
from dpgp_audit.gp.kernels import Kernel
from dpgp_audit.gp.linalg import psd_cholesky
from dpgp_audit.privacy.claims import ApproxDP, whole_rows
from dpgp_audit.privacy.float_release import gaussian_tv_bound, iid_gaussian_release

__all__ = [
    "DPSGDSVGPRelease",
    "DPSGDSVGP",
    "FittedDPSVGP",
    "calibrate_dpsgd_noise",
    "dpsgd_epsilon",
    "privatise_gradient_sum",
    "svgp_per_example_grads",
]


def _accounting():
    try:
        import dp_accounting
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("DP-SGD accounting needs dp-accounting, a core dependency of "
                          "dpgp_audit: pip install 'dp-accounting==0.6.0'") from exc
    return dp_accounting


def _dpsgd_event(noise_multiplier: float, n: int, batch_size: int, steps: int):
    dpa = _accounting()
    step = dpa.SampledWithoutReplacementDpEvent(
        source_dataset_size=n, sample_size=batch_size,
        event=dpa.GaussianDpEvent(noise_multiplier))
    return dpa.SelfComposedDpEvent(step, steps)


def _check_schedule(n: int, batch_size: int, steps: int) -> tuple[int, int, int]:
    n = check_positive_int("n", n)
    batch_size = check_positive_int("batch_size", batch_size)
    steps = check_positive_int("steps", steps)
    if batch_size > n:
        raise ValueError(f"batch_size ({batch_size}) must not exceed the dataset size ({n})")
    return n, batch_size, steps


def dpsgd_epsilon(noise_multiplier: float, n: int, batch_size: int, steps: int,
                  delta: float) -> float:
    """ε of DP-SGD from dp-accounting's RDP accountant (replace-one, sampling w/o replacement).

    ``noise_multiplier`` is the noise standard deviation divided by the L2
    sensitivity of the clipped-gradient sum under substitution (``2C``).
    """
    n, batch_size, steps = _check_schedule(n, batch_size, steps)
    delta = check_delta(delta)
    z = float(noise_multiplier)
    if not (math.isfinite(z) and z > 0):
        raise ValueError(f"noise_multiplier must be finite and > 0, got {noise_multiplier!r}")
    dpa = _accounting()
    acc = dpa.rdp.RdpAccountant(orders=_ORDERS,
                                neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(_dpsgd_event(z, n, batch_size, steps))
    return float(acc.get_epsilon(delta))


def calibrate_dpsgd_noise(epsilon: float, delta: float, n: int, batch_size: int,
                          steps: int) -> float:
    """The smallest noise multiplier z (found by dp-accounting's calibration) with ε(z) ≤ ε.

    The value returned is re-checked with the accountant and nudged upwards if the
    bisection tolerance left it a hair too small: never under-noised.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    n, batch_size, steps = _check_schedule(n, batch_size, steps)
    dpa = _accounting()
    z = float(dpa.calibrate_dp_mechanism(
        lambda: dpa.rdp.RdpAccountant(orders=_ORDERS,
                                      neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE),
        lambda zz: _dpsgd_event(zz, n, batch_size, steps),
        epsilon, delta,
        bracket_interval=dpa.LowerEndpointAndGuess(1e-3, 1.0), tol=1e-7))
    while dpsgd_epsilon(z, n, batch_size, steps, delta) > epsilon:
        z *= 1.0 + 1e-6
    return z


_ORDERS = tuple(sorted(set(np.round(np.linspace(1.1, 10.9, 50), 10).tolist())
                       | set(range(2, 33))))
"""RDP orders for the accountant. Orders above 32 make the without-replacement bound slow
and are never optimal at the budgets used here; fewer orders can only make ε larger."""


def _param_index(M: int, diag: bool) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the free entries of L: the lower triangle, or only the diagonal."""
    return (np.arange(M), np.arange(M)) if diag else np.tril_indices(M)


def svgp_per_example_grads(A: np.ndarray, kdiag: np.ndarray, y: np.ndarray, m: np.ndarray,
                           L: np.ndarray, log_noise: float, *, diag: bool = False
                           ) -> tuple[np.ndarray, np.ndarray]:
    """Per-example ``ℓ_n`` and its gradient w.r.t. ``(m, free(L), log σ²)``, vectorised.

    Parameters
    ----------
    A
        Whitened cross-covariances ``a_n`` as columns, shape (M, B).
    kdiag
        ``k(x_n, x_n)``, shape (B,).
    y
        Targets, shape (B,).
    m, L, log_noise
        Variational mean (M,), lower-triangular factor (M, M) and log noise variance.
    diag
        ``True``: L is diagonal (M free entries) rather than lower triangular.

    Returns
    -------
    ell, grads
        ``ell`` (B,) and ``grads`` (B, M + n_L + 1), ``n_L`` = M or M(M+1)/2.
    """
    noise = math.exp(log_noise)
    r = y - A.T @ m                                     # (B,)
    LtA = L.T @ A                                       # (M, B)
    v = np.einsum("ij,ij->j", LtA, LtA)                 # ||Lᵀ a_n||²
    q = kdiag - np.einsum("ij,ij->j", A, A)             # k_nn − ||a_n||²
    e = r * r + v + q
    ell = -0.5 * math.log(2.0 * math.pi) - 0.5 * log_noise - e / (2.0 * noise)
    g_m = (r / noise)[:, None] * A.T                    # (B, M)
    # d/dL of −||Lᵀa||²/(2σ²) = −a (Lᵀa)ᵀ / σ², restricted to the lower triangle
    g_L_full = -np.einsum("ib,jb->bij", A, LtA) / noise  # (B, M, M)
    rows, cols = _param_index(L.shape[0], diag)
    g_L = g_L_full[:, rows, cols]
    g_s = -0.5 + e / (2.0 * noise)
    return ell, np.concatenate([g_m, g_L, g_s[:, None]], axis=1)


def privatise_gradient_sum(G: np.ndarray, clip_norm: float, noise_multiplier: float,
                           rng: np.random.Generator) -> np.ndarray:
    """DP-SGD's release: clip each row of ``G`` to norm C, sum, add N(0, (2 z C)² I).

    Under whole-row substitution the clipped sum moves by at most ``2C``, so the
    noise standard deviation is ``noise_multiplier × 2C`` (the accountant's
    noise multiplier is relative to this sensitivity).
    """
    norms = np.linalg.norm(G, axis=1)
    clipped = G * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))[:, None]
    noise = rng.normal(0.0, noise_multiplier * 2.0 * clip_norm, size=G.shape[1])
    sd = noise_multiplier * 2.0 * clip_norm
    if sd <= 0:  # the non-private test hook (noise multiplier 0): nothing to round
        return clipped.sum(axis=0) + noise
    # the noisy sum is rounded to the public grid of its sd (issue 20 §4); the clipped sum
    # of B rows is at most B C in every coordinate (the float-safety rule there)
    fr = iid_gaussian_release(np.full(G.shape[1], sd))
    fr.check_domain(clip_norm, np.full(G.shape[1], float(G.shape[0])), what="clip_norm")
    return fr.round(clipped.sum(axis=0), noise)


def _kl_grad(m: np.ndarray, L: np.ndarray, diag: bool) -> tuple[float, np.ndarray]:
    """KL(N(m, LLᵀ) || N(0, I)) and its gradient w.r.t. (m, free(L), log σ²) (last entry 0)."""
    M = m.size
    diag_L = np.diag(L)
    kl = 0.5 * (np.sum(L * L) + m @ m - M - 2.0 * np.sum(np.log(np.abs(diag_L))))
    gL = L - np.diag(1.0 / diag_L)
    rows, cols = _param_index(M, diag)
    return float(kl), np.concatenate([m, gL[rows, cols], [0.0]])


@dataclass(frozen=True)
class FittedDPSVGP:
    """A DP-SVGP after training: predictive distribution and the privacy spent."""

    kernel: Kernel
    inducing: np.ndarray
    m: np.ndarray
    L: np.ndarray
    noise_variance: float
    claim: ApproxDP
    noise_multiplier: float

    def predict(self, Xs: np.ndarray, *, include_noise: bool = True
                ) -> tuple[np.ndarray, np.ndarray]:
        """Predictive mean and variance at ``Xs`` (with observation noise unless told not to)."""
        Xs = as_finite_array("Xs", Xs, ndim=(1, 2))
        Xs = Xs[:, None] if Xs.ndim == 1 else Xs
        Lz = psd_cholesky(self.kernel(self.inducing), jitter=1e-8)
        A = linalg.solve_triangular(Lz, self.kernel(self.inducing, Xs), lower=True)
        mean = A.T @ self.m
        LtA = self.L.T @ A
        var = self.kernel.diag(Xs) - np.sum(A * A, axis=0) + np.sum(LtA * LtA, axis=0)
        var = np.maximum(var, 1e-12)
        return mean, var + (self.noise_variance if include_noise else 0.0)


@dataclass(frozen=True, eq=False)
class DPSGDSVGP:
    """R.5: DP-SGD training of a whitened SVGP with public kernel and inducing inputs.

    Parameters
    ----------
    kernel
        Public kernel (hyperparameters fixed, e.g. tuned on simulated data).
    inducing
        Public inducing inputs, shape (M, D) — a fixed grid, never the private X.
    epsilon, delta
        The (ε, δ) target; the noise multiplier is calibrated by the accountant.
    clip_norm
        Per-example gradient clipping bound C.
    batch_size, steps, learning_rate
        DP-SGD schedule (Adam on the privatised gradient).
    y_bound
        Targets are clipped to ``[−y_bound, y_bound]`` (a per-row pre-processing
        step; the guarantee does not depend on it).
    init_noise_variance
        Initial σ².
    diag_covariance
        Learn a diagonal ``L`` (M noisy coordinates instead of M(M+1)/2: less
        DP noise per step at the cost of a cruder posterior covariance).
    """

    kernel: Kernel
    inducing: np.ndarray
    epsilon: float
    delta: float
    clip_norm: float = 1.0
    batch_size: int = 32
    steps: int = 300
    learning_rate: float = 0.05
    y_bound: float = 5.0
    init_noise_variance: float = 0.1
    diag_covariance: bool = True

    def __post_init__(self) -> None:
        Z = as_finite_array("inducing", self.inducing, ndim=(1, 2))
        Z = Z[:, None] if Z.ndim == 1 else Z
        Z = Z.copy()
        Z.setflags(write=False)
        object.__setattr__(self, "inducing", Z)
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        for name in ("clip_norm", "learning_rate", "y_bound", "init_noise_variance"):
            v = float(getattr(self, name))
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be finite and > 0, got {v!r}")
        check_positive_int("batch_size", self.batch_size)
        check_positive_int("steps", self.steps)

    def claim(self) -> ApproxDP:
        """(ε, δ)-DP under whole-row substitution (RDP accountant, replace-one)."""
        return ApproxDP(
            epsilon=self.epsilon, delta=self.delta, relation=whole_rows(self.y_bound),
            note=("DP-SGD: per-example clipping at C = "
                  f"{self.clip_norm:g}, batches of {self.batch_size} without replacement, "
                  f"{self.steps} steps, dp-accounting RDP (replace-one); kernel hyperparameters "
                  "and inducing inputs are public; targets clipped to |y| <= y_bound"),
            float_tv=self.float_tv())

    def float_tv(self) -> float:
        """τ of the rounded noisy gradient sums: steps × parameters iid normals, any sd."""
        M = self.inducing.shape[0]
        rows, _ = _param_index(M, self.diag_covariance)
        return int(self.steps) * (M + len(rows) + 1) * gaussian_tv_bound(1, 1)

    def fit(self, data: Dataset, rng: np.random.Generator, *,
            _noise_multiplier: float | None = None) -> FittedDPSVGP:
        """Train by DP-SGD; returns the fitted model with its claim.

        ``_noise_multiplier`` is a test hook (e.g. 0 for the non-private optimiser);
        any value other than the calibrated one voids the claim.
        """
        rng = check_rng(rng)
        if data.dim != self.inducing.shape[1]:
            raise ValueError(f"data has {data.dim} input dimension(s) but the inducing inputs "
                             f"have {self.inducing.shape[1]}")
        n = data.n
        B = min(int(self.batch_size), n)
        if _noise_multiplier is None:
            z = calibrate_dpsgd_noise(self.epsilon, self.delta, n, B, int(self.steps))
        else:
            z = float(_noise_multiplier)
        y, _ = clip_targets(data.y, self.y_bound, clip=True)
        X = data.X
        Z = self.inducing
        M = Z.shape[0]
        Lz = psd_cholesky(self.kernel(Z), jitter=1e-8)
        A_all = linalg.solve_triangular(Lz, self.kernel(Z, X), lower=True)  # (M, n)
        kdiag = self.kernel.diag(X)
        diag = bool(self.diag_covariance)
        rows, cols = _param_index(M, diag)
        # parameters θ = (m, tril(L), log σ²); start at the prior q(v) = N(0, I)
        theta = np.concatenate([np.zeros(M), np.eye(M)[rows, cols],
                                [math.log(self.init_noise_variance)]])
        adam_m = np.zeros_like(theta)
        adam_v = np.zeros_like(theta)
        b1, b2, eps_adam = 0.9, 0.999, 1e-8
        C = float(self.clip_norm)
        for step in range(int(self.steps)):
            m = theta[:M]
            L = np.zeros((M, M))
            L[rows, cols] = theta[M:-1]
            idx = rng.choice(n, size=B, replace=False)
            _, G = svgp_per_example_grads(A_all[:, idx], kdiag[idx], y[idx], m, L, theta[-1],
                                          diag=diag)
            noisy = privatise_gradient_sum(G, C, z, rng)
            _, g_kl = _kl_grad(m, L, diag)  # data-independent: exact
            grad = noisy / B - g_kl / n  # ascent direction of ELBO / n
            adam_m = b1 * adam_m + (1 - b1) * grad
            adam_v = b2 * adam_v + (1 - b2) * grad * grad
            mhat = adam_m / (1 - b1 ** (step + 1))
            vhat = adam_v / (1 - b2 ** (step + 1))
            theta = theta + self.learning_rate * mhat / (np.sqrt(vhat) + eps_adam)
            theta[-1] = float(np.clip(theta[-1], math.log(1e-4), math.log(1e2)))
        L = np.zeros((M, M))
        L[rows, cols] = theta[M:-1]
        return FittedDPSVGP(kernel=self.kernel, inducing=Z, m=theta[:M].copy(), L=L,
                            noise_variance=math.exp(theta[-1]), claim=self.claim(),
                            noise_multiplier=z)


# ----------------------------------------------------------------------------- contract, registry

_calibrated_noise = functools.lru_cache(maxsize=64)(calibrate_dpsgd_noise)
"""``calibrate_dpsgd_noise`` memoised on its (hashable) arguments: it is a pure function,
and one calibration costs about a second, while an audit trains thousands of models."""


@dataclass(frozen=True, eq=False)
class DPSGDSVGPRelease:
    """R.5 as a :class:`~dpgp_audit.contract.Mechanism`: the parameters DP-SGD releases.

    One release is the trained ``(m, free(L), log σ²)`` of :meth:`DPSGDSVGP.fit`
    (everything else is public). :meth:`sample` trains ``n`` models
    independently on the same generator; the noise multiplier is calibrated once
    per dataset size (the same calibration ``fit`` performs) and reused.
    """

    #: Each draw is a DP-SGD training run (A.6's draw caps).
    declared_cost_per_draw_s: ClassVar[float] = COST_CLASSES["solve"]

    model: DPSGDSVGP

    @property
    def claim(self) -> ApproxDP:
        """The model's (ε, δ) claim; it rests on dp-accounting's RDP accountant."""
        base = self.model.claim()
        return ApproxDP(epsilon=base.epsilon, delta=base.delta, relation=base.relation,
                        proven=base.proven,
                        note=base.note + "; the epsilon is dp-accounting's RDP bound for "
                                         "sampled-without-replacement Gaussian steps (R uses "
                                         "Opacus' PRV accountant instead)",
                        float_tv=base.float_tv)

    def noise_multiplier(self, n_rows: int) -> float:
        """The calibrated noise multiplier for a dataset of ``n_rows`` rows."""
        m = self.model
        n_rows = check_positive_int("n_rows", n_rows)
        return _calibrated_noise(float(m.epsilon), float(m.delta), n_rows,
                                 min(int(m.batch_size), n_rows), int(m.steps))

    @property
    def output_dim(self) -> int:
        """M + (M or M(M+1)/2) + 1."""
        M = self.model.inducing.shape[0]
        return M + _param_index(M, bool(self.model.diag_covariance))[0].size + 1

    def unpack(self, fit: FittedDPSVGP) -> np.ndarray:
        """The released vector ``(m, free(L), log σ²)`` of one fitted model."""
        M = fit.m.size
        rows, cols = _param_index(M, bool(self.model.diag_covariance))
        return np.concatenate([fit.m, fit.L[rows, cols], [math.log(fit.noise_variance)]])

    def sample(self, data: Dataset, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` independent DP-SGD trainings, shape (n, :attr:`output_dim`).

        Not vectorised across runs (each run is a sequential optimiser); keep the
        configuration small for audits (few steps, small N).
        """
        data = check_dataset(data)
        n = check_positive_int("n", n)
        rng = check_rng(rng)
        z = self.noise_multiplier(data.n)
        out = np.empty((n, self.output_dim))
        with _one_blas_thread():  # tiny matrices: threaded BLAS only adds contention
            for j in range(n):
                # z is exactly the calibration fit() would compute: the claim stands
                out[j] = self.unpack(self.model.fit(data, rng, _noise_multiplier=z))
        return out


def _one_blas_thread():
    """``threadpoolctl.threadpool_limits(1)``: speed only (3-4x on these tiny solves)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


def _build_dpsgd_svgp(data: Dataset, *, epsilon: float, delta: float, y_bound: float = 1.0,
                      n_inducing: int = 4, domain: tuple[float, float] = (0.0, 10.0),
                      lengthscale: float = 2.0, steps: int = 5, batch_size: int = 10,
                      clip_norm: float = 1.0, learning_rate: float = 0.05) -> DPSGDSVGPRelease:
    """Registry factory: a tiny DP-SGD run (public Z grid, fixed EQ kernel)."""
    from dpgp_audit.gp.kernels import EQ

    Z = np.linspace(domain[0], domain[1], n_inducing)[:, None]
    return DPSGDSVGPRelease(DPSGDSVGP(EQ(lengthscale=lengthscale), Z, epsilon, delta,
                                   clip_norm=clip_norm, batch_size=batch_size, steps=steps,
                                   learning_rate=learning_rate, y_bound=y_bound))
