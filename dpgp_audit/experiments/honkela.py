"""The experiments of paper H as pure functions (H §6; used by notebook 03 and the benchmark).

* :func:`sinc_fits` — H Fig. 1: DP-GP fits of sin(2x)/(2x) for several ε.
* :func:`calibration_experiment` — H Fig. 2: coverage of α-credible intervals of
  DP-GP (noise-aware, H eq. 15) versus the naive posterior, over σ, ε and α.
* :func:`calibration_bias_decomposition` — why H Fig. 2's DP-GP stays overconfident:
  the squared error of its mean split into the bias of the regulariser λ and the DP
  noise, against the variance the corrections S₂ add (same setting as Fig. 2).
* :func:`hyperparameter_recovery` — H Fig. 3: how often H Alg. 2 picks each
  (σ, ℓ) of the 3 × 3 grid.
* :func:`outputs_only_input_leak` — the contrast with outputs-only methods
  (S18/S21): a release calibrated for public X has unbounded privacy loss when
  one *input* changes, while DP-SVGP's loss stays within its claim.

Every function takes an explicit ``rng`` and returns plain arrays/dataclasses;
plotting lives in :mod:`dpgp_audit.viz.honkela`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from dpgp_audit._validation import check_positive_int, check_rng
from dpgp_audit.dataset import Dataset
from dpgp_audit.datasets.synthetic import gp_draw, sinc_data
from dpgp_audit.gp.kernels import EQ
from dpgp_audit.gp.regression import ExactGP
from dpgp_audit.gp.svgp import QU
from dpgp_audit.methods.honkela.bounds import upper_dim, upper_unvec
from dpgp_audit.methods.honkela.dpsvgp import DPSVGPStats
from dpgp_audit.methods.honkela.hyperparameters import Candidate, DPHyperparameterSearch
from dpgp_audit.methods.honkela.posterior import noise_aware_qu
from dpgp_audit.privacy.calibrate import calibrate_gaussian
from dpgp_audit.privacy.gdp import gdp_epsilon

__all__ = [
    "H_PAPER_FIG3_EPSILONS",
    "BiasDecomposition",
    "calibration_bias_decomposition",
    "true_choice_rates",
    "CalibrationResult",
    "InputLeak",
    "SincFit",
    "calibration_experiment",
    "hyperparameter_recovery",
    "outputs_only_input_leak",
    "sinc_fits",
]


@dataclass(frozen=True)
class SincFit:
    """One panel of H Fig. 1."""

    epsilon: float
    V: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    Z: np.ndarray
    u_mean: np.ndarray
    lam: float
    inflations: int


def sinc_fits(epsilons: list[float], rng: np.random.Generator, *, n: int = 1024,
              n_inducing: int = 9, noise_std: float = 0.1, lengthscale: float = 1.0,
              delta: float = 1e-4, y_bound: float = 1.5, n_grid: int = 200,
              correction: str = "paper", rk_method: str = "grid1d-paper"
              ) -> tuple[Dataset, list[SincFit]]:
    """H §6.1 / Fig. 1: one dataset, one DP-GP fit per ε (targets clipped to ±``y_bound``).

    R_k from H eq. (7) by default (1-D grid of inducing inputs).
    """
    rng = check_rng(rng)
    data = sinc_data(n, noise_std, rng)
    Z = np.linspace(-3, 3, n_inducing)[:, None]
    V = np.linspace(-4, 4, n_grid)
    fits = []
    for eps in epsilons:
        mech = DPSVGPStats(Z=Z, kernel=EQ(lengthscale=lengthscale), y_bound=y_bound,
                           epsilon=eps, delta=delta, clip=True, rk_method=rk_method)
        q = mech.fit(data, noise_std**2, rng, correction=correction,  # type: ignore[arg-type]
                     on_not_pd="inflate")
        mean, var = mech.predict(q, V)
        fits.append(SincFit(eps, V, mean, np.sqrt(var), Z[:, 0], q.m, q.lam, q.inflations))
    return data, fits


@dataclass(frozen=True)
class CalibrationResult:
    """Coverage[method, σ, ε, α, repeat] of central α-intervals on held-out noisy targets."""

    coverage: np.ndarray
    methods: tuple[str, ...]
    sigmas: tuple[float, ...]
    epsilons: tuple[float, ...]
    alphas: tuple[float, ...]
    inflations: int

    def mean_and_se(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean coverage and its standard error over repeats."""
        c = self.coverage
        return c.mean(axis=-1), c.std(axis=-1, ddof=1) / math.sqrt(c.shape[-1])


