"""What an auditor returns, with the guarantee each number carries (catalogue A.2–A.6).

Every auditor returns an :class:`AuditResult`. Its ``guarantee`` field says what
kind of statement the estimate is — an exact value, a lower bound that holds with
confidence 1 − α without assumptions, or one that holds only under a stated
model assumption — so that reports never present "no violation found" as proof
of privacy.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from enum import StrEnum

__all__ = ["AuditResult", "Guarantee", "Verdict"]

NO_PROOF = ("An auditor that finds no violation has not proved the mechanism private: "
            "it only failed to find evidence against the claim with the tests it ran.")


class Verdict(StrEnum):
    """Outcome of one audit."""

    VIOLATION = "VIOLATION"
    """The claim is refuted (with confidence 1 − α, or exactly for white-box checks)."""
    NO_EVIDENCE = "NO_EVIDENCE"
    """No violation found. Not a proof of privacy."""
    INCONCLUSIVE = "INCONCLUSIVE"
    """The test could not have refuted the claim (e.g. the ε ceiling at this n is below it)."""


class Guarantee(StrEnum):
    """What an estimate means."""

    EXACT = "exact (analytic, up to floating point)"
    LOWER_BOUND = "lower bound on epsilon, valid with confidence 1 - alpha (no assumptions)"
    LOWER_BOUND_GDP = ("lower bound on mu, valid with confidence 1 - alpha; epsilon implied "
                       "only if the trade-off curve is Gaussian")
    LOWER_BOUND_GAUSSIAN = ("lower bound valid with confidence 1 - alpha assuming Gaussian "
                            "noise with the stated covariance")
    MONTE_CARLO = "Monte Carlo estimate with an exact Clopper-Pearson interval"
    COUNTEREXAMPLE = "definitive counterexample (deterministic query, witness pair attached)"
    SEARCH_LOWER_BOUND = "largest value found by search: a lower bound on the true supremum"
    POINT_ESTIMATE = "point estimate (no confidence guarantee)"


@dataclass(frozen=True)
class AuditResult:
    """One auditor's finding for one mechanism.

    Attributes
    ----------
    auditor
        e.g. ``"whitebox"``, ``"blackbox-cp"``, ``"gdp-fit"``, ``"sensitivity"``.
    verdict
        :class:`Verdict`.
    guarantee
        :class:`Guarantee` of ``estimate``.
    estimate
        The headline number (ε lower bound, exact ε, μ lower bound, or sensitivity found).
    claimed
        The claimed value it is compared with (ε, μ or the sensitivity bound).
    quantity
        What ``estimate`` and ``claimed`` measure: ``"epsilon"``, ``"mu"``, ``"sensitivity"``.
    alpha
        Failure probability of the statistical guarantee (``None`` if exact).
    details
        JSON-ready extra information: counts, thresholds, ceilings, timings,
        ``"witness"`` (the offending neighbour pair, as lists) and so on.
    """

    auditor: str
    verdict: Verdict
    guarantee: Guarantee
    estimate: float
    claimed: float
    quantity: str = "epsilon"
    alpha: float | None = None
    details: dict = field(default_factory=dict)

    @property
    def violation(self) -> bool:
        """True when the verdict is VIOLATION."""
        return self.verdict is Verdict.VIOLATION

    def as_dict(self) -> dict:
        """JSON-ready dictionary (infinite values become the strings 'inf'/'-inf')."""
        out = asdict(self)
        out["verdict"] = self.verdict.value
        out["guarantee"] = self.guarantee.value
        for key in ("estimate", "claimed"):
            if isinstance(out[key], float) and not math.isfinite(out[key]):
                out[key] = str(out[key])
        return out

    def summary(self) -> str:
        """One line for tables."""
        a = "" if self.alpha is None else f", alpha={self.alpha:g}"
        return (f"{self.auditor:<14} {self.verdict.value:<12} {self.quantity} "
                f"{self.estimate:.4g} vs claimed {self.claimed:.4g}{a}  [{self.guarantee.value}]")

    def plot(self, ax: object | None = None, claim: object | None = None,
             **kwargs: object) -> object:
        """Trade-off plot over the claimed curve (:func:`dpgp_audit.viz.tradeoff.plot_tradeoff`)."""
        from dpgp_audit.viz.tradeoff import plot_tradeoff

        return plot_tradeoff(self, claim, ax, **kwargs)

    def _repr_html_(self) -> str:
        colour = {"VIOLATION": "#c0392b", "NO_EVIDENCE": "#27ae60",
                  "INCONCLUSIVE": "#7f8c8d"}[self.verdict.value]
        note = "" if self.violation else f"<br><small>{NO_PROOF}</small>"
        return (f"<div><b>{self.auditor}</b>: <span style='color:{colour}'><b>"
                f"{self.verdict.value}</b></span> — {self.quantity} {self.estimate:.4g} "
                f"vs claimed {self.claimed:.4g}<br><small>{self.guarantee.value}</small>"
                f"{note}</div>")
