"""Pure functions behind the course's widgets (notebooks 01, 03 and 05).

Each explorer has two halves:

* a **pure computation** (``*_state``) returning a frozen dataclass of numbers, and
* a **pure plot** (``*_explorer``) that calls it and draws a new
  :class:`matplotlib.figure.Figure` (no ``pyplot`` state, no backend choice).

Each notebook calls the explorer once in a plain cell with its parameters (what
papermill and nbval check), then hands the same function to
:func:`dpgp_audit.viz.widgets.slider_widget` in a cell tagged ``nbval-ignore-output``.

* :func:`cloaking_explorer` (notebook 01, S18.2): lengthscale, d and ε → the cloaking
  noise covariance σ²M and one DP sample path. What no static figure shows: the
  covariance is shaped by the *kernel and the inputs only*, so a longer lengthscale
  spreads the noise along smooth directions, while d and ε only rescale it.
* :func:`ceiling_explorer` (notebook 05, A.3): samples per side → the largest ε any
  black-box audit could certify and the verdict it can reach for a claim
  (``INCONCLUSIVE`` below the ceiling, never "private").
* :func:`svgp_ratio_explorer` (notebook 03, H.1): σ_a/σ_b → the exact sensitivity and
  H eq. (6), and the noise each statistic receives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from dpgp_audit.viz.style import (
    NEUTRAL,
    RESERVE,
    VERDICT_COLOURS,
    heatmap_limits,
    method_colour,
)

__all__ = [
    "CeilingState",
    "CloakingState",
    "RatioState",
    "ceiling_explorer",
    "ceiling_state",
    "cloaking_explorer",
    "cloaking_state",
    "svgp_ratio_explorer",
    "svgp_ratio_state",
]


# ---- notebook 01: cloaking (S18.2) ----------------------------------------------------------


@dataclass(frozen=True)
class CloakingState:
    """What the cloaking widget draws (all arrays on the test grid)."""

    grid: np.ndarray
    mean: np.ndarray
    """Non-DP posterior mean (the noise-free release C y)."""
    noise_cov: np.ndarray
    """The DP noise covariance σ² M."""
    sample: np.ndarray
    """One DP release: mean + N(0, σ² M)."""
    sigma: float
    """The scale σ = c(δ) Δ d / ε of the calibrated noise."""
    rank: int
    """The rank of M (noise lives only in span{c_i})."""


def cloaking_state(X: np.ndarray, y: np.ndarray, grid: np.ndarray, *, lengthscale: float,
                   d: float, epsilon: float, delta: float, kernel_variance: float,
                   noise_variance: float, rng: np.random.Generator,
                   method: str = "analytic") -> CloakingState:
    """Cloak an exact GP's posterior mean at ``grid`` and draw one release (S18 §3).

    Parameters
    ----------
    X, y
        Public inputs (n,) or (n, 1) and the private targets (n,), centred on a public value.
    grid
        Public test inputs (k,).
    lengthscale, kernel_variance, noise_variance
        The EQ kernel and Gaussian likelihood (all > 0).
    d
        Outputs-only bound: one target moves by at most ``d`` (> 0).
    epsilon, delta
        The (ε, δ) claim of the release.
    rng
        Generator for the DP noise.
    method
        Gaussian calibration (``"analytic"`` is valid at every ε).

    Returns
    -------
    CloakingState
    """
    from dpgp_audit.dataset import Dataset
    from dpgp_audit.gp.kernels import EQ
    from dpgp_audit.methods.s18.cloaking import CloakingGP

    for name, value in (("lengthscale", lengthscale), ("d", d), ("epsilon", epsilon),
                        ("kernel_variance", kernel_variance),
                        ("noise_variance", noise_variance)):
        if not (isinstance(value, int | float) and np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    X = np.asarray(X, dtype=float).reshape(len(y), -1)
    data = Dataset(X, np.asarray(y, dtype=float))
    cloak = CloakingGP(EQ(lengthscale=float(lengthscale), variance=float(kernel_variance)),
                       float(noise_variance), X, np.asarray(grid, dtype=float), float(d),
                       float(epsilon), float(delta), method=method)
    mean = cloak.mean(data)
    return CloakingState(grid=np.asarray(grid, dtype=float), mean=mean,
                         noise_cov=cloak.cov(data), sample=cloak.sample(data, 1, rng)[0],
                         sigma=float(cloak.mechanism.sigma),
                         rank=int(cloak.mechanism.solution.rank))


def cloaking_explorer(X: np.ndarray, y: np.ndarray, grid: np.ndarray, *, lengthscale: float,
                      d: float, epsilon: float, delta: float, kernel_variance: float,
                      noise_variance: float, rng: np.random.Generator, offset: float = 0.0,
                      ylim: tuple[float, float] | None = None, xlabel: str = "input",
                      ylabel: str = "output", unit: str = "") -> Figure:
    """Two panels: the noise covariance σ²M (heat map) and one DP release over the data.

    Arguments as :func:`cloaking_state`; ``offset`` is added back to targets and
    predictions for display (e.g. the public centre of the heights). ``xlabel`` and
    ``ylabel`` name the input and the output with their units (``"age (years)"``,
    ``"height (cm)"``); ``unit`` is the output's unit, for the covariance scale (cm²).
    """
    st = cloaking_state(X, y, grid, lengthscale=lengthscale, d=d, epsilon=epsilon, delta=delta,
                        kernel_variance=kernel_variance, noise_variance=noise_variance, rng=rng)
    fig = Figure(figsize=(11.0, 4.0), layout="constrained")
    left, right = fig.subplots(1, 2)
    lo, hi = heatmap_limits(st.noise_cov, pad=0.0)
    bound = max(abs(lo), abs(hi))  # symmetric scale: sign of a covariance matters
    g = st.grid
    im = left.imshow(st.noise_cov, origin="lower", cmap="RdBu_r", vmin=-bound, vmax=bound,
                     extent=(g[0], g[-1], g[0], g[-1]))
    fig.colorbar(im, ax=left, label="covariance of the DP noise"
                 + (f" ({unit}²)" if unit else ""))
    left.set(xlabel=f"test {xlabel}", ylabel=f"test {xlabel}",
             title=f"σ²M: ℓ = {lengthscale:g}, d = {d:g}, ε = {epsilon:g} (rank {st.rank})")
    colour = method_colour("cloaking")
    sd = np.sqrt(np.clip(np.diag(st.noise_cov), 0.0, None))
    right.plot(np.ravel(X), np.asarray(y) + offset, ".", ms=3, color=NEUTRAL, label="data")
    right.plot(g, st.mean + offset, color=method_colour("non-dp"), lw=2,
               label="posterior mean (no DP)")
    right.fill_between(g, st.mean + offset - sd, st.mean + offset + sd, color=colour, alpha=0.2,
                       label="DP noise ±1 sd")
    right.plot(g, st.sample + offset, color=colour, lw=1.5, label="one DP release")
    if ylim is not None:
        right.set_ylim(*ylim)
    right.set(xlabel=xlabel, ylabel=ylabel, title=f"cloaking, ({epsilon:g}, {delta:g})-DP")
    right.legend(frameon=False, fontsize=7)
    return fig


# ---- notebook 05: the epsilon ceiling of a black-box audit (A.3) ----------------------------


@dataclass(frozen=True)
class CeilingState:
    """The largest certifiable ε at n samples per side, and what that allows."""

    n: int
    ceiling: float
    """ε a perfect distinguisher certifies at ``n`` (Clopper–Pearson at level α)."""
    claimed_epsilon: float
    true_epsilon: float
    verdict: str
    """``"VIOLATION possible"`` when true ε > claim and the ceiling exceeds the claim,
    else ``"INCONCLUSIVE"`` (the claim is above the ceiling) or ``"NO_EVIDENCE"``."""
    reason: str


def ceiling_state(n: int, *, claimed_epsilon: float, true_epsilon: float, alpha: float,
                  delta: float = 0.0) -> CeilingState:
    """What a black-box audit with ``n`` draws per side can conclude about a claim.

    Parameters
    ----------
    n
        Samples per side used for certification (≥ 1).
    claimed_epsilon
        The ε the mechanism claims (> 0).
    true_epsilon
        The mechanism's actual ε (≥ 0; known for the planted bugs).
    alpha
        The audit's failure probability, in (0, 1).
    delta
        The claim's δ (the ceiling subtracts it from the hit rate).

    Returns
    -------
    CeilingState
        The verdict is the best *possible* one: even a perfect test cannot certify
        more than the ceiling, and a mechanism that meets its claim can at most give
        ``NO_EVIDENCE`` — which is never a proof of privacy.
    """
    from dpgp_audit.audit.stats import epsilon_ceiling

    if not (isinstance(n, int | np.integer) and n >= 1):
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if not claimed_epsilon > 0:
        raise ValueError(f"claimed_epsilon must be > 0, got {claimed_epsilon!r}")
    if not true_epsilon >= 0:
        raise ValueError(f"true_epsilon must be >= 0, got {true_epsilon!r}")
    ceiling = epsilon_ceiling(int(n), alpha, delta)
    if ceiling <= claimed_epsilon:
        verdict, reason = "INCONCLUSIVE", (
            f"the ceiling {ceiling:.2f} is below the claim {claimed_epsilon:g}: no test at "
            "this n can refute it, whatever the mechanism does")
    elif true_epsilon > claimed_epsilon:
        verdict, reason = "VIOLATION possible", (
            f"the ceiling allows certifying up to min(true ε, ceiling) = "
            f"{min(true_epsilon, ceiling):.2f} > claim {claimed_epsilon:g}; whether a real "
            "test gets there depends on its power at this n")
    else:
        verdict, reason = "NO_EVIDENCE", (
            "the mechanism meets its claim, so no test finds a violation; "
            "that is still not a proof of privacy")
    return CeilingState(int(n), float(ceiling), float(claimed_epsilon), float(true_epsilon),
                        verdict, reason)


def ceiling_explorer(n: int, *, claimed_epsilon: float, true_epsilon: float, alpha: float,
                     delta: float = 0.0, n_range: tuple[int, int] = (10, 10**7)) -> Figure:
    """The ε ceiling against n (log axis), the claim, the true ε and the reachable verdict."""
    from dpgp_audit.audit.stats import epsilon_ceiling

    st = ceiling_state(n, claimed_epsilon=claimed_epsilon, true_epsilon=true_epsilon,
                       alpha=alpha, delta=delta)
    ns = np.unique(np.geomspace(n_range[0], n_range[1], 60).astype(int))
    ceil = np.array([epsilon_ceiling(int(m), alpha, delta) for m in ns])
    fig = Figure(figsize=(7.0, 4.0), layout="constrained")
    ax = fig.add_subplot()
    ax.plot(ns, ceil, color="k", lw=2, label=f"ε ceiling (α = {alpha:g})")
    ax.axhline(claimed_epsilon, color=NEUTRAL, ls="--", label=f"claimed ε = {claimed_epsilon:g}")
    ax.axhline(true_epsilon, color=VERDICT_COLOURS["VIOLATION"], ls=":",
               label=f"true ε = {true_epsilon:g}")
    key = "VIOLATION" if st.verdict.startswith("VIOLATION") else st.verdict
    ax.plot([st.n], [st.ceiling], "o", ms=10, color=VERDICT_COLOURS[key])
    ax.set(xscale="log", xlabel="samples per side n", ylabel="ε",
           title=f"n = {st.n:,}: ceiling {st.ceiling:.2f} → {st.verdict}")
    ax.text(0.02, 0.97, st.reason, transform=ax.transAxes, va="top", fontsize=8, wrap=True)
    ax.legend(frameon=False, fontsize=8, loc="lower right")
    return fig


# ---- notebook 03: the sigma_a / sigma_b ratio of the DP-SVGP release (H.1) ------------------


@dataclass(frozen=True)
class RatioState:
    """Sensitivities and noise scales of the H.1 release at one ratio c = σ_a/σ_b."""

    ratio: float
    exact: float
    """The exact sensitivity of [A; c·b̂] under whole-row substitution."""
    paper: float
    """H eq. (6) as printed (valid, loose when c² < R_y²/(2R_k²))."""
    threshold: float
    """The ratio sqrt(R_y²/(2R_k²)) below which eq. (6) is loose."""
    sigma_a: float
    """Noise on each entry of A (analytic calibration of the exact sensitivity)."""
    sigma_b: float
    """Noise on each entry of b̂: σ_a / c."""


def svgp_ratio_state(ratio: float, *, y_bound: float, rk: float, epsilon: float,
                     delta: float) -> RatioState:
    """Sensitivities (exact and H eq. 6) and noise scales at ``ratio`` = σ_a/σ_b.

    Parameters
    ----------
    ratio
        c = σ_a/σ_b (> 0): how the noise is shared between A and B.
    y_bound, rk
        R_y (|y| ≤ R_y) and R_k (‖k(Z, x)‖ ≤ R_k for every x), both > 0.
    epsilon, delta
        The claim the analytic Gaussian mechanism is calibrated for.
    """
    from dpgp_audit.methods.honkela.bounds import dpsvgp_sensitivity
    from dpgp_audit.privacy.calibrate import analytic_gaussian_sigma

    exact = float(dpsvgp_sensitivity(y_bound, rk, ratio, "exact"))
    paper = float(dpsvgp_sensitivity(y_bound, rk, ratio, "paper"))
    sigma_a = float(analytic_gaussian_sigma(epsilon, delta, exact))
    return RatioState(float(ratio), exact, paper, float(np.sqrt(y_bound**2 / (2 * rk**2))),
                      sigma_a, sigma_a / float(ratio))


def svgp_ratio_explorer(ratio: float, *, y_bound: float, rk: float, epsilon: float,
                        delta: float, ratio_range: tuple[float, float] = (0.05, 20.0)) -> Figure:
    """Left: Δ (exact, eq. 6) against c with the loose region shaded. Right: σ_a and σ_b."""
    st = svgp_ratio_state(ratio, y_bound=y_bound, rk=rk, epsilon=epsilon, delta=delta)
    cs = np.geomspace(*ratio_range, 120)
    states = [svgp_ratio_state(float(c), y_bound=y_bound, rk=rk, epsilon=epsilon, delta=delta)
              for c in cs]
    fig = Figure(figsize=(11.0, 4.0), layout="constrained")
    left, right = fig.subplots(1, 2)
    left.axvspan(ratio_range[0], st.threshold, color=NEUTRAL, alpha=0.15,
                 label="eq. (6) loose: c² < R_y²/(2R_k²)")
    left.plot(cs, [s.exact for s in states], color="k", lw=2, label="exact Δ")
    # a bound, not a method: a reserve colour (the orange is DP-SGD SVGP's in the course)
    left.plot(cs, [s.paper for s in states], color=RESERVE[0], ls="--",
              label="H eq. (6)")
    left.axvline(st.ratio, color=NEUTRAL, lw=1)
    left.set(xscale="log", yscale="log", xlabel="c = σ_a/σ_b", ylabel="sensitivity Δ",
             title=f"c = {st.ratio:.3g}: exact {st.exact:.3g}, eq. (6) {st.paper:.3g}")
    left.legend(frameon=False, fontsize=8)
    right.plot(cs, [s.sigma_a for s in states], color=method_colour("dp-gp (honkela)"), lw=2,
               label="σ_a (noise on A = Σ y_i k_i)")
    right.plot(cs, [s.sigma_b for s in states], color=method_colour("naive"), lw=2,
               label="σ_b (noise on B = Σ k_i k_iᵀ)")
    right.axvline(st.ratio, color=NEUTRAL, lw=1)
    right.set(xscale="log", yscale="log", xlabel="c = σ_a/σ_b", ylabel="noise sd",
              title=f"(ε, δ) = ({epsilon:g}, {delta:g}): σ_a {st.sigma_a:.3g}, "
                    f"σ_b {st.sigma_b:.3g}")
    right.legend(frameon=False, fontsize=8)
    return fig
