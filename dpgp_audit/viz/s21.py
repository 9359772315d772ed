"""Plots for the S21 notebook: DP-noise maps, RMSE curves, classification and selection figures.

Colours come from the course palette (:mod:`dpgp_audit.viz.style`): the non-private
GP is the course's black ``non-dp``, the sparse cloaking releases of S21 the course's
``cloaking`` colour (as in notebook 01), data and context grey.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.colors import to_rgba

from dpgp_audit.viz.style import NEUTRAL, heatmap_limits, method_colour

__all__ = [
    "format_table1",
    "format_table1_markdown",
    "plot_digits_accuracy",
    "plot_noise_band_1d",
    "plot_noise_map_2d",
    "plot_release_violins",
    "plot_rmse_vs_inducing",
    "plot_selection",
    "plot_selection_by_budget",
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


def format_table1_markdown(rows: Sequence[dict]) -> str:
    """S21 Table 1 as a Markdown table: rows (dims, DP), columns methods, ours (paper's)."""
    methods = list(dict.fromkeys(r["method"] for r in rows))
    keys = list(dict.fromkeys((r["dims"], r["dp"]) for r in rows))
    cell = {(r["dims"], r["dp"], r["method"]): r for r in rows}
    lines = ["| | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
    for dims, dp in keys:
        out = []
        for m in methods:
            r = cell.get((dims, dp, m))
            if r is None:
                out.append("")
                continue
            paper = "" if r["paper"] is None else f" ({r['paper'][0]:.1f} ± {r['paper'][1]:.1f})"
            out.append(f"{r['rmse']:.1f} ± {r['sd']:.1f}{paper}")
        lines.append(f"| {dims.upper()}, {'DP' if dp else 'no DP'} | " + " | ".join(out) + " |")
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
                      xlabel="x₁", ylabel="x₂", method="cloaking", value_label="prediction",
                      unit=""):
    """S21 Fig. 5 style: disks on a grid, opacity falling with the DP-noise sd (clear at max_sd),
    area growing with the released ``mean`` (``value_label`` in ``unit``).

    The disks take ``method``'s course colour; training inputs are grey, inducing inputs black.
    The legend carries a scale for both encodings: the smallest and largest disk with their
    values, and three opacities with their noise sd (in ``unit``).

    ``xlabel``/``ylabel`` name the two inputs with units (``"age (years)"``, ``"weight (kg)"``).
    """
    ax = _ax(ax)
    rgba = to_rgba(method_colour(method))
    mean = np.asarray(mean, dtype=float)
    lo, span = float(np.min(mean)), float(np.ptp(mean)) + 1e-12

    def opacity(sd):
        return np.clip(1.0 - np.asarray(sd, dtype=float) / max_sd, 0.0, 1.0)

    def area(v):
        return 60 * np.clip((np.asarray(v, dtype=float) - lo) / span, 0.1, 1.0)

    colours = np.tile(rgba, (len(mean), 1))
    colours[:, 3] = opacity(noise_sd)
    ax.scatter(grid[:, 0], grid[:, 1], s=area(mean), c=colours)
    ax.plot(X_train[:, 0], X_train[:, 1], ".", color=NEUTRAL, ms=2, label="training inputs")
    if Z is not None:
        ax.plot(Z[:, 0], Z[:, 1], "x", color="k", ms=8, mew=2, label="inducing inputs")
    suffix = f" {unit}" if unit else ""
    handles, _ = ax.get_legend_handles_labels()
    for v in (lo, lo + span):
        handles.append(ax.scatter([], [], s=float(area(v)), color=rgba[:3],
                                  label=f"{value_label} {v:.0f}{suffix}"))
    for sd in (0.0, max_sd / 2, max_sd):
        handles.append(ax.scatter([], [], s=30, color=(*rgba[:3], float(opacity(sd))),
                                  label=f"noise sd {'≥ ' if sd == max_sd else ''}{sd:g}{suffix}"))
    ax.legend(handles=handles, fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.16),
              ncol=2, title="area: value; opacity: noise", title_fontsize=6)
    ax.set(title=title or f"{method}: DP noise over the inputs", xlabel=xlabel, ylabel=ylabel)
    return ax


def plot_rmse_vs_inducing(res: dict, ax=None, *,
                          title="RMSE against the number of inducing inputs"):
    """S21 Fig. 4: RMSE against the number of inducing inputs, with and without DP."""
    ax = _ax(ax)
    ax.set_title(title)
    ax.plot(res["m"], res["dp"], "-o", color=method_colour("cloaking"),
            label="(ε, δ)-DP (cloaking)")
    ax.plot(res["m"], res["no_dp"], "--o", color=method_colour("non-dp"), label="no DP")
    ax.set_xlabel("number of inducing inputs")
    ax.set_ylabel("RMSE (cm)")
    ax.legend()
    return ax