def calibration_experiment(rng: np.random.Generator, *, n_repeats: int = 40,
                           sigmas: tuple[float, ...] = (0.05, 0.1, 0.3),
                           epsilons: tuple[float, ...] = (0.5, 1.0, 3.0, 10.0),
                           alphas: tuple[float, ...] = (0.5, 0.8, 0.9, 0.95),
                           n_total: int = 1024, n_inducing: int = 15, delta: float = 1e-4,
                           y_bound: float = 3.0, methods: tuple[str, ...] = ("paper", "none"),
                           rk_method: str = "grid1d-paper") -> CalibrationResult:
    """H §6.2 / Fig. 2: f ~ GP(0, EQ(ℓ=1)) on [−4, 4], half train/test, 15 Z on [−3.5, 3.5].

    Per repeat one function draw is shared by all σ; per (σ, ε) one release is
    shared by all posterior variants (``"paper"`` = DP-GP, ``"none"`` = naive,
    ``"symmetric"`` = exact linearisation), so the comparison is paired.
    Default grid: 3 σ × 4 ε × 4 α = 48 scenarios.
    """
    rng = check_rng(rng)
    n_repeats = check_positive_int("n_repeats", n_repeats)
    kern = EQ(lengthscale=1.0)
    Z = np.linspace(-3.5, 3.5, n_inducing)[:, None]
    X = rng.uniform(-4, 4, size=(n_total, 1))
    F = gp_draw(kern, X, rng, size=n_repeats)               # (repeats, n_total)
    half = n_total // 2
    Xtr, Xte = X[:half], X[half:]
    z = stats.norm.ppf(0.5 + np.asarray(alphas) / 2.0)      # central interval half-widths
    cov = np.zeros((len(methods), len(sigmas), len(epsilons), len(alphas), n_repeats))
    mechs = {eps: DPSVGPStats(Z=Z, kernel=kern, y_bound=y_bound, epsilon=eps, delta=delta,
                              clip=True, rk_method=rk_method) for eps in epsilons}
    m0 = mechs[epsilons[0]]
    Kzz = np.asarray(m0.Kzz)
    Kxz = kern(Xtr, Z)
    d = n_inducing
    inflations = 0
    for r in range(n_repeats):
        for si, s in enumerate(sigmas):
            y = F[r] + s * rng.standard_normal(n_total)
            ytr = np.clip(y[:half], -y_bound, y_bound)
            A = Kxz.T @ ytr
            B = Kxz.T @ Kxz
            for ei, eps in enumerate(epsilons):
                mech = mechs[eps]
                A_n = A + mech.sigma_a * rng.standard_normal(d)
                B_n = B + upper_unvec(mech.sigma_b * rng.standard_normal(upper_dim(d)), d)
                for mi, meth in enumerate(methods):
                    q = noise_aware_qu(Kzz, A_n, B_n, s * s, mech.sigma_a, mech.sigma_b,
                                       correction=meth, on_not_pd="inflate")  # type: ignore[arg-type]
                    inflations += q.inflations
                    mean, var = mech.predict(QU(q.m, q.S), Xte)
                    sd = np.sqrt(var + s * s)
                    inside = np.abs(y[half:] - mean)[:, None] <= z[None, :] * sd[:, None]
                    cov[mi, si, ei, :, r] = inside.mean(axis=0)
    return CalibrationResult(cov, tuple(methods), tuple(sigmas), tuple(epsilons), tuple(alphas),
                             inflations)


@dataclass(frozen=True)
class BiasDecomposition:
    """Mean over test points and repeats, per ε (H Fig. 2's setting, one σ).

    Attributes
    ----------
    epsilons
        The ε values (the figure's, plus any far beyond it).
    bias_sq
        Squared difference between the mean with λ (no DP noise) and the non-private mean:
        the bias of the regulariser, which no correction term models.
    noise_sq
        Squared difference the DP noise on (A, B) adds to the mean (given λ).
    added_var
        Predictive variance the corrections S₂,₁ + S₂,₂ add (H eqs. 11–14).
    sigma, n_train, n_test, n_repeats
        The setting.
    """

    epsilons: tuple[float, ...]
    bias_sq: np.ndarray
    noise_sq: np.ndarray
    added_var: np.ndarray
    sigma: float
    n_train: int
    n_test: int
    n_repeats: int


