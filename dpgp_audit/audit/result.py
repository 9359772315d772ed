"""What an auditor returns, with the guarantee each number carries (catalogue A.2–A.6).

Every auditor returns an :class:`AuditResult`; :func:`~dpgp_audit.audit.runner.audit_mechanism`
gathers them in an :class:`AuditReport`. Its ``guarantee`` field says what
kind of statement the estimate is — an exact value, a lower bound that holds with
confidence 1 − α without assumptions, or one that holds only under a stated
model assumption — so that reports never present "no violation found" as proof
of privacy.

Rendering lives in ``viz/``. The two ``plot`` methods here import it lazily, inside the
method: the one documented exception to "audit/ never imports viz/"
(``tests/test_layers.py`` lists it).
"""

from __future__ import annotations

import html
import math
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from dpgp_audit.audit.neighbours import NeighbourPair
    from dpgp_audit.privacy.claims import Claim

__all__ = ["AuditReport", "AuditResult", "Guarantee", "Verdict", "jsonable"]

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
    MODEL_TEST = ("goodness-of-fit of sample() against the stated mean()/cov(): a rejection "
                  "holds with confidence 1 - alpha (DKW and exact binomial tail counts, no "
                  "asymptotics)")
    GREYBOX_EXACT = ("exact for the witness pair given the noise structure recorded on "
                     "coupled runs (release verified affine in the noise drawn from the "
                     "handed generator, or drawing nothing from it: then the release is "
                     "fixed by the data, whatever it draws elsewhere); no alpha spent")
    GREYBOX_GRID = ("a lower bound for the witness pair given the noise structure recorded on "
                    "coupled runs (release verified affine in the noise drawn from the handed "
                    "generator up to rounding to a public power-of-two grid); no alpha spent")
    GREYBOX_SCALE = ("a lower bound for the witness pair given the noise structure recorded on "
                     "coupled runs (each side's release verified affine in its own Gaussian "
                     "or Laplace noise, up to rounding to the grid its outputs show, the "
                     "noise scale differing between D and D'); no alpha spent")
    GREYBOX_PART = ("a lower bound for the witness pair from the outputs verified affine in "
                    "the noise drawn from the handed generator (exactly or up to a grid), the "
                    "other outputs left out (a part of a release is a post-processing of it); "
                    "no alpha spent")
    GREYBOX_PATH = ("a lower bound for the witness pair: the exact privacy loss along paths "
                    "sampled from M(D), each step verified affine in its own noise once the "
                    "released prefix is fixed and D' reproducing the release from the noise "
                    "solved for it; under a pure epsilon claim the largest loss seen bounds "
                    "epsilon from below; no alpha spent")
    PATH_MONTE_CARLO = ("lower bound on epsilon, valid with confidence 1 - alpha given the noise "
                        "structure the grey-box path analysis recorded (each step affine in its "
                        "own noise once the released prefix is fixed): exact Clopper-Pearson "
                        "bound on the privacy loss along fresh paths of the witness pair")
    GREYBOX_LEAD = ("exploratory (grey-box coupling): leads and a pair ranking only, no "
                    "guarantee; the white-box and black-box auditors certify")


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

    @property
    def estimate_text(self) -> str:
        """``estimate`` as the tables show it (four significant digits).

        A violation certifies that the claimed value is *exceeded*: the sequential
        black-box bound, for one, is the largest value of its ε grid rejected, and the
        claim's own value is on the grid, so a bare violation reports exactly the claim.
        Where the estimate would print as the claim, it prints as ``> claim``, so that no
        table reads "VIOLATION, 1 against a claim of 1".
        """
        shown = _fmt(self.estimate)
        if self.violation and shown == _fmt(self.claimed):
            return f"> {shown}"
        return shown

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
                f"{self.estimate_text} vs claimed {self.claimed:.4g}{a}  [{self.guarantee.value}]")

    def plot(self, ax: object | None = None, claim: Claim | None = None,
             **kwargs: object) -> object:
        """Trade-off plot over the claimed curve (:func:`dpgp_audit.viz.tradeoff.plot_tradeoff`)."""
        from dpgp_audit.viz.tradeoff import plot_tradeoff

        return plot_tradeoff(self, claim, ax, **kwargs)

    def _repr_html_(self) -> str:
        colour = {"VIOLATION": "#c0392b", "NO_EVIDENCE": "#27ae60",
                  "INCONCLUSIVE": "#7f8c8d"}[self.verdict.value]
        note = "" if self.violation else f"<br><small>{NO_PROOF}</small>"
        return (f"<div><b>{self.auditor}</b>: <span style='color:{colour}'><b>"
                f"{self.verdict.value}</b></span> — {self.quantity} "
                f"{html.escape(self.estimate_text)} "
                f"vs claimed {self.claimed:.4g}<br><small>{self.guarantee.value}</small>"
                f"{note}</div>")


