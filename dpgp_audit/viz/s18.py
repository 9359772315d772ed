"""Plots for the S18 notebook (Fig. 1 A/B, Fig. 3-style map, selection heat map).

Pure functions in the style of :mod:`dpgp_audit.viz.calibration_plots`: numbers in, a
:class:`matplotlib.figure.Figure` out, no global pyplot state.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from dpgp_audit.viz.style import heatmap_limits, method_colour

__all__ = ["plot_dp_fit", "plot_selection_heatmap", "plot_spatial_noise"]


def _axes(ax: Axes | None, figsize: tuple[float, float] = (6.5, 4.0)) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def plot_dp_fit(X: np.ndarray, y: np.ndarray, Xs: np.ndarray, mean: np.ndarray,
                post_var: np.ndarray, dp_samples: np.ndarray, noise_sd: np.ndarray, *,
                title: str = "", ylim: tuple[float, float] | None = None,
                xlabel: str = "x", ylabel: str = "y", ax: Axes | None = None,
                method: str | None = None) -> Figure:
    """S18 Fig. 1 style: data, non-DP posterior mean ± 2 sd (black, grey band), DP releases,
    DP noise ± 1 sd (black dashed) and ± ¼ sd (grey dashed).

    ``xlabel``/``ylabel`` name the axes with their units, e.g. ``"age (years)"`` and
    ``"height (cm)"`` for the !Kung data of S18 Fig. 1. ``method`` (e.g. ``"standard DP-GP"``,
    ``"cloaking"``) colours the DP releases with the method's course colour
    (:func:`dpgp_audit.viz.style.method_colour`); grey if omitted.
    """
    fig, ax = _axes(ax)
    xs = np.ravel(Xs)
    ax.plot(np.ravel(X), y, ".", color="0.5", ms=3, label="data")
    sd = np.sqrt(np.maximum(post_var, 0.0))
    non_dp = method_colour("non-dp")
    release = method_colour(method) if method is not None else "0.6"
    ax.fill_between(xs, mean - 2 * sd, mean + 2 * sd, color=non_dp, alpha=0.12,
                    label="GP posterior ±2 sd")
    for i, s in enumerate(np.atleast_2d(dp_samples)):
        ax.plot(xs, s, color=release, lw=0.8, alpha=0.8,
                label=f"DP releases ({method})" if i == 0 and method else
                ("DP releases" if i == 0 else None))
    ax.plot(xs, mean, color=non_dp, lw=2, label="posterior mean (no DP)")
    for f, style, lab in ((1.0, "k--", "DP noise ±1 sd"), (0.25, "--", "DP noise ±¼ sd")):
        kw = {"color": "0.4"} if f < 1 else {}
        ax.plot(xs, mean + f * noise_sd, style, lw=1, label=lab, **kw)
        ax.plot(xs, mean - f * noise_sd, style, lw=1, **kw)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.legend(fontsize=7, loc="lower right")
    return fig


def plot_spatial_noise(X: np.ndarray, Xs: np.ndarray, dp_pred: np.ndarray,
                       noise_sd: np.ndarray, delta_scale: float, *, title: str = "",
                       xlabel: str = "x₁", ylabel: str = "x₂", value_label: str = "prediction",
                       unit: str = "", ax: Axes | None = None) -> Figure:
    """S18 Fig. 3 style: training locations (dots), test predictions as circles whose area
    is the DP prediction and whose opacity falls with the DP noise sd (transparent at
    ≥ 40% of ``delta_scale``, the sensitivity d).

    Both encodings get a scale in the legend: three reference circles (area ↔
    ``value_label`` in ``unit``) and three opacities (noise sd as a share of d).
    """
    fig, ax = _axes(ax, (7.5, 5.0))
    ax.plot(X[:, 0], X[:, 1], ".", color="0.6", ms=2, label="training locations")
    colour = to_rgba(method_colour("cloaking"))
    pred = np.asarray(dp_pred, dtype=float)
    top = max(float(np.max(np.abs(pred))), 1e-9)

    def area(v: np.ndarray | float) -> np.ndarray:
        return 40 * np.clip(v, 1e-9, None) / top

    def opacity(sd: np.ndarray | float) -> np.ndarray:
        return np.clip(1.0 - np.asarray(sd) / (0.4 * delta_scale), 0.05, 1.0)

    colours = np.tile(colour, (len(Xs), 1))
    colours[:, 3] = opacity(noise_sd)
    ax.scatter(Xs[:, 0], Xs[:, 1], s=area(pred), c=colours, edgecolors="none")
    ax.set_aspect("equal")
    ax.set(title=title or "DP predictions: area = value, opacity = privacy noise",
           xlabel=xlabel, ylabel=ylabel)
    suffix = f" {unit}" if unit else ""
    handles = [Line2D([], [], ls="none", marker=".", color="0.6", label="training locations")]
    refs = np.unique(np.round(np.quantile(np.clip(pred, 0, None), [0.1, 0.5, 1.0]), 0))
    handles += [ax.scatter([], [], s=float(area(v)), color=colour[:3],
                           label=f"{value_label} {v:g}{suffix}") for v in refs if v > 0]
    for share in (0.0, 0.2, 0.4):
        rgba = (*colour[:3], float(opacity(share * delta_scale)))
        handles.append(ax.scatter([], [], s=30, color=rgba,
                                  label=f"noise sd {'≥ ' if share == 0.4 else ''}"
                                        f"{share:.0%} of d"))
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0),
              title="circle area: value; opacity: noise", title_fontsize=7)
    return fig


def plot_selection_heatmap(probs: np.ndarray, row_labels: Sequence[str],
                           col_labels: Sequence[str], *, title: str = "",
                           xlabel: str = "lengthscale", ylabel: str = "regression privacy",
                           ax: Axes | None = None) -> Figure:
    """S18-supp Fig. 4 style: selection probability (rows: privacy level, columns:
    lengthscale). ``xlabel`` names the columns with their unit (``"lengthscale (years)"``).
    """
    fig, ax = _axes(ax, (6.0, 3.5))
    vmin, vmax = heatmap_limits(probs)  # the data's range: 0.23-0.27 must not look flat
    im = ax.imshow(probs, aspect="auto", cmap="viridis", vmin=vmin, vmax=vmax)
    for (i, j), v in np.ndenumerate(np.asarray(probs, dtype=float)):
        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8,
                color="white" if v < (vmin + vmax) / 2 else "black")
    ax.set_xticks(range(len(col_labels)), col_labels)
    ax.set_yticks(range(len(row_labels)), row_labels)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fig.colorbar(im, ax=ax, label=f"P(select), scale {vmin:.2f}–{vmax:.2f}")
    ax.set_title(title or "probability of selecting each configuration")
    return fig
