"""Auditors as pluggable parts: one protocol, one registry (catalogue A.1–A.9).

:func:`~dpgp_audit.audit.runner.audit_mechanism` is a loop over **parts**. A part is one
auditor behind the :class:`AuditorPart` protocol:

``name: str``
    The auditor's name in ``auditors=``, in ``report.skipped`` and in the timings.
``statistical: bool``
    Whether it may spend a share of the family-wise level α (a test on samples), or is
    exact/deterministic (the sensitivity search).
``needs(mechanism, relation) -> str | None``
    ``None`` when the part applies to this mechanism under this neighbour relation, else
    the reason it is skipped (recorded in ``report.skipped``; such a part spends no α).
``allowance(settings) -> Allowance``
    The deterministic work it may do, in :class:`Allowance` units (draws per side, pilot
    draws, pairs, queries, Monte Carlo draws), computed from the :class:`AuditSettings`
    only — never seconds, never the machine's load. Each part's allowance follows from
    the one draw cap ``n`` (:func:`pilot_draws`), so no part can starve another: the
    runner records every part's allowance beside its result (``details["allowance"]``),
    and a part records what it used (``details["used"]``, in the same units).
``spends_alpha(context) -> bool``
    Whether it takes a share of α on this run (default: ``statistical`` and it applies).
``run(context) -> AuditResult | str``
    The audit itself, on the shared :class:`AuditContext`; a string is a reason to skip
    that only the run could find (e.g. no generated pair is accepted by the mechanism).
    The report files the result under the part's name (its ``auditor`` field).
``witness(result, context) -> NeighbourPair | None``
    The pair a violating result exposes (default: the one its details record). The
    report's witness is that of the first violation, in run order.

Subclass :class:`AuditorPart` to inherit the defaults of ``spends_alpha`` and
``witness`` (a class that does not subclass it must define every member). The parts are
stateless: what one run shares — the mechanism, the data, the claim, the neighbour
pairs, the random streams, each part's α share, the results so far — lives in the
:class:`AuditContext`, whose inputs are frozen and whose :class:`AuditState` (pairs,
results, witness) is the one mutable piece: a part may put a pair first in
``context.pairs`` (the sensitivity part puts its witness there, for every later part);
the runner alone records results and the witness.

**The ranking hook.** The black-box part confirms the top pairs of a *ranking*. A part
that runs before it may fill ``context.state.ranking`` (pairs with scores, best first)
and ``state.ranking_source``; the black-box (and GDP-fit) part then confirms that
ranking's top pairs instead of piloting every pair — the grey-box auditor (A.9) ranks
pairs by coupled runs this way, which for slow mechanisms replaces the pilot. Without
one, the black-box part ranks by :func:`~dpgp_audit.audit.neighbours.rank_pairs` (model
score, then a pilot of ``pilot_draws`` per side and pair) and stores its ranking there,
so the pairs are ranked once per audit.

**The time guard** (:mod:`~dpgp_audit.audit.guard`): ``context.guard`` is the audit's
one wall-clock limit. A part that draws checks it between units of work; when it fires
the part stops with an ``INCONCLUSIVE`` result that says so
(``details["time_guard"]``), and a part that had not started is skipped with the guard's
note. Nothing else in a part may look at the clock.

:data:`PARTS` lists the built-in parts in the order they run (:data:`AUDITORS` is their
names); :data:`DEFAULT_AUDITORS` is the default path's choice among them. Adding an
auditor means writing one part and adding it to :data:`PARTS` (and, for the default
path, its name to :data:`DEFAULT_AUDITORS`); a caller can also hand
``audit_mechanism(..., parts=...)`` a list of its own (``docs/auditors.md``, "Adding an
auditor"). This follows the testers of DP-Auditorium (Kong et al. 2024), where each
tester is one object behind one interface and the driver only loops.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from dpgp_audit.audit.defaults import SEQUENTIAL_HEADROOM, pilot_draws
from dpgp_audit.audit.guard import TimeGuard
from dpgp_audit.audit.neighbours import NeighbourPair, rank_pairs
from dpgp_audit.audit.result import AuditResult, Guarantee, Verdict
from dpgp_audit.contract import (
    ContractError,
    DiscreteRelease,
    Executor,
    GaussianRelease,
    Mechanism,
    SensitivityQuery,
)
from dpgp_audit.dataset import Dataset
from dpgp_audit.privacy.claims import Claim, Neighbour, NeighbourRelation

if TYPE_CHECKING:
    from dpgp_audit.audit.precision import PrecisionScreen

__all__ = ["AUDITORS", "DEFAULT_AUDITORS", "MODEL_CHECK_ALPHA_FRACTION", "PARTS", "Allowance",
           "AuditContext", "AuditSettings", "AuditState", "AuditorPart", "BlackBoxPart",
           "GdpFitPart", "GreyBoxPart", "ModelCheckPart", "PrecisionPart", "SensitivityPart",
           "WhiteBoxPart", "guard_result", "witness_in"]


# ------------------------------------------------------------------ what parts share

@dataclass(frozen=True)
class Allowance:
    """The deterministic work one auditor may do in one audit (never seconds).

    Units that do not apply to a part stay 0.

    Attributes
    ----------
    draws
        Releases per side and pair for certification: exactly this many in fixed mode,
        at most this many in sequential mode (A.3, A.8); per dataset for the model check.
    pilot_draws
        Releases per side for exploration (ranking pairs, A.7's screen); never certifies.
    pairs
        Pairs certified (Bonferroni or averaged wealth over them); ``None``: every pair
        the part is given (the white-box part).
    queries
        Deterministic query evaluations (the sensitivity search, A.4).
    mc_draws
        Monte Carlo draws per pair and order (white-box pairs with unequal covariances).
    """

    draws: int = 0
    pilot_draws: int = 0
    pairs: int | None = 0
    queries: int = 0
    mc_draws: int = 0

    def as_dict(self) -> dict:
        """JSON-ready form (the report's ``details["allowance"]``)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class AuditSettings:
    """The caller's settings of one audit, validated (``audit_mechanism``'s keywords).

    Attributes
    ----------
    n
        Draws per side: exact in fixed mode, a cap per side and pair in sequential mode.
    alpha
        Family-wise significance level of the whole audit.
    mode
        ``"sequential"`` or ``"fixed"`` (:data:`~dpgp_audit.audit.defaults.MODES`).
    n_pairs
        Top-ranked pairs the black-box part confirms.
    budget
        Query budget of the sensitivity search.
    n_mc
        Monte Carlo draws per pair and order for the white-box part.
    score, fit_fraction
        The black-box score and fitting share (``audit_blackbox``).
    y_bound
        Declared target bound for outputs-only pair generation.
    labels
        Declared class labels (``PublicDomain(labels=...)``), sorted; ``None``: none.
    x_bound
        Declared input bound (``PublicDomain(x_bound=...)``); ``None``: none.
    time_guard_s
        The wall-clock guard of the whole audit (``None``: none); a guard, never a
        budget (:mod:`~dpgp_audit.audit.guard`).
    cost_per_draw_s
        The mechanism's *declared* seconds per draw (``None``: not declared); it may
        shape how draws are chunked and, when ``n`` was not given, the draw cap, never
        what a draw is.
    evidence
        Sequential black-box only: every generated pair beyond the confirmed ones bets too,
        drawing as its wealth earns (:class:`~dpgp_audit.audit.blackbox.sequential._Evidence`);
        ``False`` (default): the confirmed pairs alone.
    precision_support
        Whether A.7 also runs its float-support test (issue 20 §4; on by default): where
        A.7's draws reach :data:`~dpgp_audit.audit.precision.SUPPORT_MIN_N`, its
        :data:`~dpgp_audit.audit.precision.SUPPORT_PAIRS` pairs join A.7's allowance.
    """

    n: int
    alpha: float
    mode: str
    n_pairs: int
    budget: int
    n_mc: int
    score: str
    fit_fraction: float | None
    y_bound: float | None
    time_guard_s: float | None = None
    cost_per_draw_s: float | None = None
    precision_support: bool = True
    labels: tuple[float, ...] | None = None
    x_bound: float | None = None
    evidence: bool = False

    @property
    def sequential(self) -> bool:
        """True in the anytime-valid sequential mode (A.8)."""
        return self.mode == "sequential"

    @property
    def budget_s(self) -> float | None:
        """Former name of :attr:`time_guard_s` (a guard now, not a budget)."""
        return self.time_guard_s


@dataclass
class AuditState:
    """What changes while the parts run: the one mutable piece of an audit.

    Attributes
    ----------
    pairs
        The neighbour pairs every later part audits; a part may insert a pair at the
        front (the sensitivity part's witness).
    results
        Each part's result so far, by part name, in run order (written by the runner).
    witness
        The first violating result's witness pair (written by the runner).
    witness_source
        The name of the part that gave the witness (``""``: none yet).
    ranking
        The pairs ranked for confirmation, best first, with their scores (``None``: not
        ranked yet). An earlier part may fill it (the ranking hook, module docstring);
        otherwise the first sample-based part that needs it does, once.
    ranking_source
        Who ranked them: a part's name, or ``"rank_pairs"`` (model score and pilot).
    """

    pairs: list[NeighbourPair]
    results: dict[str, AuditResult] = field(default_factory=dict)
    witness: NeighbourPair | None = None
    witness_source: str = ""
    ranking: list[tuple[NeighbourPair, float]] | None = None
    ranking_source: str = ""


@dataclass(frozen=True)
class AuditContext:
    """Everything the parts of one audit share (frozen, but for :attr:`state`).

    Attributes
    ----------
    mechanism
        The mechanism under audit (the contract of ``contract.py``).
    data
        The dataset D.
    claim
        The claim audited (the mechanism's, or the caller's override).
    settings
        :class:`AuditSettings`.
    rngs
        One independent generator per random stream, spawned by the runner in a fixed
        order (results are bit-identical for a seed): a stream per built-in part by its
        name, ``"explore"`` for the black-box ranking (shared, in run order, by the
        black-box and GDP-fit parts), and one per other part, by its name.
    executor
        The batching executor every part samples through (one cost-per-draw estimate).
    alpha_share
        α for each part that spends α: ``alpha`` split evenly over them.
    started
        The guard's clock when the audit began.
    screen
        A.7's pilot screen (``None`` when ``"precision"`` is not run): it runs before α
        is split, because it decides whether the precision part spends any.
    state
        :class:`AuditState`: pairs, results and witness so far.
    guard
        The audit's time guard (:class:`~dpgp_audit.audit.guard.TimeGuard`; default:
        none, it never fires).
    """

    mechanism: Mechanism
    data: Dataset
    claim: Claim
    settings: AuditSettings
    rngs: Mapping[str, np.random.Generator]
    executor: Executor | None
    alpha_share: float
    started: float
    state: AuditState
    screen: PrecisionScreen | None = None
    guard: TimeGuard = field(default_factory=lambda: TimeGuard(None))

    @property
    def relation(self) -> NeighbourRelation:
        """The claim's neighbour relation."""
        return self.claim.relation  # type: ignore[attr-defined]

    @property
    def pairs(self) -> list[NeighbourPair]:
        """The neighbour pairs, witness pairs first (``state.pairs``)."""
        return self.state.pairs

    def result_of(self, name: str) -> AuditResult | None:
        """The result of the part ``name``, if it has run."""
        return self.state.results.get(name)

    def seconds_left(self) -> float | None:
        """Seconds before the time guard fires (at least 1 ms), ``None`` without a guard.

        For display only: a part must not scale its work by it (``guard`` decides).
        """
        if self.guard.limit_s is None:
            return None
        return max(1e-3, self.guard.limit_s - self.guard.elapsed())


def guard_result(part: str, note: dict, claimed: float, *, quantity: str = "epsilon",
                 details: dict | None = None) -> AuditResult:
    """The ``INCONCLUSIVE`` result of a part stopped by the time guard before any verdict.

    ``note`` is :meth:`~dpgp_audit.audit.guard.TimeGuard.record`'s; ``details`` are kept.
    """
    return AuditResult(auditor=part, verdict=Verdict.INCONCLUSIVE,
                       guarantee=Guarantee.LOWER_BOUND, estimate=0.0, claimed=claimed,
                       quantity=quantity, details={**(details or {}), "time_guard": note})


def witness_in(result: AuditResult, pairs: Sequence[NeighbourPair]) -> NeighbourPair | None:
    """The pair ``result`` records as its witness: ``details["witness"]`` or an index.

    Parameters
    ----------
    result
        A part's result.
    pairs
        The pairs ``details["witness_index"]`` refers to.

    Returns
    -------
    NeighbourPair or None
        ``None`` when the result records no usable witness.
    """
    w = result.details.get("witness")
    if isinstance(w, dict) and "d0" in w:
        label = str(w.get("label", result.details.get("witness_label", result.auditor)))
        try:
            return NeighbourPair.from_dict({**w, "label": label})
        except (KeyError, ValueError):
            return None
    idx = result.details.get("witness_index")
    if isinstance(idx, int) and 0 <= idx < len(pairs):
        return pairs[idx]
    return None


@runtime_checkable
class AuditorPart(Protocol):
    """One auditor as a part of :func:`~dpgp_audit.audit.runner.audit_mechanism`.

    See the module docstring for the contract of each member. Subclass this class to
    inherit :meth:`spends_alpha` and :meth:`witness`.
    """

    name: str
    statistical: bool

    def needs(self, mechanism: Mechanism, relation: NeighbourRelation) -> str | None:
        """``None`` when the part applies, else why it is skipped."""
        ...

    def allowance(self, settings: AuditSettings) -> Allowance:
        """The deterministic work this part may do under ``settings``."""
        ...

    def run(self, context: AuditContext) -> AuditResult | str:
        """Audit; a string is a skip reason found only at run time."""
        ...

    def spends_alpha(self, context: AuditContext) -> bool:
        """Whether this part takes a share of α in this audit (before it runs)."""
        return self.statistical and self.needs(context.mechanism, context.relation) is None

    def witness(self, result: AuditResult, context: AuditContext) -> NeighbourPair | None:
        """The pair a violating ``result`` exposes (default: :func:`witness_in`)."""
        return witness_in(result, context.pairs)


# ------------------------------------------------------------------ the built-in parts

class GreyBoxPart(AuditorPart):
    """A.9: M(D) and M(D′) on one seed through a recording generator, for every pair.

    First on the default path because it is cheap (a few coupled releases per pair and
    side, :mod:`~dpgp_audit.audit.greybox`). Not statistical: its exact values need no
    α, and its leads never set a violation. Its ranking of the pairs
    (``details["scores_by_label"]``) stands in for the black-box part's pilot sampling.
    """

    name = "greybox"
    statistical = False

    def needs(self, mechanism: Mechanism, relation: NeighbourRelation) -> str | None:
        """Needs only ``sample`` (every mechanism)."""
        return None

    def allowance(self, settings: AuditSettings) -> Allowance:
        """At most :data:`~dpgp_audit.audit.greybox.MAX_RELEASES` releases per side in all."""
        from dpgp_audit.audit.greybox import MAX_RELEASES

        return Allowance(pilot_draws=MAX_RELEASES, pairs=None)

    def run(self, context: AuditContext) -> AuditResult:
        """The coupled survey of every pair (confirmed findings on a second seed).

        Then the structure-boundary search (:mod:`~dpgp_audit.audit.boundary`) and, under
        whole rows, the substitution-position search (:mod:`~dpgp_audit.audit.positions`)
        and, where a noise law moved with the data, the smallest input groups
        (:func:`~dpgp_audit.audit.boundary.with_group_sizes`): the pairs they find are
        surveyed too and appended to ``context.pairs``, for every later part.
        """
        from dpgp_audit.audit.boundary import with_boundaries, with_group_sizes
        from dpgp_audit.audit.greybox import couple_pairs
        from dpgp_audit.audit.paths import with_paths
        from dpgp_audit.audit.positions import with_positions

        rng = context.rngs[self.name]
        survey = couple_pairs(context.mechanism, context.pairs, rng, claim=context.claim,
                              max_releases=self.allowance(context.settings).pilot_draws)
        survey, added = with_boundaries(context.mechanism, survey, context.data,
                                        context.relation, rng, y_bound=context.settings.y_bound,
                                        labels=context.settings.labels)
        context.pairs.extend(added)
        survey, added = with_positions(context.mechanism, survey, context.data,
                                       context.relation, rng, y_bound=context.settings.y_bound,
                                       labels=context.settings.labels,
                                       x_bound=context.settings.x_bound)
        context.pairs.extend(added)
        survey, added = with_group_sizes(context.mechanism, survey, context.data,
                                         context.relation, rng, labels=context.settings.labels)
        context.pairs.extend(added)
        survey = with_paths(context.mechanism, survey, rng)
        return survey.result()


#: The share of the black-box part's α its Monte Carlo test of A.9's path lead takes.
CERTIFY_SHARE = 0.25


def _path_lead(context: AuditContext) -> tuple[NeighbourPair, int, int] | None:
    """The pair, order and calls per analysis of A.9's path lead under δ > 0, if any."""
    res = context.result_of(GreyBoxPart.name)
    lead = None if res is None else (res.details.get("paths") or {}).get("lead")
    if not lead:
        return None
    pair = next((p for p in context.pairs if p.label == lead["label"]), None)
    return None if pair is None else (pair, int(lead["order"]), int(lead["calls"]))


def _coupled_scores(context: AuditContext) -> dict[int, float | None] | None:
    """A.9's ranking score of each pair (by index in ``context.pairs``), if A.9 ran.

    Matched by label (A.9 records one score per label that is unique among its pairs);
    pairs it did not see (e.g. a sensitivity witness put first later) or scored only by a
    few-release guess (``nan``: selections, threshold patterns) are left out, so the
    black-box ranking samples a pilot for those only.
    """
    res = context.result_of(GreyBoxPart.name)
    if res is None:
        return None
    by_label = res.details.get("scores_by_label", {})
    return {i: by_label[p.label] for i, p in enumerate(context.pairs)
            if p.label in by_label and not (isinstance(by_label[p.label], float)
                                             and math.isnan(by_label[p.label]))}


class SensitivityPart(AuditorPart):
    """A.4: the deterministic sensitivity search (``SensitivityQuery``).

    A violation's witness pair is put first in ``context.pairs``, so that every later
    part audits it.
    """

    name = "sensitivity"
    statistical = False

    def needs(self, mechanism: Mechanism, relation: NeighbourRelation) -> str | None:
        """Skipped under the all-answers relation and without ``SensitivityQuery``."""
        if relation.kind is Neighbour.ANSWERS:
            return ("the all-answers relation is probed by the multi-coordinate "
                    "pattern pairs, not by the one-record sensitivity search")
        if not isinstance(mechanism, SensitivityQuery):
            return ("mechanism has no query()/norm/sensitivity_bound() (SensitivityQuery); "
                    "declare them and the checker searches for a pair that moves the query "
                    "further than your bound (for a selection, such as an exponential "
                    "mechanism or noisy max: the score vector, norm = Linf())")
        return None

    def allowance(self, settings: AuditSettings) -> Allowance:
        """``settings.budget`` query evaluations."""
        return Allowance(queries=settings.budget)

    def run(self, context: AuditContext) -> AuditResult:
        """Search; on a violation put the witness pair first."""
        from dpgp_audit.audit.sensitivity import check_sensitivity, witness_pair

        res = check_sensitivity(context.mechanism, context.data, context.rngs[self.name],
                                relation=context.relation,
                                budget=self.allowance(context.settings).queries,
                                y_bound=context.settings.y_bound,
                                labels=context.settings.labels,
                                x_bound=context.settings.x_bound)
        w = witness_pair(res)
        if w is not None and res.violation:
            context.pairs.insert(0, NeighbourPair(w.d0, w.d1, f"sensitivity witness: {w.label}"))
        return res

    def witness(self, result: AuditResult, context: AuditContext) -> NeighbourPair | None:
        """The witness pair :meth:`run` put first."""
        from dpgp_audit.audit.sensitivity import witness_pair

        return context.pairs[0] if witness_pair(result) is not None else None


#: Fraction of its α share that the model check spends. Unlike the privacy tests, whose
#: false alarms stay far below α because real mechanisms are not tight at the claim, an
#: exact goodness-of-fit test rejects a *correct* model at its full level: at the full
#: share, ``audit --all`` over ~25 Gaussian releases would raise a false model alarm in
#: roughly one run in four. At a fiftieth the family-wise rate over the catalogue is below
#: 1 %, and the gross mismatches this check exists for (shared noise, a wrong scale) are
#: still rejected (DKW's critical value grows only by sqrt(ln(100/a) / ln(2/a)) ≈ 1.4).
MODEL_CHECK_ALPHA_FRACTION = 0.02


class ModelCheckPart(AuditorPart):
    """``sample`` against the mechanism's own ``mean``/``cov`` (issue 15 §1).

    Tests D and the first pair's D′ at ``alpha_share * MODEL_CHECK_ALPHA_FRACTION`` (the
    rest of its share is unspent, which keeps the report's Bonferroni accounting valid).
    A mismatch is a finding of its own and voids the white-box result.
    """

    name = "model-check"
    statistical = True

    def needs(self, mechanism: Mechanism, relation: NeighbourRelation) -> str | None:
        """Needs ``GaussianRelease`` (``mean``/``cov``)."""
        if not isinstance(mechanism, GaussianRelease):
            return "mechanism has no mean()/cov() to check sample() against"
        return None

    def allowance(self, settings: AuditSettings) -> Allowance:
        """Half the cap ``n`` per dataset, at least
        :data:`~dpgp_audit.audit.model_check.CHECK_N` and at most
        :data:`~dpgp_audit.audit.model_check.TAIL_N` (never above ``n``): the first
        ``CHECK_N`` serve the Kolmogorov tests, all of them the tail counts; one pair.
        """
        from dpgp_audit.audit.model_check import CHECK_N, TAIL_N

        return Allowance(draws=min(settings.n, max(CHECK_N, min(TAIL_N, settings.n // 2))),
                         pairs=1)

    def run(self, context: AuditContext) -> AuditResult | str:
        """The DKW goodness-of-fit check on D and the first pair's D′."""
        from dpgp_audit.audit.model_check import CHECK_N, check_model

        mech = context.mechanism
        allowance = self.allowance(context.settings)
        sets = []
        first = context.pairs[:allowance.pairs]
        for tag, d in [("D", context.data)] + [(f"D' of {p.label}", p.d1) for p in first]:
            try:
                mech.mean(d)  # type: ignore[attr-defined]
                mech.cov(d)  # type: ignore[attr-defined]
            except ValueError:
                continue
            sets.append((tag, d))
        if not sets:
            return "the mechanism's mean()/cov() accept no dataset of the audit"
        try:
            res = check_model(mech, sets, context.rngs[self.name],
                              n=min(CHECK_N, allowance.draws), tail_n=allowance.draws,
                              alpha=context.alpha_share * MODEL_CHECK_ALPHA_FRACTION)
        except ContractError:
            raise  # sample() broke the contract: not a property of cov()
        except ValueError as err:  # e.g. a zero covariance: nothing to whiten against
            return f"cov() cannot be whitened: {err}"
        res.details["used"] = Allowance(draws=allowance.draws, pairs=len(sets) - 1).as_dict()
        return res


_WB_SCOPE = ("exact only over the {k} pairs it was given (generated, query-edge and "
             "sensitivity-witness pairs); pairs never generated are not covered")
#: The white-box line's word when the grey-box survey saw sample() draw no normals.
_WB_OTHER_NOISE = ("sample() draws its noise as {draws}, not as normals: exact for the "
                   "Gaussian law mean()/cov() state, which sample() follows only as far as "
                   "{reach}")


def _model_check_reach(mc: AuditResult | None) -> str:
    """How far the model check ties ``sample()`` to the stated law, in words.

    A law that differs from the Gaussian only beyond ``t`` standard deviations is at
    Kolmogorov distance at most ``Φ(−t)`` from it, so the test cannot reach the tails
    whose mass is below the distance it detects with power 0.8 — and those tails are
    where a Gaussian mechanism's δ is decided (a sum of 12 uniforms passes it).
    """
    from scipy import stats

    reach = mc.details.get("power", {}).get("distance") if mc is not None else None
    if not reach or not (0 < reach < 0.5):
        return "the model check tells, which did not run"
    words = (f"the model check tells: a law that differs from it only beyond "
             f"{stats.norm.isf(reach):.2g} sd can pass its Kolmogorov tests")
    tail = mc.details.get("tail_power", {})  # type: ignore[union-attr]
    if "mass_ratio_below" in tail:
        words += (f", and its tail counts on {mc.details.get('tail_n_per_dataset')} draws "  # type: ignore[union-attr]
                  f"catch a mass beyond {tail['threshold']:g} sd below "
                  f"{tail['mass_ratio_below']:.2g} of the Gaussian's with power "
                  f"{tail['power']:g}")
    return words


def _usable(mechanism: Mechanism, pairs: Sequence[NeighbourPair], attr: str) -> list[NeighbourPair]:
    """Pairs on which the mechanism's ``attr`` (``mean``/``query``) accepts both datasets."""
    out = []
    fn = getattr(mechanism, attr)
    for p in pairs:
        try:
            fn(p.d0)
            fn(p.d1)
        except ValueError:
            continue
        out.append(p)
    return out


def _factorable(mechanism: Mechanism, pairs: list[NeighbourPair]
                ) -> tuple[list[NeighbourPair], list[str]]:
    """Split pairs into those whose covariances can be factorised and the rest.

    A zero or invalid ``cov`` (e.g. a noise scale computed from targets that are all
    zero at a domain-end pair) has no white-box profile; such pairs stay with the
    black-box auditor, which samples them.
    """
    from dpgp_audit.audit.whitebox import factor_covariance

    ok, bad = [], []
    for p in pairs:
        try:
            factor_covariance(mechanism.cov(p.d0))  # type: ignore[attr-defined]
            factor_covariance(mechanism.cov(p.d1))  # type: ignore[attr-defined]
        except ValueError as err:
            bad.append(f"{p.label}: {err}")
            continue
        ok.append(p)
    return ok, bad


class WhiteBoxPart(AuditorPart):
    """A.2: the exact privacy profile over every pair it is given (and only those).

    Statistical: its Monte Carlo route for unequal covariances spends α.
    """

    name = "whitebox"
    statistical = True

    def needs(self, mechanism: Mechanism, relation: NeighbourRelation) -> str | None:
        """Needs ``GaussianRelease`` (``mean``/``cov``)."""
        if not isinstance(mechanism, GaussianRelease):
            return "mechanism has no mean()/cov() (GaussianRelease)"
        return None

    def allowance(self, settings: AuditSettings) -> Allowance:
        """Every pair it is given, ``settings.n_mc`` Monte Carlo draws per pair and order."""
        return Allowance(pairs=None, mc_draws=settings.n_mc)

    def run(self, context: AuditContext) -> AuditResult | str:
        """The exact audit; pairs with a singular covariance are left to the black box."""
        from dpgp_audit.audit.whitebox import audit_whitebox

        mech = context.mechanism
        usable, singular = _factorable(mech, _usable(mech, context.pairs, "mean"))
        if not usable and singular:  # accepted, but the stated covariance is unusable
            return (f"cov() cannot be factored for any generated pair ({len(singular)}; "
                    f"first, {singular[0]}): the black-box auditor audits sample() alone")
        if not usable:
            return "no generated pair is accepted by the mechanism"
        res = audit_whitebox(mech, usable, claim=context.claim, rng=context.rngs[self.name],
                             alpha=context.alpha_share,
                             n_mc=self.allowance(context.settings).mc_draws)
        res.details["scope"] = _WB_SCOPE.format(k=len(usable))
        if singular:
            res.details["pairs_left_to_blackbox"] = singular
        mc = context.result_of(ModelCheckPart.name)
        gb = context.result_of(GreyBoxPart.name)
        drawn = gb.details.get("other_noise_draws") if gb is not None else None
        if drawn:  # the noise is not drawn as normals: the stated law is a transform's
            res.details["noise_drawn"] = _WB_OTHER_NOISE.format(
                draws=", ".join(drawn), reach=_model_check_reach(mc))
        if mc is not None and mc.violation:
            res.details["model_check"] = ("VOID: sample() contradicts mean()/cov() "
                                          "(see model-check); this exact result "
                                          "describes the stated model only")
            if res.verdict is Verdict.NO_EVIDENCE:  # a model the release does not follow
                res = dataclasses.replace(res, verdict=Verdict.INCONCLUSIVE)
        return res


def _ranking(context: AuditContext, allowance: Allowance, part: str
             ) -> tuple[list[tuple[NeighbourPair, float]], dict] | AuditResult | str:
    """The ranked pairs to confirm (the ranking hook), ranking them once if no part has.

    Returns the ranking and what ranking it cost here (pairs piloted, pilot draws per side
    and pair), a skip reason, or the guard's ``INCONCLUSIVE`` result when the time guard
    fired during the pilot.
    """
    state = context.state
    if state.ranking is not None:  # an earlier part ranked them (A.9), or an earlier call
        return state.ranking, {"pilot_pairs": 0, "pilot_draws": 0, "source": state.ranking_source}
    info: dict = {}
    coupled = _coupled_scores(context)  # A.9's survey stands in for the pilot where it can
    ranked = rank_pairs(context.mechanism, context.pairs, context.rngs["explore"],
                        top=allowance.pairs, pilot_n=allowance.pilot_draws,
                        rest=context.settings.evidence and context.settings.sequential,
                        stop=context.guard, info=info, implementation=coupled)
    if info.get("stopped"):
        note = context.guard.record(part, "pair ranking (the pilot)",
                                    rerun="fewer draws per pair (a smaller cap n / --samples)")
        return guard_result(part, note, _claimed(context), details={
            "used": {"pilot_draws": allowance.pilot_draws, "pilot_pairs": info["piloted"]}})
    if not ranked:
        return "no generated pair is accepted by the mechanism" + _first_refusal(context, info)
    source = "rank_pairs" + (" (greybox survey for the pairs it scored, pilot for the rest)"
                             if coupled else "")
    state.ranking, state.ranking_source = ranked, source
    return ranked, {"pilot_pairs": info.get("piloted", 0), "pilot_draws": allowance.pilot_draws,
                    "source": source}


def _first_refusal(context: AuditContext, info: dict) -> str:
    """``" (the first refusal: Type: message)"`` when the pilot or A.9's survey saw one.

    A mechanism that refuses every generated pair is often one whose ``sample`` fails on
    every dataset (a shape error, a missing column): the message says what it raised.
    """
    said = info.get("refusal")
    if said is None:
        grey = context.result_of(GreyBoxPart.name)
        first = {} if grey is None else grey.details.get("witness_coupling") or {}
        if first.get("status") == "rejected" and first.get("detail"):
            said = str(first["detail"])
    return "" if said is None else f" (the first refusal: {' '.join(said.split())})"


def _claimed(context: AuditContext) -> float:
    from dpgp_audit.audit.blackbox.fixed import _claim_epsilon_delta

    return _claim_epsilon_delta(context.claim, None)[0]


def _explore_and_confirm(context: AuditContext, allowance: Allowance, *, gdp: bool,
                         rng: np.random.Generator) -> AuditResult | str:
    """Exploration (rank pairs) then confirmation on fresh samples, Bonferroni over pairs.

    In sequential mode (black-box part only) the top pairs are confirmed together by one
    anytime-valid betting audit (their wealth is averaged, so α is not split over them).
    """
    from dpgp_audit.audit.blackbox import fixed as blackbox
    from dpgp_audit.audit.blackbox import gdp_fit

    mech, claim, s = context.mechanism, context.claim, context.settings
    alpha = context.alpha_share
    part = "gdp-fit" if gdp else "blackbox"
    got = _ranking(context, allowance, part)
    if not isinstance(got, tuple):
        return got
    ranked, cost = got
    top = ranked[:max(1, allowance.pairs or 1)]
    used = {"pilot_draws": cost["pilot_draws"], "pilot_pairs": cost["pilot_pairs"],
            "pairs": len(top)}
    if s.sequential and not gdp:
        from dpgp_audit.audit.blackbox.sequential import audit_sequential

        more = [p for p, _ in ranked[len(top):]] if s.evidence else []
        r = audit_sequential(mech, [p for p, _ in top], max_n=max(2, allowance.draws), rng=rng,
                             alpha=alpha, claim=claim, score=s.score,
                             executor=context.executor, guard=context.guard,
                             cost_per_draw_s=s.cost_per_draw_s, evidence=more)
        wit = next(p for p, _ in ranked if p.label == r.details["witness_label"])
        details = dict(r.details)
        details.update(pairs_confirmed=len(top), witness={**wit.as_dict()},
                       confirmed=[{"label": p.label, "exploration_score": sc} for p, sc in top],
                       alpha_per_pair=alpha, ranking=cost["source"],
                       used={**used, "draws": r.details["n_per_side"]},
                       # False: no model score ranked the pairs, the pilot's samples did
                       ranked_by_model=isinstance(mech, (GaussianRelease, SensitivityQuery,
                                                         DiscreteRelease)))
        return dataclasses.replace(r, details=details)
    m = len(top)
    fn = gdp_fit.audit_gdp_fit if gdp else blackbox.audit_blackbox
    rows = []
    best: AuditResult | None = None
    for (pair, sc), child in zip(top, rng.spawn(m), strict=True):
        r = fn(mech, pair.d0, pair.d1, n=allowance.draws, rng=child, alpha=alpha / m,
               claim=claim, score=s.score, executor=context.executor,
               fit_fraction=s.fit_fraction)
        rows.append({"label": pair.label, "exploration_score": sc, "estimate": r.estimate,
                     "verdict": r.verdict.value})
        key = (r.violation, r.estimate)
        if best is None or key > (best.violation, best.estimate):
            best, best_pair = r, pair
    assert best is not None
    verdicts = [row["verdict"] for row in rows]
    if Verdict.VIOLATION.value in verdicts:
        verdict = Verdict.VIOLATION
    elif Verdict.NO_EVIDENCE.value in verdicts:
        verdict = Verdict.NO_EVIDENCE
    else:
        verdict = Verdict.INCONCLUSIVE
    details = dict(best.details)
    details.update(pairs_confirmed=m, confirmed=rows, witness_label=best_pair.label,
                   alpha_per_pair=alpha / m, ranking=cost["source"],
                   witness={**best_pair.as_dict()}, used={**used, "draws": allowance.draws})
    return dataclasses.replace(best, verdict=verdict, alpha=alpha, details=details)


class BlackBoxPart(AuditorPart):
    """A.3/A.8: rank the pairs (or take an earlier part's ranking), then certify the top
    pairs on fresh samples.

    Sequential mode: one anytime-valid betting audit over the top pairs, at most
    ``draws`` per side and pair (A.8); the time guard may stop it, ``INCONCLUSIVE``.
    Fixed mode: a split audit of exactly ``draws`` per side per pair, Bonferroni over the
    pairs (A.3).
    """

    name = "blackbox"
    statistical = True

    def needs(self, mechanism: Mechanism, relation: NeighbourRelation) -> str | None:
        """Needs only ``sample`` (every mechanism)."""
        return None

    def allowance(self, settings: AuditSettings) -> Allowance:
        """``n`` draws per side and pair, a pilot (:func:`pilot_draws`), ``n_pairs`` pairs."""
        return Allowance(draws=settings.n,
                         pilot_draws=pilot_draws(settings.n, settings.sequential),
                         pairs=settings.n_pairs)

    def run(self, context: AuditContext) -> AuditResult | str:
        """Explore, then confirm (sequential or fixed, by ``settings.mode``).

        When A.9's path analysis handed on an iterative release's lead (a claim with
        δ > 0, :mod:`~dpgp_audit.audit.paths`), a quarter of this part's α goes first to a
        Monte Carlo test of that pair's privacy loss along fresh paths
        (:func:`~dpgp_audit.audit.paths.certify_lead`), the rest to the usual audit: a
        quarter keeps a single path beyond the claim's ε at δ ≈ 10⁻⁵ from deciding alone.
        The split is fixed before either draws, from the survey's own runs, so the two
        tests' errors add up to at most α.
        """
        rng = context.rngs[self.name]
        allowance = self.allowance(context.settings)
        lead = _path_lead(context)
        cert, share = None, 0.0
        if lead is not None:
            from dpgp_audit.audit.paths import CERTIFY_MIN_ROWS, certify_lead, certify_rows

            pair, order, calls = lead
            rows = certify_rows(allowance.draws, calls)
            if not rows:  # the sampled audit alone, with all of α
                cert = {"label": pair.label, "skipped": (
                    f"one path analysis makes {calls} calls of sample(), and {allowance.draws} "
                    f"draws per side afford fewer than {CERTIFY_MIN_ROWS} paths")}
            else:
                share = context.alpha_share * CERTIFY_SHARE
                seed = np.random.SeedSequence([int(v) for v in rng.integers(0, 2**32, size=4)])
                cert = certify_lead(context.mechanism, pair, order, seed, share, context.claim,
                                    n=rows)
                if cert["violation"]:
                    return AuditResult(
                        auditor=self.name, verdict=Verdict.VIOLATION,
                        guarantee=Guarantee.PATH_MONTE_CARLO,
                        estimate=float(cert["epsilon_lower"]),
                        claimed=float(cert["epsilon_claim"]), quantity="epsilon",
                        alpha=context.alpha_share,
                        details={"mode": "paths", "path_certification": cert,
                                 "witness": pair.as_dict(), "witness_label": pair.label,
                                 "alpha_per_test": share})
        if share:
            context = dataclasses.replace(context, alpha_share=context.alpha_share - share)
        res = _explore_and_confirm(context, allowance, gdp=False, rng=rng)
        if cert is not None and isinstance(res, AuditResult):
            res.details["path_certification"] = cert
        return res


class GdpFitPart(AuditorPart):
    """A.3 (on request): a lower bound on μ for the top-ranked pair, fixed n."""

    name = "gdp-fit"
    statistical = True

    def needs(self, mechanism: Mechanism, relation: NeighbourRelation) -> str | None:
        """Needs only ``sample`` (every mechanism)."""
        return None

    def allowance(self, settings: AuditSettings) -> Allowance:
        """``n`` draws per side (a fixed-n fit in either mode) on the one top pair."""
        return Allowance(draws=settings.n, pilot_draws=pilot_draws(settings.n, False),
                         pairs=1)

    def run(self, context: AuditContext) -> AuditResult | str:
        """Explore, then fit μ on the top pair."""
        return _explore_and_confirm(context, self.allowance(context.settings), gdp=True,
                                    rng=context.rngs[self.name])


class PrecisionPart(AuditorPart):
    """A.7: is float rounding visible beside the noise? Certifies what A.7's screen chose.

    The runner runs the screen (:func:`~dpgp_audit.audit.precision.screen_precision`,
    with this part's pilot) before α is split: the part spends α only when the screen
    chose pairs to certify.
    """

    name = "precision"
    statistical = True

    def needs(self, mechanism: Mechanism, relation: NeighbourRelation) -> str | None:
        """Needs only ``sample``; the screen may still skip (a discrete release)."""
        return None

    def allowance(self, settings: AuditSettings) -> Allowance:
        """A pilot per candidate pair (:func:`pilot_draws` of ``n``), and at most
        ``n / SEQUENTIAL_HEADROOM`` draws per side and chosen pair in sequential mode
        (one anytime-valid audit over them), exactly ``n`` in fixed mode. With the
        float-support test (``settings.precision_support``) its pairs
        (:data:`~dpgp_audit.audit.precision.SUPPORT_PAIRS`) join the certified ones, each
        with at most the same draws per side
        (:func:`~dpgp_audit.audit.precision.certify_support`), and the pilot is the larger
        of the two in :meth:`screen_pilots` (where the support test runs).
        """
        from dpgp_audit.audit.precision import CERTIFY_PAIRS, SUPPORT_PAIRS

        pilot, support_pilot = self.screen_pilots(settings)
        pairs = CERTIFY_PAIRS + (SUPPORT_PAIRS if support_pilot else 0)
        return Allowance(draws=self._draws(settings), pilot_draws=max(pilot, support_pilot),
                         pairs=pairs)

    def screen_pilots(self, settings: AuditSettings) -> tuple[int, int]:
        """Pilot draws per side of A.7's screen: ``(rounding pairs, support pairs)``.

        The rounding pairs follow the black-box pilot rule (:func:`pilot_draws`); the
        float-support pairs get
        :func:`~dpgp_audit.audit.precision.support_pilot_draws` of the certification
        draws (an eighth, at least :data:`~dpgp_audit.audit.precision.SUPPORT_PILOT`:
        their evidence needs it), or
        0 when the support test does not run: turned off, or fewer certification draws
        than :data:`~dpgp_audit.audit.precision.SUPPORT_MIN_N`
        (:func:`~dpgp_audit.audit.precision.support_skip_reason`).
        """
        from dpgp_audit.audit.precision import support_pilot_draws, support_skip_reason

        pilot = pilot_draws(settings.n, settings.sequential)
        draws = self._draws(settings)
        runs = settings.precision_support and support_skip_reason(draws) is None
        return pilot, (max(pilot, support_pilot_draws(draws)) if runs else 0)

    @staticmethod
    def _draws(settings: AuditSettings) -> int:
        """Certification draws per side and pair (see :meth:`allowance`)."""
        return max(2, settings.n // SEQUENTIAL_HEADROOM) if settings.sequential else settings.n

    def spends_alpha(self, context: AuditContext) -> bool:
        """Only when the screen chose a pair to certify."""
        return context.screen is not None and context.screen.needs_test

    def run(self, context: AuditContext) -> AuditResult | str:
        """Certify the screen's pairs with the black-box auditor (A.3)."""
        from dpgp_audit.audit.precision import certify_precision

        screen = context.screen
        if screen is None:
            return "the precision screen did not run"
        if screen.skipped is not None:
            return screen.skipped
        allowance = self.allowance(context.settings)
        res = certify_precision(screen, context.mechanism, context.rngs[self.name],
                                n=allowance.draws, alpha=context.alpha_share,
                                claim=context.claim, executor=context.executor,
                                sequential=context.settings.sequential, guard=context.guard,
                                cost_per_draw_s=context.settings.cost_per_draw_s)
        return res


#: The built-in parts, in the order they run: the grey-box survey first (cheap; its pair
#: ranking feeds the black-box part), the sensitivity witness next (every later part
#: audits it), the model check before the white-box result it may void, the sampled
#: auditors last. Add a part here to make it selectable by name.
PARTS: tuple[AuditorPart, ...] = (GreyBoxPart(), SensitivityPart(), ModelCheckPart(),
                                  WhiteBoxPart(), BlackBoxPart(), GdpFitPart(), PrecisionPart())
#: The built-in parts' names, in run order.
AUDITORS: tuple[str, ...] = tuple(p.name for p in PARTS)
#: The auditors of the default path (``make audit``, ``--auditor all``): every auditor
#: except the optional GDP fit.
DEFAULT_AUDITORS: tuple[str, ...] = ("greybox", "whitebox", "blackbox", "sensitivity",
                                     "model-check", "precision")
