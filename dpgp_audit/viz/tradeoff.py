"""Trade-off plot: empirical (FPR, FNR) points with Clopper–Pearson boxes over the claimed curve.

The single most useful picture of an audit (AUDITING.md §5.1): a mechanism
satisfying the claim can only produce tests whose (type I, type II) errors lie
*above* the claimed trade-off curve — G_μ for μ-GDP (Dong, Roth & Su 2022,
Def. 2.3), ``max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α))`` for (ε, δ)-DP
(Kairouz et al. 2015). A confidence box lying entirely below the curve is
visible evidence of a violation; boxes straddling it are not.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from dpgp_audit.audit.result import AuditResult
from dpgp_audit.privacy.claims import (
    ZCDP,
    ApproxDP,
    Claim,
    GaussianDP,
    NeighbourRelation,
    PureDP,
)
from dpgp_audit.privacy.gdp import gdp_mu, gdp_tradeoff

__all__ = ["claim_from_dict", "claimed_tradeoff", "plot_tradeoff"]

_DEFAULT_DELTA = 1e-5


def claim_from_dict(d: dict) -> object:
    """Rebuild a claim from :meth:`as_dict` output (as stored in ``AuditResult.details``)."""
    rel = NeighbourRelation(d["relation"]["kind"], d["relation"]["d"])
    common = {"relation": rel, "proven": d.get("proven", True), "note": d.get("note", "")}
    kind = d.get("type")
    if kind == "GaussianDP":
        return GaussianDP(mu=d["mu"], **common)
    if kind == "ZCDP":
        return ZCDP(rho=d["rho"], **common)
    if kind == "PureDP":
        return PureDP(epsilon=d["epsilon"], **common)
    return ApproxDP(epsilon=d["epsilon"], delta=d["delta"], **common)


def claimed_tradeoff(claim: Claim, alpha: np.ndarray,
                     delta: float = _DEFAULT_DELTA) -> tuple[np.ndarray, str]:
    """The smallest type-II error the claim allows at each type-I error ``alpha``, and a label."""
    alpha = np.asarray(alpha, dtype=float)
    if isinstance(claim, GaussianDP):
        return gdp_tradeoff(alpha, claim.mu), f"claimed G_mu, mu={claim.mu:.3g}"
    if isinstance(claim, ZCDP):
        claim = claim.to_approx(delta)
    if isinstance(claim, ApproxDP):
        e, d = claim.epsilon, claim.delta
        f = np.maximum.reduce([np.zeros_like(alpha), 1 - d - math.exp(e) * alpha,
                               math.exp(-e) * (1 - d - alpha)])
        return f, f"claimed ({e:.3g}, {d:.2g})-DP region"
    raise TypeError(f"unsupported claim type {type(claim).__name__}")


def plot_tradeoff(results: AuditResult | Iterable[AuditResult], claim: Claim | None = None,
                  ax: object | None = None, *, log: bool = False) -> object:
    """Plot empirical trade-off points with CP boxes over the claimed trade-off curve.

    Parameters
    ----------
    results
        One or several :class:`AuditResult`. Black-box / GDP-fit results contribute
        their ``details["tradeoff"]`` points and boxes; white-box results their exact
        curve G_μ (worst pair); GDP-fit results also the curve G_{μ_lb}.
    claim
        The claim to draw (default: rebuilt from the first result's details).
    ax
        A matplotlib Axes (a new figure is made if omitted).
    log
        Log-log ROC view (FPR against 1 − FNR) instead of the linear trade-off
        view: for small δ the violation sits at tiny FPR, where the claim is the
        line TPR ≤ e^ε FPR + δ.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    res_list = [results] if isinstance(results, AuditResult) else list(results)
    if ax is None:
        _, ax = plt.subplots(figsize=(5.0, 5.0))
    if claim is None:
        for r in res_list:
            if isinstance(r.details.get("claim"), dict):
                claim = claim_from_dict(r.details["claim"])
                break
    grid = np.geomspace(1e-8, 1, 600) if log else np.linspace(0, 1, 400)

    def y_of(fnr: np.ndarray) -> np.ndarray:  # ROC (TPR) in log mode, FNR otherwise
        return 1.0 - np.asarray(fnr) if log else np.asarray(fnr)

    if claim is not None:
        curve, label = claimed_tradeoff(claim, grid)
        ax.plot(grid, y_of(curve), color="black", lw=2, label=label)
        if log:
            ax.fill_between(grid, y_of(curve), 1, color="#c0392b", alpha=0.08,
                            label="forbidden by the claim")
        else:
            ax.fill_between(grid, 0, curve, color="#c0392b", alpha=0.08,
                            label="forbidden by the claim")
        if isinstance(claim, ApproxDP) and claim.delta > 0:
            mu_c = gdp_mu(claim.epsilon, claim.delta)
            ax.plot(grid, y_of(gdp_tradeoff(grid, mu_c)), color="grey", lw=1, ls="-.",
                    label=f"G_mu implied if Gaussian, mu={mu_c:.3g}")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, r in enumerate(res_list):
        c = colours[i % len(colours)]
        t = r.details.get("tradeoff")
        if t:
            fpr, fnr = np.asarray(t["fpr"]), np.asarray(t["fnr"])
            for x0, x1, f0, f1 in zip(t["fpr_lo"], t["fpr_hi"], t["fnr_lo"], t["fnr_hi"],
                                      strict=True):
                y0, y1 = sorted((float(y_of(f0)), float(y_of(f1))))
                if log and x0 <= 0:
                    x0 = 1e-8
                ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, ec=c, lw=0.7,
                                       alpha=0.7))
            ax.plot(fpr, y_of(fnr), "o", ms=3, color=c,
                    label=f"{r.auditor}: {r.verdict.value} ({r.quantity} {r.estimate:.3g})")
        mu = r.details.get("mu") if r.auditor == "whitebox" else None
        if mu is not None and math.isfinite(mu) and mu > 0:
            ax.plot(grid, y_of(gdp_tradeoff(grid, mu)), "--", color=c,
                    label=f"whitebox exact G_mu, mu={mu:.3g} ({r.verdict.value})")
        if r.auditor == "gdp-fit" and r.estimate > 0:
            ax.plot(grid, y_of(gdp_tradeoff(grid, r.estimate)), ":", color=c,
                    label=f"G at certified mu_lb={r.estimate:.3g}")
    if log:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(1e-8, 1)
        ax.set_ylim(1e-6, 1.05)
        ax.set_ylabel("power 1 - FNR on D' (true positive rate)")
        ax.set_title("ROC (log): boxes above the curve refute the claim")
        ax.legend(fontsize=7, loc="lower right")
    else:
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_ylabel("type II error (FNR on D')")
        ax.set_title("Trade-off: boxes below the curve refute the claim")
        ax.legend(fontsize=7, loc="upper right")
    ax.set_xlabel("type I error (FPR on D)")
    return ax
