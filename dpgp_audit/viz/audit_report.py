"""Plot an audit report: empirical trade-off points with confidence boxes over the claimed curve.

The hypothesis-testing view of DP (Kairouz et al.; Dong, Roth & Su): a mechanism
is (ε, δ)-DP exactly when every test of "D or D′?" has type-II error
β ≥ f(α) = max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)). A black-box audit measures
(FPR, FNR) pairs of threshold tests; a point whose whole confidence box lies
below the curve refutes the claim. For a Gaussian release, the white-box
auditor's exact curve G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) is drawn too.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["claimed_tradeoff", "plot_report"]


def claimed_tradeoff(alpha: np.ndarray, claim: dict) -> np.ndarray | None:
    """Lower boundary of the (FPR, FNR) region a claim allows (``None`` if unknown)."""
    alpha = np.asarray(alpha, dtype=float)
    if "mu" in claim:
        from dpgp_audit.privacy.gdp import gdp_tradeoff

        return gdp_tradeoff(alpha, float(claim["mu"]))
    if "epsilon" in claim:
        eps, delta = float(claim["epsilon"]), float(claim.get("delta", 0.0))
        return np.maximum.reduce([np.zeros_like(alpha), 1 - delta - math.exp(eps) * alpha,
                                  math.exp(-eps) * (1 - delta - alpha)])
    return None


def plot_report(report: object, path: str | None = None, ax: object = None) -> object:
    """Draw one :class:`~dpgp_audit.audit.runner.AuditReport`; save a PNG if ``path`` is given."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    if ax is None:
        fig, ax = plt.subplots(figsize=(5.2, 5.0))
    else:
        fig = ax.figure
    grid = np.linspace(0.0, 1.0, 401)
    curve = claimed_tradeoff(grid, report.claim)
    if curve is not None:
        label = f"claimed: {report.claim.get('describe', '')}"[:70]
        ax.plot(grid, curve, color="k", lw=2, label=label)
        ax.fill_between(grid, 0, curve, color="#c0392b", alpha=0.08,
                        label="forbidden by the claim")
    wb = report.result("whitebox")
    if wb is not None and "mu" in wb.details:
        mu = float(wb.details["mu"])
        if math.isfinite(mu):
            from dpgp_audit.privacy.gdp import gdp_tradeoff

            ax.plot(grid, gdp_tradeoff(grid, mu), color="#2980b9", ls="--",
                    label=f"white-box exact, worst pair (mu={mu:.3g})")
        else:
            ax.plot([0, 0, 1], [1, 0, 0], color="#2980b9", ls="--",
                    label="white-box: mu = inf (perfectly distinguishable)")
    for name, colour in (("blackbox", "#e67e22"), ("gdp-fit", "#8e44ad")):
        r = report.result(name)
        if r is None or "tradeoff" not in r.details:
            continue
        tr = r.details["tradeoff"]
        fpr, fnr = np.asarray(tr["fpr"], float), np.asarray(tr["fnr"], float)
        for k in range(fpr.size):
            # Boxes show the confidence region of both error rates of one test.
            lo_x, hi_x = float(tr["fpr_lo"][k]), float(tr["fpr_hi"][k])
            lo_y, hi_y = float(tr["fnr_lo"][k]), float(tr["fnr_hi"][k])
            ax.add_patch(Rectangle((lo_x, lo_y), hi_x - lo_x, hi_y - lo_y, fill=False,
                                   ec=colour, lw=0.7, alpha=0.7))
        ax.scatter(fpr, fnr, s=10, color=colour, zorder=3,
                   label=f"{name}: empirical (FPR, FNR), {tr.get('box_level', 0.95):.0%} boxes")
        ax.scatter(fnr, fpr, s=10, color=colour, marker="x", zorder=3, alpha=0.6)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("type I error (FPR)")
    ax.set_ylabel("type II error (FNR)")
    ax.set_title(f"{report.mechanism}: {report.verdict.value}", fontsize=10)
    ax.set_aspect("equal")
    ax.legend(fontsize=7, loc="upper right")
    if path is not None:
        fig.savefig(path, dpi=110, bbox_inches="tight")
    return fig