def calibration_bias_decomposition(rng: np.random.Generator, *, sigma: float = 0.05,
                                   epsilons: tuple[float, ...] = (0.5, 1.0, 3.0, 10.0, 1e4),
                                   n_repeats: int = 8, n_total: int = 1024,
                                   n_inducing: int = 15, delta: float = 1e-4,
                                   y_bound: float = 3.0,
                                   rk_method: str = "grid1d-paper") -> BiasDecomposition:
    """Split the DP-GP mean's squared error into λ's bias and the DP noise (H §6.2 setting).

    Same data as :func:`calibration_experiment`: f ~ GP(0, EQ(ℓ = 1)) at ``n_total``
    uniform inputs on [−4, 4], half for training and half for testing, 15 inducing
    inputs on [−3.5, 3.5], observation noise ``sigma``. For each repeat and ε: one
    release, the DP-GP posterior (H eq. 14 corrections, λ inflated if needed); the
    same λ on the noise-free statistics (the bias); and λ = 0 without DP (the
    non-private posterior).
    """
    rng = check_rng(rng)
    n_repeats = check_positive_int("n_repeats", n_repeats)
    kern = EQ(lengthscale=1.0)
    Z = np.linspace(-3.5, 3.5, n_inducing)[:, None]
    X = rng.uniform(-4, 4, size=(n_total, 1))
    F = gp_draw(kern, X, rng, size=n_repeats)
    half = n_total // 2
    Kxz = kern(X[:half], Z)
    d = n_inducing
    rows = np.zeros((len(epsilons), n_repeats, 3))
    for ei, eps in enumerate(epsilons):
        mech = DPSVGPStats(Z=Z, kernel=kern, y_bound=y_bound, epsilon=eps, delta=delta,
                           clip=True, rk_method=rk_method)
        for r, f in enumerate(F):
            y = np.clip(f + sigma * rng.standard_normal(n_total), -y_bound, y_bound)
            A0, B0 = Kxz.T @ y[:half], Kxz.T @ Kxz
            An = A0 + mech.sigma_a * rng.standard_normal(d)
            Bn = B0 + upper_unvec(mech.sigma_b * rng.standard_normal(upper_dim(d)), d)
            s2 = sigma * sigma
            q = noise_aware_qu(mech.Kzz, An, Bn, s2, mech.sigma_a, mech.sigma_b,
                               on_not_pd="inflate")
            q_bias = noise_aware_qu(mech.Kzz, A0, B0, s2, mech.sigma_a, mech.sigma_b,
                                    correction="none", lam=q.lam)
            q_free = noise_aware_qu(mech.Kzz, A0, B0, s2, mech.sigma_a, mech.sigma_b,
                                    correction="none", lam=0.0)
            m_dp, v_dp = mech.predict(QU(q.m, q.S), X[half:])
            m_b, _ = mech.predict(QU(q_bias.m, q_bias.S), X[half:])
            m_0, v_0 = mech.predict(QU(q_free.m, q_free.S), X[half:])
            rows[ei, r] = (np.mean((m_b - m_0) ** 2), np.mean((m_dp - m_b) ** 2),
                           np.mean(v_dp - v_0))
    mean = rows.mean(axis=1)
    return BiasDecomposition(tuple(float(e) for e in epsilons), mean[:, 0], mean[:, 1],
                             mean[:, 2], float(sigma), half, n_total - half, n_repeats)


