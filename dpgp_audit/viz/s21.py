"""Plots for the S21 notebook: DP-noise maps, RMSE curves, classification and selection figures.

Colours come from the course palette (:mod:`dpgp_audit.viz.style`): the non-private
GP is the course's black ``non-dp``, the sparse cloaking releases of S21 the course's
``cloaking`` colour (as in notebook 01), data and context grey.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.colors import to_rgba

from dpgp_audit.viz.style import NEUTRAL, method_colour

__all__ = [
    "format_table1",
    "plot_digits_accuracy",
    "plot_noise_band_1d",
    "plot_noise_map_2d",
    "plot_rmse_vs_inducing",
    "plot_selection",
    "plot_stripes",
]


def _ax(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 3.5))
    return ax


def format_table1(rows: Sequence[dict]) -> str:
    """S21 Table 1 as text: our RMSE ± sd beside the paper's."""
    lines = [f"{'':4} {'method':<14} {'DP':<5} {'ours (cm)':>14} {'paper (cm)':>14}"]
    for r in rows:
        paper = "" if r["paper"] is None else f"{r['paper'][0]:.1f} ± {r['paper'][1]:.1f}"
        lines.append(f"{r['dims']:4} {r['method']:<14} {('yes' if r['dp'] else 'no'):<5} "
                     f"{r['rmse']:7.1f} ± {r['sd']:4.1f} {paper:>14}")
    return "\n".join(lines)


def plot_noise_band_1d(x_train, y_train, xs, mean, noise_sd, *, samples=None, post_sd=None,
                       ax=None, title="", xlabel="x", ylabel="y", method="cloaking"):
    """S21 Fig. 3 style: non-DP mean, DP samples and ±1 DP-noise sd band.

    ``xlabel``/``ylabel`` name the axes with units (``"age (years)"``, ``"height (cm)"``).
    ``method`` names the release's method in the course palette (S21's releases are
    cloaking releases, drawn in the cloaking colour of every notebook).
    """
    ax = _ax(ax)
    xs = np.ravel(xs)
    non_dp, release = method_colour("non-dp"), method_colour(method)
    if post_sd is not None:
        ax.fill_between(xs, mean - post_sd, mean + post_sd, color=non_dp, alpha=0.12,
                        label="GP posterior sd")
    if samples is not None:
        for i, s in enumerate(samples):
            ax.plot(xs, s, color=release, lw=0.6, alpha=0.8,
                    label=f"DP releases ({method})" if i == 0 else None)
    ax.plot(xs, mean, color=non_dp, lw=2, label="non-DP mean")
    ax.plot(xs, mean + noise_sd, "--", color=release, lw=1, label="± DP noise sd")
    ax.plot(xs, mean - noise_sd, "--", color=release, lw=1)
    ax.plot(np.ravel(x_train), y_train, "+", color=NEUTRAL, ms=4, label="training data")
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.legend(fontsize=7, loc="lower right")
    return ax


def plot_noise_map_2d(X_train, grid, mean, noise_sd, *, max_sd=40.0, Z=None, ax=None, title="",
                      xlabel="x₁", ylabel="x₂", method="cloaking"):
    """S21 Fig. 5 style: disks on a grid, opacity falling with the DP-noise sd (clear at max_sd).

    The disks take ``method``'s course colour; training inputs are grey, inducing inputs black.

    ``xlabel``/``ylabel`` name the two inputs with units (``"age (years)"``, ``"weight (kg)"``).
    """
    ax = _ax(ax)
    alpha = np.clip(1.0 - np.asarray(noise_sd) / max_sd, 0.0, 1.0)
    colours = np.tile(to_rgba(method_colour(method)), (len(alpha), 1))
    colours[:, 3] = alpha
    size = 60 * np.clip((np.asarray(mean) - np.min(mean)) / (np.ptp(mean) + 1e-12), 0.1, 1.0)
    ax.scatter(grid[:, 0], grid[:, 1], s=size, c=colours)
    ax.plot(X_train[:, 0], X_train[:, 1], ".", color=NEUTRAL, ms=2, label="training inputs")
    if Z is not None:
        ax.plot(Z[:, 0], Z[:, 1], "x", color="k", ms=8, mew=2, label="inducing inputs")
    ax.legend(fontsize=7)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    return ax


