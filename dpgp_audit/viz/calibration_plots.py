"""Plots for the DP basics notebook: calibrations, privacy profiles, mechanism outputs.

Every function is pure: it takes numbers computed elsewhere (``dpgp_audit.privacy``),
draws them on a new :class:`matplotlib.figure.Figure` (or on ``ax`` if given) and
returns the figure. Nothing here touches ``pyplot``'s global state, so the
functions are safe in widgets, tests and scripts, and choose no backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dpgp_audit.viz.style import VERDICT_COLOURS, colours_for, method_colour

__all__ = [
    "calibration_explorer",
    "plot_calibrations",
    "plot_output_histograms",
    "plot_privacy_profiles",
    "plot_selection_frequencies",
    "plot_true_epsilon",
]

_METHOD_STYLE = {  # colours from the course palette (dpgp_audit.viz.style)
    "analytic": {"color": method_colour("analytic"), "linestyle": "-"},
    "gdp": {"color": method_colour("gdp"), "linestyle": (0, (4, 3))},
    "classical": {"color": method_colour("classical"), "linestyle": "-"},
    "hall": {"color": method_colour("hall"), "linestyle": "-."},
}


def _axes(ax: Axes | None, figsize: tuple[float, float] = (6.0, 4.0)) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def plot_calibrations(epsilons: Sequence[float], sigmas: Mapping[str, np.ndarray], *,
                      delta: float, ax: Axes | None = None) -> Figure:
    """σ/Δ against ε for several Gaussian calibrations, log–log.

    NaN entries (a calibration refused outside its proven range) leave a gap.
    The proven range ε ≤ 1 of the classical and Hall formulas is shaded.
    """
    fig, ax = _axes(ax)
    eps = np.asarray(epsilons, dtype=float)
    ax.axvspan(eps.min(), min(1.0, eps.max()), color="0.92", zorder=0,
               label="ε ≤ 1: classical/Hall proven")
    for method, sigma in sigmas.items():
        ax.plot(eps, sigma, label=method, linewidth=2, **_METHOD_STYLE.get(method, {}))
    ax.set(xscale="log", yscale="log", xlabel="ε", ylabel="noise σ / sensitivity Δ",
           title=f"Gaussian mechanism calibrations at δ = {delta:g}")
    ax.legend(frameon=False)
    return fig


def plot_privacy_profiles(epsilons: Sequence[float], profiles: Mapping[str, np.ndarray], *,
                          targets: Mapping[str, tuple[float, float]] | None = None,
                          ylim: tuple[float, float] = (1e-12, 1.5),
                          ax: Axes | None = None) -> Figure:
    """Privacy profiles δ(ε) (log scale), optionally with marked target points (ε, δ).

    ``ylim`` crops the tiny δ far out in the tails (they reach 1e-200 and would
    squash the interesting range).
    """
    fig, ax = _axes(ax)
    for label, deltas in profiles.items():
        ax.plot(epsilons, deltas, label=label, linewidth=2)
    for label, (e, d) in (targets or {}).items():
        ax.plot([e], [d], marker="o", color="k", linestyle="none", label=f"target {label}")
        ax.annotate(label, (e, d), textcoords="offset points", xytext=(6, 6))
    ax.set(yscale="log", ylim=ylim, xlabel="ε", ylabel="δ(ε)", title="Privacy profiles")
    ax.legend(frameon=False)
    return fig


def plot_true_epsilon(claimed: Sequence[float], true: Mapping[str, np.ndarray], *,
                      delta: float, ax: Axes | None = None) -> Figure:
    """True ε of calibrated mechanisms against the ε they were calibrated for.

    Points above the diagonal are privacy violations: the mechanism leaks more
    than claimed.
    """
    fig, ax = _axes(ax)
    claimed = np.asarray(claimed, dtype=float)
    ax.fill_between(claimed, claimed, claimed.max() * 10, color=VERDICT_COLOURS["VIOLATION"],
                    alpha=0.08, label="violation (true > claimed)")
    for label, eps_true in true.items():
        ax.plot(claimed, eps_true, label=label, linewidth=3, alpha=0.8,
                **_METHOD_STYLE.get(label, {}))
    # drawn last and dashed, so it stays visible where a curve (analytic) lies on it
    ax.plot(claimed, claimed, color="k", linewidth=1.3, linestyle=(0, (5, 3)), zorder=5,
            label="true = claimed")
    ax.set(xscale="log", yscale="log", xlabel="claimed ε", ylabel=f"true ε at δ = {delta:g}",
           ylim=(claimed.min() / 10, claimed.max() * 3), title="What the calibrations deliver")
    ax.legend(frameon=False)
    return fig


def plot_output_histograms(samples: Mapping[str, np.ndarray], *, bins: int = 60,
                           title: str = "", ax: Axes | None = None) -> Figure:
    """Overlaid density histograms of a mechanism's outputs on neighbouring datasets."""
    fig, ax = _axes(ax)
    values = [np.asarray(s, dtype=float).ravel() for s in samples.values()]
    edges = np.histogram_bin_edges(np.concatenate(values), bins=bins)
    for label, v in zip(samples, values, strict=True):
        ax.hist(v, bins=edges, density=True, histtype="stepfilled", alpha=0.45, label=label)
    ax.set(xlabel="released value (same unit as the query)", ylabel="density (per unit)",
           title=title)
    ax.legend(frameon=False)
    return fig