def jsonable(obj: object) -> object:
    """Recursively convert to JSON-safe values (non-finite floats become strings)."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        v = float(obj)
        return v if math.isfinite(v) else str(v)
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(getattr(obj, "value", None), str):  # enums
        return obj.value
    return str(obj)


@dataclass(frozen=True)
class AuditReport:
    """Everything one :func:`audit_mechanism` call found.

    Attributes
    ----------
    mechanism
        Name of the audited mechanism (registry ID or class name).
    claim
        The claim audited, as a dictionary.
    inputs
        The inputs that determine the result: n, α, auditors, dataset size, seed (if known).
    results
        One :class:`AuditResult` per auditor run.
    skipped
        Auditor name → why it was not run.
    witness
        The neighbour pair of the first violation (sensitivity counterexample,
        then white-box, then black-box), or the most distinguishable pair examined.
    timings
        Seconds per phase (the only part of a report that depends on the machine).
    guard
        The time guard: ``{"time_guard_s": limit or None, "fired": [notes]}``, one note
        per part it stopped or kept from starting (:mod:`~dpgp_audit.audit.guard`).
    """

    mechanism: str
    claim: dict
    inputs: dict
    results: tuple[AuditResult, ...]
    skipped: dict = field(default_factory=dict)
    witness: NeighbourPair | None = None
    timings: dict = field(default_factory=dict)
    guard: dict = field(default_factory=dict)

    @property
    def guard_fired(self) -> bool:
        """True when the time guard stopped some part (the audit is then incomplete)."""
        return bool(self.guard.get("fired"))

    @property
    def verdict(self) -> Verdict:
        """VIOLATION if any auditor found one; else INCONCLUSIVE if the time guard fired;
        else NO_EVIDENCE if any auditor could have found one; else INCONCLUSIVE.
        """
        verdicts = {r.verdict for r in self.results}
        if Verdict.VIOLATION in verdicts:
            return Verdict.VIOLATION
        if self.guard_fired:  # an audit the guard cut short is never "no evidence"
            return Verdict.INCONCLUSIVE
        if Verdict.NO_EVIDENCE in verdicts:
            return Verdict.NO_EVIDENCE
        return Verdict.INCONCLUSIVE

    @property
    def violation(self) -> bool:
        """True when some auditor refuted the claim."""
        return self.verdict is Verdict.VIOLATION

    @property
    def compared(self) -> bool:
        """True when some auditor besides the exploratory grey-box survey produced a result.

        False when every other auditor was skipped (the mechanism refused every pair, or
        supports none of the requested auditors): such a report speaks neither for nor
        against the claim.
        """
        return any(r.auditor != "greybox" for r in self.results)

    def result(self, auditor: str) -> AuditResult | None:
        """The result of one auditor, or ``None`` if it did not run."""
        for r in self.results:
            if r.auditor == auditor:
                return r
        return None

    def as_dict(self) -> dict:
        """JSON-ready report: inputs, every estimate with its guarantee, witness, timings."""
        return jsonable({
            "mechanism": self.mechanism,
            "claim": self.claim,
            "verdict": self.verdict.value,
            "inputs": self.inputs,
            "results": [r.as_dict() for r in self.results],
            "skipped": self.skipped,
            "witness": None if self.witness is None else self.witness.as_dict(),
            "timings": self.timings,
            "guard": self.guard,
            "note": NO_PROOF,
        })  # type: ignore[return-value]

    def table(self) -> str:
        """Plain-text verdict table."""
        lines = [f"Audit of {self.mechanism}: {self.verdict.value}",
                 f"  claim: {self.claim.get('describe', self.claim)}"]
        lines += _provenance_lines(self.inputs)
        header = f"  {'auditor':<12} {'verdict':<13} {'quantity':<11} {'estimate':>10} " \
                 f"{'claimed':>10}  guarantee"
        lines += [header, "  " + "-" * (len(header) + 20)]
        for r in self.results:
            lines.append(f"  {r.auditor:<12} {r.verdict.value:<13} {r.quantity:<11} "
                         f"{r.estimate_text:>10} {_fmt(r.claimed):>10}  {r.guarantee.value}")
            extra = _extra_line(r)
            if extra:
                lines.append(f"  {'':<12} {extra}")
        for name, why in self.skipped.items():
            lines.append(f"  {name:<12} {'SKIPPED':<13} {why}")
        if self.witness is not None:
            lines.append(f"  witness pair: {self.witness.label}")
        for note in self.guard.get("fired", []):
            lines.append(f"  TIME GUARD: {note.get('part', '?')}: {note.get('message', '')}")
        lines.append(f"  time: {self.timings.get('total', 0.0):.2f} s")
        if not self.violation:
            lines.append(f"  Note: {NO_PROOF}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def _repr_html_(self) -> str:
        colour = {"VIOLATION": "#c0392b", "NO_EVIDENCE": "#27ae60", "INCONCLUSIVE": "#7f8c8d"}
        rows = "".join(
            f"<tr><td>{html.escape(r.auditor)}</td><td style='color:{colour[r.verdict.value]}'>"
            f"<b>{r.verdict.value}</b></td><td>{r.quantity}</td>"
            f"<td>{html.escape(r.estimate_text)}</td>"
            f"<td>{_fmt(r.claimed)}</td><td><small>{html.escape(r.guarantee.value)}</small></td>"
            "</tr>" for r in self.results)
        rows += "".join(f"<tr><td>{html.escape(k)}</td><td colspan=5><i>skipped: "
                        f"{html.escape(v)}</i></td></tr>" for k, v in self.skipped.items())
        v = self.verdict.value
        note = "" if self.violation else f"<p><small>{html.escape(NO_PROOF)}</small></p>"
        wit = ("" if self.witness is None else
               f"<p>Witness pair: <code>{html.escape(self.witness.label)}</code></p>")
        # where the code and data came from, and the header's warnings (NOT REPRODUCIBLE,
        # DATA NOT READ): a notebook shows this, not the text table
        said = "".join(f"<br><small>{html.escape(line.strip())}</small>"
                       for line in _provenance_lines(self.inputs))
        return (f"<div><p><b>Audit of {html.escape(self.mechanism)}</b>: "
                f"<span style='color:{colour[v]}'><b>{v}</b></span><br>"
                f"<small>{html.escape(str(self.claim.get('describe', '')))}</small>{said}</p>"
                "<table><tr><th>auditor</th><th>verdict</th><th>quantity</th><th>estimate</th>"
                f"<th>claimed</th><th>guarantee</th></tr>{rows}</table>{wit}{note}</div>")

    def plot(self, path: str | None = None, ax: object = None) -> object:
        """Empirical trade-off points with confidence boxes over the claimed curve.

        Returns the matplotlib figure; writes a PNG when ``path`` is given.
        """
        from dpgp_audit.viz.audit_report import plot_report

        return plot_report(self, path=path, ax=ax)


def _provenance_lines(inputs: dict) -> list[str]:
    """Where the audited code and data came from, and whether the seed repeats the draws."""
    out = []
    src = inputs.get("source")
    if isinstance(src, dict):
        out.append(f"  source: {src.get('path') or src.get('spec')} "
                   f"(sha256 {src.get('sha256') or 'n/a'})")
    data = inputs.get("data_file")
    if isinstance(data, dict):
        out.append(f"  data: {data.get('path')} (sha256 {data.get('sha256')}; "
                   f"n = {data.get('n')}, dim = {data.get('dim')})")
    if inputs.get("seeded_globals"):
        out.append(f"  SEEDED BY THE AUDIT: the mechanism draws from {inputs['seeded_globals']}")
    if inputs.get("reproducible") is False:
        out.append("  NOT REPRODUCIBLE: the mechanism draws from "
                   f"{inputs.get('reproducibility') or 'entropy the audit cannot seed'}; "
                   "the seed fixes the auditors' choices, not its noise, and the grey-box "
                   "auditor cannot couple D and D' on one seed (no bound from it): the noise "
                   "is judged by the black-box auditor alone, which needs far more draws for "
                   "a small excess over the claim; draw from the rng that sample() is handed "
                   "(np.random.* or random is seeded for you by the CLI, and by "
                   "dpgp_audit.adapters.seed_globals)")
    if inputs.get("data_read") is False:
        out.append(f"  DATA NOT READ: {inputs.get('data_note') or 'no pair changed the release'}")
    return out


#: The sequential line's word on a bound it stopped at: the size of a leak is not measured.
STOPPED_NOTE = ("; it stops at its first certified violation, so its bound lies just above "
                "the claim however large the leak (the grey-box, white-box and precision "
                "lines size it where they can; --samples with --mode fixed measures it)")
#: The grey-box line's word when no pair it coupled was affine in its recorded noise.
NOT_ADDITIVE_NOTE = ("; no pair was affine in its recorded noise, so no bound (the noisy "
                     "value passed through a transform such as a probit, a sigmoid, an "
                     "exponential, a clip or an argmax (a noisy selection), or noise that "
                     "is not added?): the other "
                     "auditors judge such a release")
#: ... when pairs drew noise it has no exact bound for, or had too few releases to fit.
OTHER_NOISE_NOTE = ("; the noise drawn ({draws}) is neither Gaussian nor Laplace, which the "
                    "coupled runs give no exact bound for{integers}: the other auditors "
                    "judge it")
#: ... and why integers drawn are noise too.
OTHER_NOISE_INTEGERS = (" (integers count here, whether an exact sampler's words or a seed "
                        "for another generator)")
UNFITTED_NOTE = ("; {n} pair(s) unfitted: one release draws more noise values than the "
                 "survey's calls could fit (its row cap or its release budget), so those "
                 "pairs have a heuristic score only")
#: ... when the survey stopped fitting because every fit it checked failed.
UNFITTED_NOT_ADDITIVE_NOTE = ("; {n} pair(s) unfitted: the affine fits checked on earlier "
                              "pairs all failed (the noise reaches the output through a "
                              "transform: a clamp, a rescaling, a selection; or an iterative "
                              "release computes later steps where earlier noise put them; or "
                              "the release is rounded to a grid while each output sums "
                              "several noise values, a tree or prefix sums, which the fit "
                              "cannot undo), so the survey stopped fitting and those pairs "
                              "have a heuristic score only")


def _support_screen_line(d: dict, violation: bool) -> str:
    """The float-support screen's count, and what it means when its test certified nothing."""
    n = int(d["support_visible"])
    line = f"; float supports differ visibly for {n} pair(s)"
    if n and not violation and d.get("support_certified"):
        # a pilot's outputs seen on one side only: a lead the test then judged, not a leak
        line += (" on the pilot (outputs seen on one side only, as rare values are); the "
                 "certifying test on fresh draws found no difference")
    return line