def plot_stripes(train, test, proba, *, ax=None, title=""):
    """S21 Fig. 7 style: mean predicted P(+1) over DP releases on the test grid.

    Colour is the mean probability (colour bar); the dot's area grows with the
    classifier's confidence |P − ½| (three reference sizes in the legend).
    """
    ax = _ax(ax)
    p = np.atleast_2d(proba)

    def area(conf):
        return 40 + 200 * np.asarray(conf)

    dots = ax.scatter(test.X[:, 0], test.X[:, 1], c=p.mean(axis=0), cmap="RdBu_r", vmin=0,
                      vmax=1, s=area(np.abs(p.mean(axis=0) - 0.5)))
    ax.figure.colorbar(dots, ax=ax, label="mean P(y = +1) over DP releases")
    pos = train.y > 0
    # classes, not methods: told apart by marker, in black over the colour-mapped dots
    ax.plot(train.X[pos, 0], train.X[pos, 1], "k+", ms=4, label="training, y = +1")
    ax.plot(train.X[~pos, 0], train.X[~pos, 1], "x", color=NEUTRAL, ms=4,
            label="training, y = −1")
    handles, _ = ax.get_legend_handles_labels()
    handles += [ax.scatter([], [], s=float(area(c)), facecolors="none", edgecolors="0.3",
                           label=f"|P − ½| = {c:g}") for c in (0.0, 0.25, 0.5)]
    ax.set(title=title or "mean private P(y = +1) on the test grid",
           xlabel="x₁ (synthetic units)", ylabel="x₂ (synthetic units)")
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.25, 1.0))
    return ax


def plot_digits_accuracy(res: dict, chance: float | None = None, ax=None, *,
                         title="test accuracy against the number of inducing inputs"):
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
                label=f"ℓ = {ls:g}, no DP")
        ax.plot(res["m"], res["dp"][a], "--", marker=mk, ms=4, color=dp, label=f"ℓ = {ls:g}, DP")
    if chance is not None:
        ax.axhline(chance, color=NEUTRAL, lw=0.8, ls=":", label="chance")
    ax.set_xscale("log")
    ax.set_xticks(res["m"], [str(m) for m in res["m"]],
                  rotation=45 if len(res["m"]) > 6 else 0)
    ax.minorticks_off()
    ax.set_xlabel("inducing inputs M")
    ax.set_ylabel("test accuracy (fraction correct)")
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return ax


def plot_selection(res: dict, axes=None):
    """S21 Fig. 10: RMSE per configuration (sorted), bar width ∝ selection probability.

    Each bar is the cloaking release under one hyperparameter configuration (cloaking colour).
    """
    import matplotlib.pyplot as plt

    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True, layout="constrained")
    order = np.argsort(res["rmse"])
    for ax, w, name, exp in ((axes[0], res["probabilities"][order], "exponential mechanism",
                              res["expected_rmse"]),
                             (axes[1], np.full(order.size, 1 / order.size), "uniform",
                              res["uniform_rmse"])):
        left = np.concatenate([[0], np.cumsum(w)[:-1]])
        ax.bar(left, res["rmse"][order], width=w, align="edge", color=method_colour("cloaking"),
               alpha=0.6, edgecolor="k", lw=0.3)
        ax.axhline(exp, color="k", ls="--", label=f"expected RMSE {exp:.1f}")
        ax.set_title(f"{name}: width = P(select)", fontsize=10)
        ax.set_xlabel("cumulative selection probability")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("held-out RMSE (cm)")
    axes[0].figure.suptitle("configurations sorted by RMSE", fontsize=9)
    return axes


def plot_release_violins(x, proba_dp, proba_nodp, *, ax=None, xlabel="input",
                         ylabel="P(y = +1)", title="", method="cloaking"):
    """S21 Fig. 6 style: the spread of a private classifier's probability over releases.

    One violin per input of ``x`` over the rows of ``proba_dp`` (releases × inputs), in
    ``method``'s course colour, and the non-private classifier's ``proba_nodp`` as
    black crosses.
    """
    from matplotlib.patches import Patch

    ax = _ax(ax)
    x = np.ravel(x)
    width = 0.8 * (float(np.min(np.diff(np.sort(x)))) if x.size > 1 else 1.0)
    colour = method_colour(method)
    violins = ax.violinplot(np.asarray(proba_dp), positions=x, widths=width)
    for part in [*violins["bodies"], violins["cbars"], violins["cmins"], violins["cmaxes"]]:
        part.set_color(colour)
    ax.plot(x, proba_nodp, "x", color=method_colour("non-dp"), label="no DP (posterior mode)")
    n_rel = int(np.shape(proba_dp)[0])
    handles, _ = ax.get_legend_handles_labels()
    handles.append(Patch(color=colour, alpha=0.5, label=f"DP releases ({n_rel}): spread"))
    ax.legend(handles=handles, fontsize=7)
    ax.set(xlabel=xlabel, ylabel=ylabel, ylim=(-0.02, 1.02),
           title=title or "private class probabilities over releases")
    return ax


def plot_selection_by_budget(table, epsilons, lengthscales, *, ax=None,
                             lengthscale_unit="years", title=""):
    """S21 Fig. 11 style: P(select a lengthscale) (rows) against the selection ε (columns).

    ``table[i][j]`` is the probability of lengthscale j at budget i. The colour scale is
    the table's own range (:func:`dpgp_audit.viz.style.heatmap_limits`), printed on the bar.
    """
    ax = _ax(ax)
    data = np.asarray(table, dtype=float).T
    lo, hi = heatmap_limits(data)
    im = ax.imshow(data, aspect="auto", cmap="viridis", origin="lower", vmin=lo, vmax=hi)
    for (i, j), v in np.ndenumerate(data):
        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7,
                color="white" if v < (lo + hi) / 2 else "black")
    ax.set_xticks(range(len(epsilons)), [f"{e:g}" for e in epsilons])
    ax.set_yticks(range(len(lengthscales)), [f"{v:g}" for v in lengthscales])
    ax.set_xlabel("selection budget ε")
    ax.set_ylabel(f"lengthscale ({lengthscale_unit})")
    ax.figure.colorbar(im, ax=ax, label=f"P(selected), scale {lo:.2f}–{hi:.2f}")
    ax.set_title(title or "which lengthscale the exponential mechanism picks")
    return ax
