"""Plots of audit reports and of experiments on the auditors (catalogue A.5, A.6).

:func:`plot_report` draws an :class:`~dpgp_audit.audit.result.AuditReport` with
:func:`dpgp_audit.viz.tradeoff.plot_tradeoff`: the empirical (FPR, FNR) points of
the black-box tests with their Clopper–Pearson boxes over the claimed trade-off
curve, the white-box auditor's exact curve, in the linear view and in the log ROC
view (where violations at small δ become visible).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from dpgp_audit.audit.result import AuditReport

__all__ = ["plot_planted_catch", "plot_power", "plot_report"]


def plot_report(report: AuditReport, path: str | None = None, ax: object = None) -> object:
    """Draw one report (linear and log views); save a PNG when ``path`` is given.

    With ``ax`` given, only the linear view is drawn on it. Returns the figure.
    """
    import matplotlib.pyplot as plt

    from dpgp_audit.viz.tradeoff import claim_from_dict, plot_tradeoff

    try:
        claim = claim_from_dict(report.claim)
    except (KeyError, TypeError, ValueError):
        claim = None
    results = [r for r in report.results if r.auditor != "sensitivity"]
    if ax is not None:
        plot_tradeoff(results, claim=claim, ax=ax)
        fig = ax.figure
    else:
        fig, (ax_lin, ax_log) = plt.subplots(1, 2, figsize=(11, 5.2))
        plot_tradeoff(results, claim=claim, ax=ax_lin)
        plot_tradeoff(results, claim=claim, ax=ax_log, log=True)
        fig.suptitle(f"{report.mechanism}: {report.verdict.value}", fontsize=11)
        fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=110, bbox_inches="tight")
    return fig


_AUDITOR_COLOURS = {"sensitivity": "#16a085", "whitebox": "#2980b9", "blackbox": "#e67e22",
                    "gdp-fit": "#8e44ad"}


def plot_planted_catch(rows: list[dict], ax: object = None) -> object:
    """Bar chart: samples per side each planted bug needed, coloured by the auditor that caught it.

    Deterministic auditors (sensitivity search, white-box) need no samples and are
    drawn at the left edge; a hatched bar marks a bug *not* flagged at its n.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 0.38 * len(rows) + 1.2))
    else:
        fig = ax.figure
    labels, widths, colours, hatches = [], [], [], []
    for r in rows:
        labels.append(r["id"].replace("planted/", ""))
        widths.append(np.log10(max(r["n"], 1)) if r["n"] else 0.15)
        colours.append(_AUDITOR_COLOURS.get(r["auditor"], "grey"))
        hatches.append("" if r["verdict"] == "VIOLATION" else "//")
    y = np.arange(len(rows))
    bars = ax.barh(y, widths, color=colours, edgecolor="k", linewidth=0.5)
    for bar, h in zip(bars, hatches, strict=True):
        bar.set_hatch(h)
    for yi, r in zip(y, rows, strict=True):
        tag = "0 samples" if not r["n"] else f"n = {r['n']:,}/side"
        ax.text(max(widths) * 0.02 + (widths[yi] if r["n"] else 0.15), yi,
                f"{tag}  {r['verdict']}", va="center", fontsize=7)
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("log10(samples per side needed)")
    ax.set_xlim(0, max(widths) * 1.6 + 0.5)
    ax.legend(handles=[Patch(color=c, label=a) for a, c in _AUDITOR_COLOURS.items()],
              fontsize=7, loc="lower right")
    ax.set_title("Planted bugs: the cheapest auditor that caught each", fontsize=10)
    return fig


def plot_power(curves: list[dict], predicted: dict | None = None, ax: object = None) -> object:
    """Detection rate against samples per side, with Clopper–Pearson bars.

    ``curves`` are :func:`~dpgp_audit.experiments.auditing_lab.detection_rate` results;
    ``predicted`` maps a label to ``(sizes, power)`` from the sample-size planner.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4))
    else:
        fig = ax.figure
    for c in curves:
        s = np.asarray(c["sizes"], float)
        rate = np.asarray(c["rate"])
        err = np.vstack([rate - np.asarray(c["rate_lo"]), np.asarray(c["rate_hi"]) - rate])
        ax.errorbar(s, rate, yerr=err, marker="o", capsize=3,
                    color=_AUDITOR_COLOURS.get(c["auditor"]),
                    label=f"{c['auditor']}: observed ({c['reps']} audits per n)")
    for label, (sizes, power) in (predicted or {}).items():
        colour = next((c for a, c in _AUDITOR_COLOURS.items() if a.split("-")[0] in label),
                      "grey")
        ax.plot(sizes, power, ls="--", color=colour, alpha=0.6, label=label)
    ax.set_xscale("log")
    ax.set_ylim(-0.03, 1.03)
    ax.axhline(0.8, color="k", lw=0.5, ls=":")
    ax.set_xlabel("samples per side")
    ax.set_ylabel("share of audits that flag the bug")
    ax.legend(fontsize=7)
    return fig