def plot_selection_frequencies(probabilities: Mapping[str, np.ndarray],
                               frequencies: Mapping[str, np.ndarray] | None = None, *,
                               candidates: Sequence[str] | None = None,
                               ax: Axes | None = None) -> Figure:
    """Exponential mechanism: exact selection probabilities (bars), sampled frequencies (dots)."""
    fig, ax = _axes(ax)
    k = len(next(iter(probabilities.values())))
    x = np.arange(k)
    width = 0.8 / max(1, len(probabilities))
    for j, (label, p) in enumerate(probabilities.items()):
        pos = x - 0.4 + width * (j + 0.5)
        ax.bar(pos, p, width=width, alpha=0.6, label=f"P(select), {label}", color=f"C{j}")
        if frequencies is not None and label in frequencies:
            ax.plot(pos, frequencies[label], "o", color=f"C{j}", markeredgecolor="k",
                    label=f"sampled, {label}")
    ax.set_xticks(x, candidates if candidates is not None else [str(i) for i in x])
    ax.set(xlabel="candidate", ylabel="probability of being selected",
           title="Exponential mechanism: exact probabilities (bars) and sampled frequencies")
    ax.legend(frameon=False)
    return fig


def calibration_explorer(epsilon: float, delta: float, sensitivity: float = 1.0) -> Figure:
    """Two panels for one (ε, δ): σ of every calibration, and the profile it buys.

    Left: σ of the four calibrations (a refused one is marked, not drawn).
    Right: the privacy profile δ(ε′) of the Gaussian mechanism with each σ,
    with the requested (ε, δ) marked — the analytic curve passes through it, the
    others lie below (more noise than needed). This is the function the
    notebook's ε/δ widget drives.
    """
    from dpgp_audit.privacy.calibration_table import calibration_sigmas, privacy_profile

    sigmas = {m: float(s[0]) for m, s in calibration_sigmas([epsilon], delta, sensitivity).items()}
    fig = Figure(figsize=(10.0, 4.0), layout="constrained")
    left, right = fig.subplots(1, 2)
    names = list(sigmas)
    fallback = colours_for(names)  # a calibration outside the palette gets a reserve colour
    for i, m in enumerate(names):
        s = sigmas[m]
        if np.isnan(s):
            left.text(i, 0.0, "refused\n(ε > 1)", ha="center", va="bottom",
                      color=VERDICT_COLOURS["VIOLATION"])
        else:
            left.bar(i, s, color=_METHOD_STYLE.get(m, {}).get("color", fallback[m]))
            left.text(i, s, f"{s:.3g}", ha="center", va="bottom")
    left.set_xticks(range(len(names)), names)
    left.set(xlabel="calibration", ylabel="σ",
             title=f"σ at ε = {epsilon:.3g}, δ = {delta:.1e}, Δ = {sensitivity:g}")
    grid = np.linspace(0.0, max(2.5 * epsilon, 1.0), 200)
    for m in names:
        if not np.isnan(sigmas[m]):
            right.plot(grid, privacy_profile(grid, sensitivity / sigmas[m]), label=m,
                       linewidth=2, **_METHOD_STYLE.get(m, {}))
    right.plot([epsilon], [delta], "ko", label="target (ε, δ)")
    right.set(yscale="log", ylim=(min(delta, 1e-3) / 1e3, 1.5), xlabel="ε′", ylabel="δ(ε′)",
              title="privacy profile of each calibrated σ")
    right.legend(frameon=False)
    return fig