def _greybox_notes(d: dict) -> str:
    """What the grey-box line says of the pairs it gave no bound, by cause (A.9)."""
    st = d.get("statuses", {})
    out = ""
    if st.get("not-additive") and set(st) <= {"not-additive", "unchanged"}:
        out += NOT_ADDITIVE_NOTE
    if st.get("other-noise") and set(st) <= {"other-noise", "unchanged", "unfitted"}:
        drawn = d.get("other_noise_draws", [])
        out += OTHER_NOISE_NOTE.format(
            draws=", ".join(drawn) or "?",
            integers=OTHER_NOISE_INTEGERS if "integers" in drawn else "")
    gave_up = int(d.get("unfitted_not_additive", 0))
    if gave_up:
        out += UNFITTED_NOT_ADDITIVE_NOTE.format(n=gave_up)
    if st.get("unfitted", 0) > gave_up:
        out += UNFITTED_NOTE.format(n=st["unfitted"] - gave_up)
    return out


def _fmt(v: float) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "n/a"
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.4g}"


def _support_reading_line(d: dict) -> str:
    """The precision line's word on a float-support witness: signed zeros, atoms, low bits
    or magnitudes.
    """
    r = d.get("support_reading") if d.get("witness_test") == "float support" else None
    if not isinstance(r, dict):
        return ""
    tvs = (f"total variation of exponents {_fmt(float(r['tv_exponent']))}, of low bits "
           f"{_fmt(float(r['tv_low_bits']))}")
    if r.get("reading") == "signed zeros":
        return (f"; witness by float support: -0.0 on one side only "
                f"({_fmt(float(r.get('negative_zero_share', math.nan)))} of its outputs), "
                "the sign of a zero that follows the data (0.0 * m is -0.0 for m < 0): "
                "write the zero as a literal 0.0")
    if r.get("reading") == "atoms":
        return (f"; witness by float support: an exact output value recurs on one side "
                f"and never on the other ({_fmt(float(r.get('atom_share', math.nan)))} of "
                "its outputs), a point mass whose place depends on the data (a clip, "
                "threshold or fallback at a data-valued point), not a rounding effect")
    if r.get("reading") == "integers":
        return (f"; witness by float support on whole-number outputs ({tvs}): their "
                "categories are the values' magnitudes and parities, so the law of the "
                "counts or indices released depends on the data beyond the claim (a count "
                "or a choice released with too little noise), not float rounding")
    if r.get("reading") == "discrete":
        return (f"; witness by float support on a release of {r.get('distinct_values')} "
                f"exact values in all ({tvs}): the categories are which values occur, so "
                "the law of the values released (a selection, a grid point chosen by a "
                "noisy scan) depends on the data beyond the claim, not float rounding")
    if r.get("reading") == "magnitudes":
        return (f"; witness by float support, whose categories differ mostly in their "
                f"exponents ({tvs}): the values' law depends on the data, not only their "
                "low bits; a calibration error shows here too (see the other lines)")
    if r.get("reading") == "grids":
        g0, g1 = r.get("grid_exponents", (math.nan, math.nan))
        return (f"; witness by float support: each side's outputs lie on a power-of-two "
                f"grid of its own (2^{g0} on one, 2^{g1} on the other): a float-safe "
                "release rounds to a grid set by its noise scale, so that scale moves with "
                "the data (a scale read off the private data), not the float rounding")
    return (f"; witness by float support: the low bits depend on the data ({tvs}); three "
            "causes show so: a query and its noise added in floats (the float-release "
            "leak), an exact value read off the data added to or multiplied into a noisy "
            "one after its noise (an un-noised width, scale or covariance), or a noise law "
            "that moves with the data (a calibration error; see the other lines)")


