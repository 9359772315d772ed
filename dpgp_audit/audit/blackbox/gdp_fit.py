"""GDP-fit auditor: a certified lower bound on μ from one threshold test (catalogue A.3).

:func:`audit_gdp_fit`
    A lower bound on μ from the error rates of one test (Nasr et al. 2023;
    Dong, Roth & Su 2022): model-free as a statement about μ-GDP, and turned
    into an (ε, δ) statement only under the assumption that the mechanism's
    trade-off curve is Gaussian (labelled ``Guarantee.LOWER_BOUND_GDP``).

It shares scores, sampling and threshold machinery with the black-box auditor
(:mod:`~dpgp_audit.audit.blackbox.fixed`).
"""

from __future__ import annotations

import math
import time

import numpy as np

from dpgp_audit._validation import check_rng
from dpgp_audit.audit.blackbox.sampling import auto_chunk, child_rngs, prepare_split
from dpgp_audit.audit.blackbox.scores import fit_score, fixed_score
from dpgp_audit.audit.blackbox.twosample import (
    DEFAULT_DELTA,
    FIT_LEVEL,
    NO_PROOF_NOTE,
    SMOOTH_WIDTH,
    bound_verdict,
    smooth,
    tail_counts,
    tail_rates,
    threshold_grid,
    tradeoff_points,
    witness_dict,
)
from dpgp_audit.audit.result import AuditResult, Guarantee, Verdict
from dpgp_audit.audit.stats import (
    cp_upper,
    mu_ceiling,
    mu_lower_bound,
)
from dpgp_audit.contract import Executor, Mechanism
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy import gdp
from dpgp_audit.privacy.claims import ZCDP, ApproxDP, Claim, GaussianDP

__all__ = ["audit_gdp_fit"]


def _claim_mu(claim: Claim) -> tuple[float | None, str]:
    if isinstance(claim, GaussianDP):
        return claim.mu, "mu-GDP claim: the bound tests it without further assumptions"
    if isinstance(claim, ZCDP):
        return math.sqrt(2 * claim.rho), ("rho-zCDP claim compared as mu = sqrt(2 rho): valid "
                                          "if the mechanism's trade-off curve is Gaussian")
    if isinstance(claim, ApproxDP):
        if claim.delta == 0:
            return None, "pure DP claims have no Gaussian trade-off equivalent"
        return gdp.gdp_mu(claim.epsilon, claim.delta), (
            "(eps, delta) claim compared with the largest mu whose GDP implies it: a VIOLATION "
            "refutes the claim only if the mechanism's trade-off curve is Gaussian")
    raise TypeError(f"unsupported claim type {type(claim).__name__}")


