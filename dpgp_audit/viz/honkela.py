"""Plots for paper H (DP sparse variational GP): Figs. 1–3, classification, input-leak contrast.

Each function takes the plain results of :mod:`dpgp_audit.experiments.honkela`
and returns the matplotlib figure; nothing here computes privacy.
"""

from __future__ import annotations

import numpy as np

from dpgp_audit.viz.style import colours_for, method_colour

__all__ = [
    "plot_calibration",
    "plot_classification",
    "plot_hyperparameter_recovery",
    "plot_input_leak",
    "plot_sinc_fits",
]


def plot_sinc_fits(data: object, fits: list, truth: object = None) -> object:
    """H Fig. 1: posterior mean ± 2 sd and inducing means, one panel per ε."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(fits), figsize=(3.6 * len(fits), 3.0), sharey=True,
                             squeeze=False)
    dp_gp = method_colour("dp-gp (honkela)")  # the course colour of H's DP-GP
    for ax, fit in zip(axes[0], fits, strict=True):
        ax.plot(data.X[:, 0], data.y, ".", ms=2, color="0.7", label="data")
        if truth is not None:
            ax.plot(fit.V, truth(fit.V), "k-", lw=1, label="truth")
        ax.plot(fit.V, fit.mean, "-", color=dp_gp, label="DP-GP mean")
        ax.fill_between(fit.V, fit.mean - 2 * fit.sd, fit.mean + 2 * fit.sd, color=dp_gp,
                        alpha=0.25, label="±2 sd")
        ax.plot(fit.Z, fit.u_mean, "o", color="C2", ms=4, label="q(u) means")
        ax.set_title(f"ε = {fit.epsilon:g}")
        ax.set_ylim(-1.5, 2.0)
        ax.set_xlabel("input x (no units)")
    axes[0][0].set_ylabel("target y (no units)")
    axes[0][0].legend(fontsize=7, loc="upper left")
    fig.suptitle(f"H Fig. 1: DP-GP fits of sin(2x)/(2x), N = {len(data.y)}, "
                 f"|Z| = {len(fits[0].Z)} (shaded: ±2 posterior sd)", fontsize=10)
    fig.tight_layout()
    return fig


def plot_calibration(result: object) -> object:
    """H Fig. 2: coverage vs ε, rows σ, columns α, one line per posterior variant."""
    import matplotlib.pyplot as plt

    mean, se = result.mean_and_se()
    labels = {"paper": "DP-GP (eq. 14)", "none": "naive", "symmetric": "DP-GP (symmetric S22)"}
    ns, na = len(result.sigmas), len(result.alphas)
    fig, axes = plt.subplots(ns, na, figsize=(2.6 * na, 2.2 * ns), sharex=True, sharey=True,
                             squeeze=False)
    eps = np.asarray(result.epsilons)
    for i, s in enumerate(result.sigmas):
        for j, a in enumerate(result.alphas):
            ax = axes[i][j]
            colours = colours_for(labels.get(m, m) for m in result.methods)
            for k, meth in enumerate(result.methods):
                label = labels.get(meth, meth)
                ax.errorbar(eps, mean[k, i, :, j], yerr=2 * se[k, i, :, j], marker="o", ms=3,
                            label=label, capsize=2, color=colours[label])
            ax.axhline(a, color="k", ls="--", lw=1, label="reference α")
            ax.set_xscale("log")
            ax.set_xticks(eps, [f"{e:g}" for e in eps])  # the ε values run, readable
            ax.minorticks_off()
            if i == 0:
                ax.set_title(f"α = {a:g}")
            if j == 0:
                ax.set_ylabel(f"σ = {s:g}\ncoverage")
            if i == ns - 1:
                ax.set_xlabel("ε (log scale)")
    axes[0][0].legend(fontsize=6)
    cov = getattr(result, "coverage", None)
    reps = f" over {cov.shape[-1]} repeats" if cov is not None else ""
    fig.suptitle("H Fig. 2: share of held-out targets inside the central α-interval "
                 f"(mean ± 2 se{reps}; dashed: nominal α)", fontsize=10)
    fig.tight_layout()
    return fig


def plot_hyperparameter_recovery(counts: np.ndarray, epsilons: tuple, sigmas: tuple,
                                 lengthscales: tuple) -> object:
    """H Fig. 3: frequency of each (σ, ℓ) chosen, one heat map per ε."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(epsilons), figsize=(3.2 * len(epsilons) + 1.0, 3.0),
                             squeeze=False, layout="constrained")
    img = None
    for ax, eps, c in zip(axes[0], epsilons, counts, strict=True):
        freq = c / max(int(c.sum()), 1)
        # one fixed 0-1 scale for every panel: the panels are compared with each other
        img = ax.imshow(freq, vmin=0, vmax=1, cmap="Blues", origin="lower")
        for (i, j), v in np.ndenumerate(freq):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8,
                    color="white" if v > 0.6 else "black")
        ax.set_xticks(range(len(lengthscales)), [f"{v:.2g}" for v in lengthscales])
        ax.set_yticks(range(len(sigmas)), [f"{v:.2g}" for v in sigmas])
        ax.set_xlabel("lengthscale ℓ")
        ax.set_ylabel("noise sd σ")  # constrained layout keeps it clear of the next panel
        ax.set_title(f"ε_tot = {eps:g} ({int(c.sum())} runs)")
    fig.suptitle("H Fig. 3: how often the private search chose each (σ, ℓ); "
                 "true pair (0.1, 1)", fontsize=10)
    if img is not None:
        fig.colorbar(img, ax=list(axes[0]), shrink=0.8, label="share of runs")
    return fig


def plot_classification(X: np.ndarray, labels: np.ndarray, V: np.ndarray, P: np.ndarray,
                        title: str = "") -> object:
    """Predicted class probabilities over a 1-D input with the training labels."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 2.8))
    for c in range(P.shape[1]):
        ax.plot(V, P[:, c], color=f"C{c}", label=f"p(class {c})")
        sel = labels == c
        ax.plot(X[sel], np.full(sel.sum(), -0.05), "|", color=f"C{c}",
                label=f"training inputs, class {c}")
    ax.set_ylim(-0.1, 1.05)
    ax.set_xlabel("input x (no units)")
    ax.set_ylabel("predicted probability")
    ax.set_title(title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_input_leak(leak: object) -> object:
    """Predictive variance published by an outputs-only GP before/after moving one input."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 2.8))
    ax.plot(leak.Xs, leak.var0, "C0-o", ms=3, label="D")
    ax.plot(leak.Xs, leak.var1, "C3-o", ms=3, label=f"D′ (x moved {leak.x_old:.2f} → "
                                                     f"{leak.x_new:.2f})")
    ax.axvline(leak.x_new, color="C3", ls=":", lw=1, label="moved input's new place")
    ax.set_xlabel("test input x* (no units)")
    ax.set_ylabel("published predictive variance")
    ax.set_title("outputs-only GP: the variance is a deterministic function of X")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