def _boundary_line(b: dict | None) -> str:
    """The structure-boundary search's part of the grey-box line (``""`` when it did not run)."""
    if not b or "skipped" in b:
        return ""
    found = len(b.get("pairs", []))
    return (f"; structure-boundary search: {len(b.get('boundaries', []))} boundary(ies), "
            f"{found} pair(s) added, {b.get('calls')} coupled calls")


def _positions_line(p: dict | None) -> str:
    """The substitution-position search's part of the grey-box line (``""``: it did not run)."""
    if not p or "skipped" in p:
        return ""
    flat = (", flipping the target moved the release alike at every position, so the row "
            "was moved between corners of the input box and out of a cluster of every input "
            "at one corner" if p.get("flat") else "")
    return (f"; position search (row {p.get('row')} substituted): {len(p.get('pairs', []))} "
            f"pair(s) added{flat}, {p.get('calls')} coupled calls")


def _part_line(r: AuditResult) -> str:
    """How much of the witness's release a part bound covers (``""`` for other bounds)."""
    w = r.details.get("witness_coupling") or {}
    if r.guarantee is not Guarantee.GREYBOX_PART or "outputs" not in w or "delta" not in w:
        return ""
    return (f"; the bound covers {len(w['outputs'])} of the witness's {len(w['delta'])} "
            f"outputs, those affine in their noise (later steps of an iterative release and "
            f"non-linear outputs are left out), so the whole release may leak more")