def plot_rmse_vs_inducing(res: dict, ax=None):
    """S21 Fig. 4: RMSE against the number of inducing inputs, with and without DP."""
    ax = _ax(ax)
    ax.plot(res["m"], res["dp"], "-o", color=method_colour("cloaking"),
            label="(ε, δ)-DP (cloaking)")
    ax.plot(res["m"], res["no_dp"], "--o", color=method_colour("non-dp"), label="no DP")
    ax.set_xlabel("number of inducing inputs")
    ax.set_ylabel("RMSE (cm)")
    ax.legend()
    return ax


def plot_stripes(train, test, proba, *, ax=None, title=""):
    """S21 Fig. 7 style: mean predicted P(+1) over DP releases on the test grid."""
    ax = _ax(ax)
    p = np.atleast_2d(proba)
    dots = ax.scatter(test.X[:, 0], test.X[:, 1], c=p.mean(axis=0), cmap="RdBu_r", vmin=0,
                      vmax=1, s=40 + 200 * np.abs(p.mean(axis=0) - 0.5))
    ax.figure.colorbar(dots, ax=ax, label="mean P(y = +1)")
    pos = train.y > 0
    # classes, not methods: told apart by marker, in black over the colour-mapped dots
    ax.plot(train.X[pos, 0], train.X[pos, 1], "k+", ms=4, label="training, y = +1")
    ax.plot(train.X[~pos, 0], train.X[~pos, 1], "x", color=NEUTRAL, ms=4,
            label="training, y = −1")
    ax.set(title=title, xlabel="x₁", ylabel="x₂")
    ax.legend(fontsize=7)
    return ax


def plot_digits_accuracy(res: dict, chance: float | None = None, ax=None):
    """S21 Fig. 8: accuracy against M, one line per lengthscale.

    The method is the colour (course palette: no DP black and solid, DP cloaking-coloured
    and dashed); the lengthscale is the marker.
    """
    ax = _ax(ax)
    markers = "osD^v<>ph*"
    non_dp, dp = method_colour("non-dp"), method_colour("cloaking")
    for a, ls in enumerate(res["lengthscales"]):
        mk = markers[a % len(markers)]
        ax.plot(res["m"], res["no_dp"][a], "-", marker=mk, ms=4, color=non_dp,
                label=f"l={ls:g}, no DP")
        ax.plot(res["m"], res["dp"][a], "--", marker=mk, ms=4, color=dp, label=f"l={ls:g}, DP")
    if chance is not None:
        ax.axhline(chance, color=NEUTRAL, lw=0.8, ls=":", label="chance")
    ax.set_xscale("log")
    ax.set_xlabel("inducing inputs M")
    ax.set_ylabel("accuracy")
    ax.legend(fontsize=7)
    return ax


def plot_selection(res: dict, axes=None):
    """S21 Fig. 10: RMSE per configuration (sorted), bar width ∝ selection probability.

    Each bar is the cloaking release under one hyperparameter configuration (cloaking colour).
    """
    import matplotlib.pyplot as plt

    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(9, 3.2), sharey=True)
    order = np.argsort(res["rmse"])
    for ax, w, name, exp in ((axes[0], res["probabilities"][order], "exponential mechanism",
                              res["expected_rmse"]),
                             (axes[1], np.full(order.size, 1 / order.size), "uniform",
                              res["uniform_rmse"])):
        left = np.concatenate([[0], np.cumsum(w)[:-1]])
        ax.bar(left, res["rmse"][order], width=w, align="edge", color=method_colour("cloaking"),
               alpha=0.6, edgecolor="k", lw=0.3)
        ax.axhline(exp, color="k", ls="--", label=f"expected RMSE {exp:.1f}")
        ax.set_title(name)
        ax.set_xlabel("cumulative probability")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("held-out RMSE (cm)")
    return axes
