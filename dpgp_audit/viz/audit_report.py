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

from dpgp_audit.viz.style import AUDITOR_COLOURS, NEUTRAL, VERDICT_COLOURS

if TYPE_CHECKING:
    from dpgp_audit.audit.result import AuditReport

__all__ = ["plot_planted_catch", "plot_power", "plot_report", "plot_rounding_attack"]


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


_AUDITOR_COLOURS = AUDITOR_COLOURS  # one colour per auditor across the course


def plot_planted_catch(rows: list[dict], ax: object = None) -> object:
    """Dot plot: each planted bug, the auditor it was given, its samples per side and verdict.

    One row per :func:`~dpgp_audit.experiments.auditing_lab.audit_planted_suite` row
    (catalogue A.5). Each bug is audited by one auditor only — the cheapest one able
    to see it — so the colour says which auditor *ran*, and the fill says whether it
    flagged the bug: a filled dot is a ``VIOLATION``, a hollow dot a bug *not* flagged
    at its n. Rows marked ``control`` (a planted variant that is still private, kept as
    a negative control) are diamonds: for them a hollow marker is the expected result.

    The sample sizes span decades, so they are dots on a log axis (a bar on a log
    axis has no meaningful length). Deterministic auditors (sensitivity search,
    white-box) need no samples and are drawn at the left edge, labelled "0 samples".
    The verdict text is coloured by verdict (``NO_EVIDENCE`` grey, never a 'safe' colour).
    The legend lists every auditor colour that appears, the two fills and the diamond.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    if ax is None:
        fig, ax = plt.subplots(figsize=(10.0, 0.38 * len(rows) + 1.6))
    else:
        fig = ax.figure
    y = np.arange(len(rows))
    sizes = [r["n"] for r in rows if r["n"]]
    left = 0.5  # where "no samples" is drawn, left of n = 1 on the log axis
    right = max(sizes + [10]) * 3000  # room for the verdict text right of the largest n
    for yi, r in zip(y, rows, strict=True):
        colour = _AUDITOR_COLOURS.get(r["auditor"], NEUTRAL)
        x = r["n"] if r["n"] else left
        caught = r["verdict"] == "VIOLATION"
        control = bool(r.get("control"))
        ax.plot([x], [yi], "D" if control else "o", ms=7 if control else 8, color=colour,
                markerfacecolor=colour if caught else "white", markeredgewidth=1.5)
        tag = "0 samples" if not r["n"] else f"n = {r['n']:,}/side"
        note = " (expected: still private)" if control and not caught else ""
        ax.text(x * 1.6, yi, f"{tag}  {r['verdict']}{note}", va="center", fontsize=7,
                color=VERDICT_COLOURS.get(r["verdict"], "k"))
    ax.set_xscale("log")
    ax.set_xlim(left / 2, right)
    ax.set_yticks(y, [r["id"].replace("planted/", "") for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("samples per side the auditor was given (log scale; left edge: no samples)")
    ax.set_ylabel("planted bug")
    present = {r["auditor"] for r in rows}
    handles = [Line2D([], [], marker="o", ls="none", color=c, label=f"auditor: {a}")
               for a, c in _AUDITOR_COLOURS.items() if a in present]
    handles += [Line2D([], [], marker="o", ls="none", color=NEUTRAL, label=f"auditor: {a}")
                for a in sorted(present - set(_AUDITOR_COLOURS))]
    handles.append(Line2D([], [], marker="o", ls="none", color=NEUTRAL,
                          markerfacecolor=NEUTRAL, label="filled: VIOLATION found"))
    handles.append(Line2D([], [], marker="o", ls="none", color=NEUTRAL,
                          markerfacecolor="white", label="hollow: not flagged at this n"))
    if any(r.get("control") for r in rows):
        handles.append(Line2D([], [], marker="D", ls="none", color=NEUTRAL,
                              markerfacecolor="white",
                              label="diamond: negative control\n(still private; must not be "
                                    "flagged)"))
    # outside the axes: inside, it would hide the rows at the bottom
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              title="colour = auditor that ran", title_fontsize=7)
    flagged = sum(r["verdict"] == "VIOLATION" for r in rows if not r.get("control"))
    bugs = sum(not r.get("control") for r in rows)
    ax.set_title(f"Planted bugs, each audited by the cheapest auditor able to see it: "
                 f"{flagged} of {bugs} flagged", fontsize=10)
    return fig


def plot_rounding_attack(rows: list[dict], pilot: int, ax: object = None) -> object:
    """The rounding attack (catalogue A.7): distinct released values per mechanism.

    One row per mechanism of
    :func:`dpgp_audit.experiments.rounding_attack.rounding_attack`: a dot at the number
    of distinct values among ``pilot`` releases of its attack pair (the smaller side and
    coordinate), on a log axis, coloured by the precision auditor's verdict. A release
    whose noise survives rounding has all ``pilot`` values distinct (dotted line); a
    naive release whose noise is swallowed by the float grid sits at the left. A refused
    attack (the mechanism rejected the out-of-domain pair) is drawn as a hollow dot at
    the left edge.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    pilot = int(pilot)
    if pilot < 1:
        raise ValueError(f"pilot must be a positive integer, got {pilot!r}")
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(rows) + 1.6))
    else:
        fig = ax.figure
    y = np.arange(len(rows))
    left = 0.5
    for yi, r in zip(y, rows, strict=True):
        colour = VERDICT_COLOURS.get(r["verdict"], NEUTRAL)
        refused = r.get("refused") or r.get("distinct") is None
        x = left if refused else max(1, min(r["distinct"]))
        ax.plot([x], [yi], "o", ms=9, color=colour,
                markerfacecolor="white" if refused else colour, markeredgewidth=1.5)
        lb = r.get("epsilon_lb")
        text = ("attack refused" if refused else f"{x:,} distinct") + f"  {r['verdict']}"
        if lb is not None and lb > 0:
            text += f", certified ε ≥ {lb:.2f} (claimed {r['claimed']:g})"
        ax.text(x * 1.5, yi, text, va="center", fontsize=7, color=colour)
    ax.axvline(pilot, color="k", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_xlim(left / 2, pilot * 40)
    names = [r["id"] + ("\n(no domain)" if r["domain"] is None else f"\n(|y| ≤ {r['domain']:g})")
             for r in rows]
    ax.set_yticks(y, names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"distinct released values among {pilot:,} releases per side (log scale)")
    ax.set_ylabel("mechanism (declared domain)")
    handles = [Line2D([], [], marker="o", ls="none", color=c, label=v)
               for v, c in VERDICT_COLOURS.items() if any(r["verdict"] == v for r in rows)]
    handles.append(Line2D([], [], color="k", lw=0.8, ls=":",
                          label=f"all {pilot:,} distinct (noise survives)"))
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("The rounding attack: precision auditor (A.7) on naive and hardened releases",
                 fontsize=10)
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
    ax.axhline(0.8, color="k", lw=0.5, ls=":", label="80 % power")
    ax.set_xlabel("samples per side")
    ax.set_ylabel("share of audits that flag the bug")
    ax.legend(fontsize=7)
    return fig