def _paths_line(p: dict | None) -> str:
    """The path analysis's part of the grey-box line (``""``: not run, or not iterative)."""
    if not p:
        return ""
    rows = p.get("analysed") or []
    if not rows:
        if p.get("out_of_scope", True):
            return ""
        return (f"; path analysis of {p.get('pairs')} pair(s) (an iterative release?) "
                f"bounded nothing: {p.get('reason')}")
    if "kl" in rows[0]:  # a claim with delta > 0: the mean loss, a lead at most
        top = max(rows, key=lambda r: r["kl"])
        return (f"; path analysis of an iterative release ({top['steps']} steps): "
                f"{len(rows)} pair(s), {p.get('calls')} calls, mean privacy loss (a point "
                f"estimate of KL) up to {_fmt(float(top['kl']))} against "
                f"{_fmt(float(top['kl_allowed']))} for a Gaussian release meeting the claim"
                + ("; the largest is handed to the black-box part's path Monte Carlo"
                   if p.get("lead") else ""))
    top = max(rows, key=lambda r: r["largest_loss"])
    return (f"; path analysis of an iterative release ({top['steps']} steps): "
            f"{len(rows)} pair(s), {p.get('calls')} calls, largest privacy loss on a sampled "
            f"path {_fmt(float(top['largest_loss']))}")