def hyperparameter_recovery(epsilons: tuple[float, ...], n_repeats: int,
                            rng: np.random.Generator, *, n: int = 2048, gamma: float = 0.01,
                            delta_tot: float = 1e-4, noise_std: float = 0.1,
                            sigmas: tuple[float, ...] = (0.1 / 3, 0.1, 0.3),
                            lengthscales: tuple[float, ...] = (1 / 3, 1.0, 3.0),
                            n_inducing: int = 9, y_bound: float = 1.5,
                            rk_method: str = "grid1d-paper") -> np.ndarray:
    """H §6.3 / Fig. 3: counts[ε, σ index, ℓ index] of the candidate chosen by H Alg. 2.

    Sinc data (N = ``n``, noise 0.1) split evenly into training and validation.
    A run that accepts no candidate is not counted.
    """
    rng = check_rng(rng)
    cands = [Candidate(EQ(lengthscale=ell), s) for s in sigmas for ell in lengthscales]
    Z = np.linspace(-3, 3, n_inducing)[:, None]
    counts = np.zeros((len(epsilons), len(sigmas), len(lengthscales)), dtype=int)
    for ei, eps in enumerate(epsilons):
        search = DPHyperparameterSearch(Z=Z, candidates=tuple(cands), y_bound=y_bound,
                                        epsilon_tot=eps, delta_tot=delta_tot, gamma=gamma,
                                        n_train=n // 2, clip=True, rk_method=rk_method)
        for _ in range(n_repeats):
            data = sinc_data(n, noise_std, rng)
            res = search.run(data, rng)
            if res.index >= 0:
                counts[ei, res.index // len(lengthscales), res.index % len(lengthscales)] += 1
    return counts


@dataclass(frozen=True)
class InputLeak:
    """Exact privacy loss of moving one input x_i, for an outputs-only release and for DP-SVGP.

    ``variance_change`` is the largest change of the (noise-free) predictive
    variance that outputs-only methods publish with their mean: any non-zero
    change is a deterministic difference, i.e. infinite privacy loss for the input.
    """

    claimed_epsilon: float
    delta: float
    outputs_only_mu: float
    outputs_only_epsilon: float
    variance_change: float
    dpsvgp_mu: float
    dpsvgp_epsilon: float
    Xs: np.ndarray
    var0: np.ndarray
    var1: np.ndarray
    x_old: float
    x_new: float

    @property
    def variance_epsilon(self) -> float:
        """Privacy loss of publishing the predictive variance: inf if it moved at all."""
        return math.inf if self.variance_change > 0 else 0.0


def outputs_only_input_leak(rng: np.random.Generator, *, n: int = 200, epsilon: float = 1.0,
                            delta: float = 1e-5, y_bound: float = 1.0, x_new: float = 5.5,
                            noise_std: float = 0.1, n_test: int = 25) -> InputLeak:
    """What a release calibrated for *public* X reveals when an input moves (S18/S21 vs H).

    The outputs-only release is the GP posterior mean C(X) y at test points plus
    N(0, σ² I), σ calibrated to the label sensitivity 2 R_y max_i ‖c_i‖ (the
    S18-style proof with X public). Moving one input x_i by ``shift`` (a
    whole-row neighbour that the outputs-only claim does not cover) to ``x_new``,
    outside the data but inside the prediction range, changes the mean by far
    the mean by an amount no proof covers and moves the variance
    deterministically (infinite loss); DP-SVGP's release on the same pair stays
    within its claim. Mean losses are exact Gaussian (μ-GDP) profiles.
    """
    rng = check_rng(rng)
    data = sinc_data(n, noise_std, rng)
    y = np.clip(data.y, -y_bound, y_bound)
    Xs = np.linspace(-6, 6, n_test)[:, None]
    kern = EQ(lengthscale=1.0)
    gp = ExactGP(kern, noise_std**2)
    fit0 = gp.fit(data.X, y)
    C0 = fit0.mean_weights(Xs)
    sens = 2 * y_bound * float(np.max(np.linalg.norm(C0, axis=0)))
    sigma = calibrate_gaussian(epsilon, delta, sens).sigma
    i = int(np.argmax(np.abs(y)))
    X1 = np.array(data.X)
    X1[i, 0] = x_new
    fit1 = gp.fit(X1, y)
    C1 = fit1.mean_weights(Xs)
    mu_oo = float(np.linalg.norm(C0 @ y - C1 @ y)) / sigma
    var0 = fit0.predict(Xs)[1]
    var1 = fit1.predict(Xs)[1]
    mech = DPSVGPStats(Z=np.linspace(-3, 3, 9)[:, None], kernel=kern, y_bound=y_bound,
                       epsilon=epsilon, delta=delta, clip=True)
    d0 = Dataset(data.X, y)
    d1 = Dataset(X1, y)
    diff = mech.mean(d0) - mech.mean(d1)
    mu_h = float(np.sqrt(np.sum(diff**2 / np.diag(mech.cov(d0)))))
    return InputLeak(epsilon, delta, mu_oo, gdp_epsilon(delta, mu_oo),
                     float(np.max(np.abs(var0 - var1))), mu_h,
                     gdp_epsilon(delta, mu_h) if mu_h > 0 else 0.0, Xs[:, 0], var0, var1,
                     float(data.X[i, 0]), float(x_new))


H_PAPER_FIG3_EPSILONS = (1.0, 3.0, 10.0, 30.0)
"""The ε_tot values of H Fig. 3 (100 repeats each, γ = 0.01, N = 2048)."""


def true_choice_rates(counts: np.ndarray, true_index: tuple[int, int] = (1, 1)
                      ) -> tuple[np.ndarray, np.ndarray]:
    """(k, n) per ε from :func:`hyperparameter_recovery`'s counts: how many runs picked the
    true (σ, ℓ) = (0.1, 1.0) and how many runs accepted a candidate at all.
    """
    c = np.asarray(counts)
    if c.ndim != 3:
        raise ValueError(f"counts must have shape (n_eps, n_sigma, n_ell), got {c.shape}")
    return c[:, true_index[0], true_index[1]].astype(int), c.sum(axis=(1, 2)).astype(int)
