"""Plots for the DPConvCNP notebook (catalogue R.1–R.5).

Pure functions in the style of :mod:`dpgp_audit.viz.calibration_plots`: they take
numbers computed elsewhere, draw on a new :class:`~matplotlib.figure.Figure` (or
on ``ax``) and return the figure; no ``pyplot`` state is touched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dpgp_audit.viz.style import NEUTRAL, colours_for, method_colour

__all__ = [
    "plot_deployment_times",
    "plot_dpsetconv_release",
    "plot_functional_noise",
    "plot_grid_noise",
    "plot_nll_curves",
    "plot_predictive",
]


def _axes(ax: Axes | None, figsize: tuple[float, float] = (6.0, 4.0)) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def plot_functional_noise(curves, *, ax: Axes | None = None) -> Figure:
    """R Fig. 4: noise multiplier against ε, three analyses (a ``FunctionalNoiseCurves``)."""
    fig, ax = _axes(ax)
    ax.plot(curves.epsilon, curves.classical, label="classical (Hall et al.), ε ≤ 1", lw=2)
    ax.plot(curves.epsilon, curves.rdp, label="RDP (Jiang et al.)", lw=2, ls="--")
    ax.plot(curves.epsilon, curves.gdp, label="GDP (R Thm 4.1)", lw=2)
    ax.set(yscale="log", xlabel="privacy budget ε", ylabel="noise multiplier c (log scale)",
           title=f"Functional mechanism, Δ² = {curves.sensitivity_sq:g}, δ = {curves.delta:g}")
    ax.legend(frameon=False)
    return fig


def plot_grid_noise(axes_coords: Sequence[np.ndarray], draws: np.ndarray, *,
                    ax: Axes | None = None, title: str = "") -> Figure:
    """GP noise on a 1-D grid (several draws as lines) or a 2-D grid (one draw as an image)."""
    fig, ax = _axes(ax)
    draws = np.asarray(draws)
    if len(axes_coords) == 1:
        for i, d in enumerate(np.atleast_2d(draws)):
            ax.plot(axes_coords[0], d, lw=1, label=f"draw {i + 1}")
        ax.set(xlabel="x", ylabel="g(x)")
        ax.legend(frameon=False, fontsize="small")
    elif len(axes_coords) == 2:
        a0, a1 = axes_coords
        img = ax.imshow(draws.T, origin="lower", aspect="auto", cmap="RdBu_r",
                        extent=(a0[0], a0[-1], a1[0], a1[-1]))
        fig.colorbar(img, ax=ax, shrink=0.8, label="g(x₁, x₂)")
        ax.set(xlabel="x₁", ylabel="x₂")
    else:
        raise ValueError("plot_grid_noise draws 1-D or 2-D grids")
    ax.set_title(title)
    return fig


def plot_dpsetconv_release(grid_x: np.ndarray, clean: np.ndarray, released: np.ndarray,
                           xc: np.ndarray, yc: np.ndarray, *, clip_bound: float) -> Figure:
    """The two DPSetConv channels on a 1-D grid: noise-free vs released, with the data."""
    fig = Figure(figsize=(10.0, 3.6), layout="constrained")
    a0, a1 = fig.subplots(1, 2)
    for ax, k, name in ((a0, 0, "density r_d"), (a1, 1, "signal r_s")):
        ax.plot(grid_x, clean[k], color="k", lw=2, label="noise-free")
        ax.plot(grid_x, released[k], color=method_colour("dpconvcnp"), lw=1,
                label="released (DP)")
        ax.set(title=name, xlabel="x", ylabel=f"{name.split()[1]}(x)")
    a1.scatter(xc, np.clip(yc, -clip_bound, clip_bound), s=8, color=NEUTRAL, label="clipped y")
    a0.legend(frameon=False)
    a1.legend(frameon=False)
    return fig


def plot_nll_curves(curves: Mapping[str, object], *, ax: Axes | None = None,
                    title: str = "") -> Figure:
    """Mean NLL ± 2 standard errors (error bars) against N, one line per method."""
    fig, ax = _axes(ax)
    colours = colours_for(curves)
    for name, c in curves.items():
        ax.errorbar(c.ns, c.mean, yerr=2 * np.nan_to_num(c.sem), label=name, marker="o",
                    capsize=3, lw=2, color=colours[name])
    ax.set(xscale="log", xlabel="context size N (log scale)",
           ylabel="target NLL, nats per point (lower is better)", title=title)
    ax.legend(frameon=False)
    return fig


def plot_predictive(xc: np.ndarray | None, yc: np.ndarray | None, xs: np.ndarray,
                    predictions: Mapping[str, tuple[np.ndarray, np.ndarray]], *,
                    xt: np.ndarray | None = None, yt: np.ndarray | None = None,
                    ax: Axes | None = None, title: str = "", xlabel: str = "x",
                    ylabel: str = "y") -> Figure:
    """Predictive means with 95 % intervals for several methods, context (and target) data.

    ``xc``/``yc`` may be ``None`` (the data is not at hand, e.g. a stored comparison without
    the census file): then only the predictions are drawn.
    """
    from matplotlib.patches import Patch

    fig, ax = _axes(ax, (7.0, 4.0))
    if xt is not None and yt is not None:
        ax.scatter(xt, yt, s=6, color="0.7", label="targets (held out)")
    if xc is not None and yc is not None:
        ax.scatter(xc, yc, s=8, color="k", label="context (private)")
    colours = colours_for(predictions)
    for name, (mean, std) in predictions.items():
        ax.plot(xs, mean, color=colours[name], lw=2, label=f"{name}: mean")
        ax.fill_between(xs, mean - 1.96 * std, mean + 1.96 * std, color=colours[name], alpha=0.2)
    handles, _ = ax.get_legend_handles_labels()
    handles.append(Patch(color=NEUTRAL, alpha=0.3, label="shaded: 95 % interval"))
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(handles=handles, frameon=False, fontsize="small")
    return fig


def plot_deployment_times(times: Mapping[str, float], *, ax: Axes | None = None) -> Figure:
    """R Fig. 5 style: seconds per task at meta-test time, dots on a log axis (no bars)."""
    fig, ax = _axes(ax, (6.0, 3.0))
    names = list(times)
    colours = colours_for(names)
    for i, n in enumerate(names):
        ax.plot([times[n]], [i], "o", ms=9, color=colours[n], label=n)
        ax.hlines(i, min(times.values()) / 3, times[n], color=colours[n], lw=0.8, ls=":")
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set(xscale="log", xlabel="seconds per task (log scale)", ylabel="method")
    ax.legend(frameon=False, fontsize="small")
    return fig