def _group_sizes_line(g: dict | None) -> str:
    """The group-size step's part of the grey-box line (``""`` when it did not run)."""
    if not g or "skipped" in g:
        return ""
    return (f"; a noise law moved with the data, so {len(g.get('pairs', []))} pair(s) with "
            "an input group of one or two rows were added")


#: Said by a sequential black-box audit that found nothing on the pairs a pilot chose.
UNBET_PAIRS_HINT = ("; the other {rest} piloted pair(s) were not bet on: without a model, a "
                    "few draws per pair chose these {k}, and a leak those draws cannot rank "
                    "(a selection, a count, a mixture, a non-linear function of the noise) "
                    "may sit on another pair: --evidence "
                    "(evidence=True) bets on every pair, in about 2-4x the time")


def _whitebox_pairs_text(d: dict) -> str:
    """Which pairs the white-box μ covers: with the noise covariance moving with the data on
    some pairs, the exact μ is the worst over the others only, and those pairs have the
    Monte Carlo route's ε (the estimate) instead.
    """
    pairs = d.get("pairs")
    unequal = int(d.get("unequal_covariance_pairs") or 0)
    if not unequal:
        return f"worst pair mu = {_fmt(float(d['mu']))} over {pairs} pairs; "
    mc = d.get("monte_carlo") or {}
    worst = max((row.get("epsilon_lower", 0.0) for row in mc.get("rows", [])), default=None)
    tail = (f" (Monte Carlo epsilon lower bound {_fmt(float(worst))} at delta "
            f"{_fmt(float(mc['delta_claim']))})" if worst is not None and "delta_claim" in mc
            else "")
    mc_text = (f"{unequal} pair(s) whose noise covariance moves with the data, bounded by "
               f"Monte Carlo{tail}; ")
    if "mu" not in d:
        return mc_text
    equal = pairs - unequal if isinstance(pairs, int) else "the other"
    return (f"worst pair mu = {_fmt(float(d['mu']))} over the {equal} pair(s) whose noise "
            f"covariance is the same on D and D'; " + mc_text)