def audit_gdp_fit(mechanism: Mechanism, d0: Dataset, d1: Dataset, *, n: int,
                  rng: np.random.Generator, alpha: float = 0.05, claim: Claim | None = None,
                  score: str = "auto", executor: Executor | None = None,
                  chunk_size: int | None = None, fit_fraction: float | None = None,
                  delta: float | None = None, max_fit_rows: int = 200_000,
                  threshold: str = "eer") -> AuditResult:
    """A.3 GDP fit: certified lower bound on μ from one test's (FPR, FNR).

    One threshold test is counted on fresh samples. Its threshold comes from
    the fitting split: ``threshold="eer"`` (default) takes the equal-error point
    FPR = FNR, which is where the Clopper–Pearson penalty of the GDP bound is
    smallest when the trade-off is symmetric (Gaussian, Laplace, randomized
    response: the planner's optimum is t = μ/2). It is a low-variance choice:
    the predicted bound is nearly flat in t, so maximising it on a few thousand
    fitting samples mostly picks noise (~1σ threshold spread and a 15-point
    power loss at the §4.2 sizes). ``"search"`` maximises the smoothed
    predicted bound instead (better for strongly asymmetric trade-offs). Then
    ``μ_lb = Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub)`` with one-sided Clopper–Pearson
    upper bounds at α/2 each (Nasr et al. 2023 §5; AUDITING.md §5.3.4). The
    bound is symmetric in the two orders (reversing the roles of D and D′
    and of the event gives the same μ bound), so one test covers both.

    Returns
    -------
    AuditResult
        ``auditor="gdp-fit"``, ``quantity="mu"``, guarantee ``LOWER_BOUND_GDP``.
        VIOLATION when ``μ_lb`` exceeds the claimed μ (for (ε, δ) claims: the
        largest μ implying it, which assumes a Gaussian trade-off — see
        ``details["assumption"]``); details include the implied ε at δ.
    """
    t_start = time.perf_counter()
    claim = mechanism.claim if claim is None else claim  # type: ignore[attr-defined]
    mu_c, assumption = _claim_mu(claim)
    d_report = (claim.delta if isinstance(claim, ApproxDP) and claim.delta > 0 else
                (DEFAULT_DELTA if delta is None else float(delta)))
    rng = check_rng(rng)
    fixed = fixed_score(mechanism, d0, d1, score)
    n_fit, n_cert, chunk, sampler = prepare_split(mechanism, d0, d1, n, rng, alpha, chunk_size,
                                             fit_fraction, executor, fixed)
    rng_fit, rng_cert = child_rngs(rng, 2)
    fit = fit_score(sampler, rng_fit, n_fit, score, max_fit_rows, fixed)
    chunk = auto_chunk(sampler, chunk_size, fit.dim)
    if threshold not in ("eer", "search"):
        raise ValueError(f"threshold must be 'eer' or 'search', got {threshold!r}")
    grid = threshold_grid(fit.s0, fit.s1, min(0.5, 5.0 / n_fit))
    if threshold == "eer":  # add a dense central grid for locating the equal-error point
        pooled = np.concatenate([fit.s0, fit.s1])
        grid = np.unique(np.concatenate(
            [grid, np.quantile(pooled, np.linspace(0.005, 0.995, 399), method="inverted_cdf")]))
    a0, b0 = tail_counts(fit.s0, grid)
    a1, b1 = tail_counts(fit.s1, grid)
    nf = fit.s0.size
    a = alpha / 2
    best = None
    for tail, fp_fit, tp_fit in (("upper", a0, a1), ("lower", b0, b1)):
        # pessimistic plug-in rates (see _choose_blackbox_tests: against the winner's curse)
        fpr = np.asarray(cp_upper(fp_fit, nf, FIT_LEVEL))
        fnr = np.asarray(cp_upper(nf - tp_fit, nf, FIT_LEVEL))
        pred = np.asarray(mu_lower_bound(cp_upper(fpr * n_cert, n_cert, a),
                                         cp_upper(fnr * n_cert, n_cert, a)))
        if threshold == "eer":
            gap = np.abs(fp_fit - (nf - tp_fit))
            ties = np.flatnonzero(gap == gap.min())
            j = int(ties[ties.size // 2])
        else:
            j = int(np.argmax(smooth(pred, SMOOTH_WIDTH)))
        if best is None or pred[j] > best[2]:
            best = (tail, float(grid[j]), float(pred[j]))
    assert best is not None
    tail, thr, pred = best
    thresholds = np.unique(np.concatenate([[thr], grid]))
    t_cert = time.perf_counter()
    counts = sampler.counts(rng_cert, n_cert, fit.score, thresholds)
    seconds_cert = time.perf_counter() - t_cert
    j = int(np.searchsorted(thresholds, thr))
    k0, k1 = (int(x[j]) for x in tail_rates(counts, tail))
    fp, fn_ = k0, n_cert - k1
    fpr_ub, fnr_ub = float(cp_upper(fp, n_cert, a)), float(cp_upper(fn_, n_cert, a))
    mu_lb = float(mu_lower_bound(fpr_ub, fnr_ub))
    mu_point = float(mu_lower_bound(fp / n_cert, fn_ / n_cert))
    ceiling = mu_ceiling(n_cert, alpha)
    if mu_c is None:
        verdict = Verdict.INCONCLUSIVE
        mu_c_out = math.nan
    else:
        mu_c_out = mu_c
        verdict = bound_verdict(mu_lb, ceiling, mu_c)
    implied = gdp.gdp_epsilon(d_report, mu_lb) if mu_lb > 0 else 0.0
    details = {
        "score": fit.score_name, "n_per_side": n, "n_fit": n_fit, "n_cert": n_cert,
        "tail": tail, "threshold": thr, "threshold_rule": threshold,
        "false_positives": fp, "false_negatives": fn_,
        "fpr_ub": fpr_ub, "fnr_ub": fnr_ub, "mu_point": mu_point, "predicted_on_fit": pred,
        "mu_ceiling": ceiling, "alpha_per_rate": a, "alpha_spent": alpha,
        "claim": claim.as_dict(), "assumption": assumption,  # type: ignore[attr-defined]
        "implied_epsilon": implied, "implied_epsilon_delta": d_report,
        "implied_epsilon_note": "valid only if the mechanism's trade-off curve is Gaussian",
        "tradeoff": tradeoff_points(counts, thresholds, n_cert, alpha),
        "witness": witness_dict(d0, d1), "chunks": sampler.chunks, "chunk_size": chunk,
        "seconds": {"fit": fit.seconds_fit, "certify": seconds_cert,
                    "sampling": sampler.seconds, "total": time.perf_counter() - t_start},
        "note": NO_PROOF_NOTE,
    }
    return AuditResult(auditor="gdp-fit", verdict=verdict, guarantee=Guarantee.LOWER_BOUND_GDP,
                       estimate=mu_lb, claimed=mu_c_out, quantity="mu", alpha=alpha,
                       details=details)