def _unbet_pairs_hint(r: AuditResult) -> str:
    """What to try when the cap was drawn on pilot-chosen pairs and nothing was found."""
    d = r.details
    k, ranked = int(d.get("pairs_confirmed", 1)), int(d.get("used", {}).get("pilot_pairs", 0))
    if (r.verdict is not Verdict.NO_EVIDENCE or d.get("stopped") != "max_n"
            or d.get("evidence") or d.get("ranked_by_model", True) or ranked <= k):
        return ""
    return UNBET_PAIRS_HINT.format(rest=ranked - k, k=k)


def _evidence_text(ev: dict | None) -> str:
    """The evidence pairs of a sequential audit, in words (``""`` when there were none)."""
    if not ev:
        return ""
    return (f"; {ev['pairs']} more pair(s) bet as evidence ({ev['draws_per_side']} draws/side "
            f"in all, {ev['warmup_per_side']} each, then at most {ev['keep']} at a time "
            "while their wealth grew)")


def _path_certification_text(c: dict, *, certified: bool) -> str:
    """The path Monte Carlo's part of the black-box line (A.9's lead under delta > 0)."""
    if "skipped" in c:
        return (f"the grey-box's iterative lead ({c['label']}) was not tested by Monte Carlo: "
                f"{c['skipped']}")
    if "reason" in c:
        return (f"the grey-box's iterative lead ({c['label']}) was to be tested by Monte Carlo "
                f"over {c['paths']} paths at alpha {_fmt(float(c['alpha']))}, but the path "
                f"analysis failed on them ({c['reason']})")
    head = (f"privacy loss along {c['paths']} fresh paths of the grey-box's iterative lead "
            f"({c['label']}, {c['order']}): {c['count']} of them beyond eps "
            f"{_fmt(float(c['epsilon_claim']))}, so delta >= {_fmt(float(c['delta_lower']))} "
            f"there (exact Clopper-Pearson at alpha {_fmt(float(c['alpha']))}) against "
            f"{_fmt(float(c['delta_claim']))}")
    if certified:
        return head + " (a quarter of this part's alpha; the sampled audit was not needed)"
    return head + ": not certified, so the sampled audit ran with the rest of alpha"


def _extra_line(r: AuditResult) -> str:
    d = r.details
    if r.auditor == "blackbox" and d.get("mode") == "sequential":
        used = d.get("used", {})
        pilot = (f"; pairs ranked by {d['ranking']}" if d.get("ranking") else "") + \
            (f" ({used['pilot_pairs']} piloted with {used['pilot_draws']} draws/side)"
             if used.get("pilot_pairs") else "")
        return (f"sequential (anytime-valid): {d.get('n_per_side')} draws/side/pair of at most "
                f"{d.get('max_n')}, stopped by {d.get('stopped')}; eps ceiling "
                f"{_fmt(d.get('epsilon_ceiling', math.nan))}; "
                f"{d.get('pairs_confirmed', 1)} pair(s) bet on together" + pilot
                + _evidence_text(d.get("evidence"))
                + (f"; witness score: {d['score']}" if d.get("score") else "")
                + (STOPPED_NOTE if d.get("stopped") == "violation" else "")
                + _unbet_pairs_hint(r)
                + ("; " + _path_certification_text(d["path_certification"], certified=False)
                   if "path_certification" in d else ""))
    if r.auditor == "blackbox" and d.get("mode") == "paths":
        return _path_certification_text(d["path_certification"], certified=True)
    if r.auditor == "blackbox":
        ceiling = _fmt(d.get("epsilon_ceiling", math.nan))
        return (f"eps ceiling with {d.get('n_cert', '?')} certification samples/side: "
                f"{ceiling}; "
                f"pairs confirmed: {d.get('pairs_confirmed', 1)} (Bonferroni); "
                f"scores tried: {', '.join(map(str, d.get('candidates', [d.get('score')])))}; "
                f"{d.get('bonferroni', '')}")
    if r.auditor == "model-check":
        p = d.get("power", {})
        tp = d.get("tail_power", {})
        sets = len(d.get("datasets", [])) or 1
        tails = (f"; tail counts: {d.get('tail_rejected', 0)} of "
                 f"{sets * int(d.get('tail_tests_per_dataset', 0))} rejected on "
                 f"{d.get('tail_n_per_dataset')} draws per dataset, power "
                 f"{_fmt(tp['power'])} against a mass beyond {tp['threshold']:g} sd below "
                 f"{_fmt(tp['mass_ratio_below'])} of the Gaussian's"
                 if "mass_ratio_below" in tp else "")
        ks = d.get("ks_rejected", len(d.get("rejected", [])))
        return (f"{ks} of {sets * int(d.get('tests_per_dataset') or 0)} tests over {sets} "
                f"dataset(s) rejected; power 0.8 against sd ratio outside "
                f"[{_fmt(p.get('sd_ratio_below', math.nan))}, "
                f"{_fmt(p.get('sd_ratio_above', math.nan))}] or a mean shift > "
                f"{_fmt(p.get('mean_shift', math.nan))} sd along a tested direction" + tails)
    if r.auditor == "sensitivity":
        loc, glob = (_fmt(float(d.get(k, math.nan))) for k in ("local_sensitivity",
                                                               "global_searched"))
        line = (f"largest found at D: {loc}; searched globally: {glob} (both lower bounds "
                f"on the sensitivity, found by search); {d.get('evaluations')} queries")
        nn = d.get("noise_norm")
        if nn:  # the declared norm is smaller than the one the claim's usual noise needs
            line += (f"; in {nn['norm']}, the norm {nn['noise']} needs, a change reaches "
                     f"{_fmt(float(nn['largest']))} ({_fmt(float(nn['ratio']))}x the bound): "
                     f"the {d.get('norm')} bound suits only noise whose density falls with "
                     f"the {d.get('norm')} norm (a K-norm mechanism)")
        return line
    if r.auditor == "whitebox" and ("mu" in d or d.get("unequal_covariance_pairs")):
        return (_whitebox_pairs_text(d) + f"{d.get('scope', '')}"
                f"{'; ' + d['noise_drawn'] if 'noise_drawn' in d else ''}"
                f"{'; ' + d['model_check'] if 'model_check' in d else ''}")
    if r.auditor == "greybox":
        st = d.get("statuses", {})
        return (f"coupled runs (same seed on D and D'): {d.get('releases_per_side')} "
                f"releases/side over {d.get('pairs')} pairs; "
                + ", ".join(f"{k} {v}" for k, v in st.items())
                + _greybox_notes(d)
                + f"; {len(d.get('leads', []))} lead(s) handed on (exploratory)"
                + _boundary_line(d.get("boundary"))
                + _positions_line(d.get("positions"))
                + _group_sizes_line(d.get("group_sizes")) + _part_line(r)
                + _paths_line(d.get("paths"))
                + (f"; the estimate is the bound search's ceiling "
                   f"({_fmt(float(d['estimate_at_ceiling']))}): the leak may be far larger"
                   if "estimate_at_ceiling" in d else "") + "; no alpha spent")
    if r.auditor == "precision":
        return (f"float spacing / noise sd at the largest legal values: "
                f"{_fmt(float(d.get('max_ratio', 0.0)))}; rounding visible for "
                f"{d.get('visible', 0)} of {d.get('candidates', '?')} pairs "
                f"({d.get('refused', 0)} refused by the mechanism)"
                + (f"; {d['support_skipped']}" if "support_skipped" in d else
                   _support_screen_line(d, r.violation)
                   if "support_visible" in d else "")
                + (_support_reading_line(d) if r.violation else "")
                + ("" if d.get("domain_y_bound") is not None else
                   "; no declared domain, so huge targets were probed: declare "
                   "claim.domain (privacy/domain.py)"))
    if r.auditor == "gdp-fit":
        implied = _fmt(d.get("implied_epsilon", math.nan))
        return f"implied eps (Gaussian trade-off assumed): {implied}"
    return ""
